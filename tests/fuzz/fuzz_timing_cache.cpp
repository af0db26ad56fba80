// SPDX-License-Identifier: Apache-2.0
// Timing caches (`--timing-cache`), read from a file as the engine builder reads them.
#include "core/engine/timing_cache.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::engine::TimingCache::load(vn::fuzz::write_input(data, size, "timing.json"));
  return 0;
}
