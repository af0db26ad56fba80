// SPDX-License-Identifier: Apache-2.0
// Serialized ONNX TensorProto (.pb test data): every data field, dims, and external references
// resolved against a folder holding weights.bin.
#include "core/io/tensor_proto.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vn::io::tensor_from_proto_bytes(vn::fuzz::as_view(data, size));
  (void)vn::io::tensor_proto_load(vn::fuzz::write_input(data, size, "input.pb"));
  return 0;
}
