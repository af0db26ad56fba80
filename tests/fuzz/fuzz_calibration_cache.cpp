// SPDX-License-Identifier: Apache-2.0
// int8 calibration caches (`--calibration-cache`, core/engine/calibration.h), read from a file.
#include "core/engine/calibration.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::engine::load_calibration_cache(vn::fuzz::write_input(data, size, "cache.json"));
  return 0;
}
