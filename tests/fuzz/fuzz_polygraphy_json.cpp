// SPDX-License-Identifier: Apache-2.0
// Polygraphy JSON: RunResults (--load-outputs) and feed lists (--load-inputs), with the encoded
// arrays inside them (base64 .npy, legacy latin-1 and .npz payloads, LazyArray, FormattedArray).
#include "core/io/polygraphy_json.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = vn::fuzz::as_view(data, size);
  (void)vn::io::run_results_from_json(text);
  (void)vn::io::feed_list_from_json(text);
  return 0;
}
