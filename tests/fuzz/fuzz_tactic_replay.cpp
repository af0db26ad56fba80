// SPDX-License-Identifier: Apache-2.0
// Tactic replays (`--save-tactics`, `--load-tactics`, `inspect tactics`), read from a file.
#include "core/engine/tactic_replay.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::engine::load_tactic_replay(vn::fuzz::write_input(data, size, "tactics.json"));
  return 0;
}
