// SPDX-License-Identifier: Apache-2.0
// Engine plans (`vernier convert -o`, `--load-engine`), read from a file as the CLI reads them.
#include "core/engine/plan.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::engine::load_plan(vn::fuzz::write_input(data, size, "plan.json"));
  return 0;
}
