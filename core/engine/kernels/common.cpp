// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tactic implementations.
#include <algorithm>

#include "core/engine/kernels/kernels.h"
#include "core/engine/quantize.h"
#include "core/ops/kernel_util.h"

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

ops::Narrow kept_format(const Precision& precision) {
  if (precision.tf32_products) return ops::Narrow::kNone;
  switch (float_storage(precision)) {
    case DType::kFloat16:
      return ops::Narrow::kFloat16;
    case DType::kBFloat16:
      return ops::Narrow::kBFloat16;
    default:
      return ops::Narrow::kNone;
  }
}

namespace {

/// The activation and the rounding of apply_epilogue_segment, on `length` values.
void activate_and_round(const EpilogueRuntime& epilogue, float* v, int64_t length) {
  activate_values(epilogue.activation, v, length);
  if (epilogue.round == DType::kInt8) {
    if (epilogue.round_scale > 0)
      fake_quantize_in_place(std::span<float>(v, static_cast<size_t>(length)), epilogue.round_scale);
  } else if (epilogue.round != DType::kFloat32) {
    round_in_place(std::span<float>(v, static_cast<size_t>(length)), epilogue.round);
  }
}

/// The bias and the residual of apply_epilogue_segment, on `length` values.
void add_bias_and_residual(const EpilogueRuntime& epilogue, float* v, int64_t length, int64_t channel, bool bias,
                           const float* residual) {
  if (bias && !epilogue.bias.empty()) {
    const float b = epilogue.bias[static_cast<size_t>(channel)];
    for (int64_t i = 0; i < length; ++i) v[i] += b;
  }
  if (residual != nullptr) {
    for (int64_t i = 0; i < length; ++i) v[i] += residual[i];
  }
}

}  // namespace

void apply_epilogue_segment(const EpilogueRuntime& epilogue, float* v, int64_t length, int64_t channel, bool bias,
                            const float* residual) {
  add_bias_and_residual(epilogue, v, length, channel, bias, residual);
  activate_and_round(epilogue, v, length);
}

/// The sum of e[0, n) in float: element k goes to lane k % 16 of the first n - n % 16, the lanes
/// add in halves (lane l + lane l + 8, then + 4, + 2, + 1), then the rest in order.
float lane_sum(const float* e, int64_t n) {
  float lane[16] = {};
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += e[k + l];
  }
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  }
  float sum = lane[0];
  for (; k < n; ++k) sum += e[k];
  return sum;
}

bool EpilogueRuntime::round_as(const KernelArgs& args) {
  if (!args.round_outputs) return false;
  round = precision_of(args.precision).storage;
  round_scale = args.output_scale;
  return round != DType::kFloat32;
}

void apply_epilogue(const EpilogueRuntime& epilogue, float* y, int64_t outer, int64_t channels, int64_t inner,
                    const float* residual, int threads) {
  const bool bias = !epilogue.bias.empty();
  if (!bias && residual == nullptr && epilogue.activation.fn == ActivationFn::kNone &&
      epilogue.round == DType::kFloat32) {
    return;
  }
  // One pass over segments, each finished while in cache: (y + bias) + residual, then the
  // activation. With inner > 1 a segment is one channel's row of `inner` values; with inner == 1
  // (a GEMM's [rows, channels]) it is one row of all channels.
  const int64_t length = inner > 1 ? inner : channels;
  const int64_t segments = inner > 1 ? outer * channels : outer;
  if (segments <= 0) return;
  // Segments are contiguous: a run of them about 4K values long (in L1) gets its additions segment
  // by segment, then the activation and rounding in one call, rather than a call per segment
  // (EfficientNetV2-S's depthwise SiLU layers: 768 planes of 196 values).
  const int64_t run_segments = std::clamp<int64_t>(4096 / std::max<int64_t>(length, 1), 1, segments);
  const auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t s0 = lo; s0 < hi; s0 += run_segments) {
      const int64_t s1 = std::min(hi, s0 + run_segments);
      for (int64_t s = s0; s < s1; ++s) {
        float* v = y + s * length;
        if (bias && inner == 1) {
          const float* b = epilogue.bias.data();
          for (int64_t i = 0; i < length; ++i) v[i] += b[i];
        }
        add_bias_and_residual(epilogue, v, length, s % channels, bias && inner > 1,
                              residual != nullptr ? residual + s * length : nullptr);
      }
      activate_and_round(epilogue, y + s0 * length, (s1 - s0) * length);
    }
  };
  // Threads pay off from about 32K values each.
  ops::parallel_chunks(threads, segments, run,
                       std::max<int64_t>(ops::kMemoryBoundGrain / std::max<int64_t>(length, 1), 1));
}

}  // namespace vn::engine::kernels
