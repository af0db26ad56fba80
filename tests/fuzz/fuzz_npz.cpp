// SPDX-License-Identifier: Apache-2.0
// numpy .npz decoding: zip records, ZIP64, inflation limits, CRCs, and the .npy members.
#include "core/io/npz.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::io::npz_decode(vn::fuzz::as_view(data, size));
  return 0;
}
