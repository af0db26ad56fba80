// SPDX-License-Identifier: Apache-2.0
// The ONNX loader: protobuf parsing, external-data references (resolved against a folder holding
// weights.bin), the libonnx checker, shape inference and the conversion to Vernier's IR.
#include "core/common/logging.h"
#include "core/ir/onnx_import.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    vn::set_log_threshold(vn::LogLevel::kError);
    return true;
  }();
  (void)quiet;
  (void)vn::load_model_from_bytes(vn::fuzz::as_view(data, size), vn::fuzz::scratch_dir());
  return 0;
}
