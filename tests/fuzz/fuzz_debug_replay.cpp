// SPDX-License-Identifier: Apache-2.0
// Debug replays (`--load-debug-replay`, core/debug/replay.h), read from a file.
#include "core/debug/replay.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::debug::DebugReplay::load(vn::fuzz::write_input(data, size, "replay.json"));
  return 0;
}
