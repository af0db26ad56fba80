// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tactic implementations.
#include <algorithm>

#include "core/engine/kernels/kernels.h"

namespace vn::engine::kernels {

const Node& anchor_node(const KernelArgs& args) {
  return args.model->graph.nodes[static_cast<size_t>(args.spec->nodes.front())];
}

Status tagged(const KernelArgs& args, Status status) {
  if (status.ok()) return status;
  return status.with_node(anchor_node(args).ref(args.spec->nodes.front()));
}

int input_index(const LayerSpec& spec, const std::string& name) {
  auto it = std::find(spec.inputs.begin(), spec.inputs.end(), name);
  return it == spec.inputs.end() ? -1 : static_cast<int>(it - spec.inputs.begin());
}

Result<std::vector<float>> constant_floats(const KernelArgs& args, const std::string& name, DType format, bool tf32) {
  auto it = args.constants->find(name);
  if (it == args.constants->end()) {
    return tagged(args, make_error(StatusCode::kInvalidModel, "'{}' must be a constant", name));
  }
  const Tensor& t = it->second;
  if (t.dtype() != DType::kFloat32) {
    return tagged(args,
                  make_error(StatusCode::kInvalidModel, "'{}' is {}, expected float32", name, dtype_name(t.dtype())));
  }
  std::vector<float> values(t.values<float>().begin(), t.values<float>().end());
  if (tf32) {
    round_to_tf32_in_place(values);
  } else {
    round_in_place(values, format);
  }
  return values;
}

void apply_epilogue(const EpilogueRuntime& epilogue, float* y, int64_t outer, int64_t channels, int64_t inner,
                    const float* residual) {
  if (!epilogue.bias.empty()) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        float* row = y + (o * channels + c) * inner;
        const float b = epilogue.bias[static_cast<size_t>(c)];
        for (int64_t i = 0; i < inner; ++i) row[i] += b;
      }
    }
  }
  const int64_t total = outer * channels * inner;
  if (residual) {
    for (int64_t i = 0; i < total; ++i) y[i] += residual[i];
  }
  if (epilogue.activation.fn != ActivationFn::kNone) {
    activate_exact(epilogue.activation, std::span<float>(y, static_cast<size_t>(total)));
  }
}

}  // namespace vn::engine::kernels
