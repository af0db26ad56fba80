// SPDX-License-Identifier: Apache-2.0
// Conv, Gemm and MatMul layers of the fuser, with their epilogue: BatchNormalization, channel
// bias, residual Add and activation.
#include <cmath>

#include "core/engine/fuser.h"

namespace vn::engine {

bool Fuser::is_channel_bias(const std::string& bias, bool conv, size_t rank, int64_t channels) const {
  const Tensor* b = constant(bias);
  if (!b || b->dtype() != DType::kFloat32 || b->rank() > static_cast<int64_t>(rank)) return false;
  if (b->numel() == 1) return true;
  const Shape& s = b->shape();
  // Right-align the bias against the output: exactly one dim may differ from 1.
  const size_t lead = rank - s.size();
  const size_t axis = conv ? 1 : rank - 1;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t out_axis = lead + i;
    if (out_axis == axis) {
      if (s[i] != channels) return false;
    } else if (s[i] != 1) {
      return false;
    }
  }
  return axis >= lead;
}

void Fuser::fuse_product(int64_t anchor) {
  const Node& a = node(anchor);
  const bool conv = is_op(a, "Conv");
  LayerSpec spec;
  spec.kind = conv ? LayerKind::kConv : LayerKind::kGemm;
  spec.nodes = {anchor};
  const std::string anchor_op = a.op_type;

  // Output rank and channel count, for bias checks.
  std::optional<size_t> rank;
  int64_t channels = -1;
  if (conv) {
    const Tensor* w = constant(a.inputs[1]);
    rank = w->shape().size();
    channels = w->dim(0);
  } else if (is_op(a, "Gemm")) {
    rank = 2;
    if (std::optional<Shape> b = static_shape(a.inputs[1]); b && b->size() == 2) {
      channels = attr_int(a, "transB", 0) != 0 ? (*b)[0] : (*b)[1];
    }
  } else {
    rank = known_rank(a.outputs[0]);
    if (std::optional<Shape> b = static_shape(a.inputs[1]); b && b->size() >= 2) channels = b->back();
    // Without shape information (Swin-T's export has none for its linear layers), a bias of one
    // dimension still fits: the product has at least one dimension, `channels` the last.
    if (!rank && channels > 0) rank = 1;
  }

  std::string t = a.outputs[0];
  int stage = 0;  // 0: BatchNormalization allowed, 1: biases, 2: residual, 3: activation, 4: done
  while (stage < 4) {
    const int64_t c = sole_consumer(t);
    std::optional<Fusion> fusion;
    if (c >= 0 && !node(c).outputs.empty()) {
      const Node& n = node(c);
      if (stage == 0 && conv && is_op(n, "BatchNormalization") && n.inputs.size() >= 5 && n.inputs[0] == t &&
          std::count_if(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return !o.empty(); }) == 1 &&
          attr_int(n, "training_mode", 0) == 0 && is_constant(n.inputs[1]) && is_constant(n.inputs[2]) &&
          is_constant(n.inputs[3]) && is_constant(n.inputs[4])) {
        fusion = Fusion::kConvBatchNorm;
        if (!is_marked(t)) spec.epilogue.batch_norm = c;
        stage = 1;
      } else if (stage <= 1 && is_op(n, "Add") && rank && channels > 0 &&
                 is_channel_bias(other_input(n, t), conv, *rank, channels)) {
        fusion = Fusion::kProductBias;
        if (!is_marked(t)) spec.epilogue.biases.push_back(other_input(n, t));
        stage = 1;
      } else if (stage <= 2 && is_op(n, "Add")) {
        const std::string r = other_input(n, t);
        const std::optional<Shape> rs = r.empty() || is_constant(r) ? std::nullopt : static_shape(r);
        const std::optional<Shape> ts = static_shape(t);
        if (r != t && rs && ts && *rs == *ts) {
          fusion = Fusion::kProductResidual;
          if (!is_marked(t)) spec.epilogue.residual = r;
          stage = 3;
        }
      }
      if (fusion) {
        if (is_marked(t)) {
          std::vector<int64_t> nodes = spec.nodes;
          nodes.push_back(c);
          prevent(*fusion, nodes, t, anchor_op);
          break;
        }
        spec.nodes.push_back(c);
        spec.hidden.push_back(t);
        t = n.outputs[0];
        continue;
      }
    }
    if (std::optional<ActivationMatch> m = match_epilogue_activation(t)) {
      std::vector<int64_t> nodes = spec.nodes;
      nodes.insert(nodes.end(), m->nodes.begin(), m->nodes.end());
      std::string blocked = is_marked(t) ? t : "";
      for (const std::string& h : m->hidden) {
        if (blocked.empty() && is_marked(h)) blocked = h;
      }
      if (!blocked.empty()) {
        prevent(Fusion::kProductActivation, nodes, blocked, anchor_op, activation_name(m->activation.fn));
        break;
      }
      spec.nodes = std::move(nodes);
      spec.hidden.push_back(t);
      spec.hidden.insert(spec.hidden.end(), m->hidden.begin(), m->hidden.end());
      spec.epilogue.activation = m->activation;
      t = m->output;
    }
    break;
  }
  add_layer(std::move(spec));
}

}  // namespace vn::engine
