// SPDX-License-Identifier: Apache-2.0
// numpy .npy decoding: the header's Python literal, dtypes, shapes and declared sizes.
#include "core/io/npy.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::io::npy_decode(vn::fuzz::as_view(data, size));
  return 0;
}
