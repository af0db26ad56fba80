// SPDX-License-Identifier: Apache-2.0
// Conv layers (conv__im2col_gemm, conv__direct, conv__winograd_f2x2_3x3, conv__im2col_int8) with
// BatchNormalization folded into the weights and the epilogue (bias, residual, activation) applied
// in one pass.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/engine/kernels/conv_windows.h"
#include "core/engine/kernels/kernels.h"
#include "core/ops/igemm.h"
#include "core/ops/kernel_context.h"
#include "core/ops/kernel_util.h"
#include "core/ops/nn/conv.h"
#include "core/ops/nn/conv_direct.h"
#include "core/ops/spatial.h"

namespace vn::engine::kernels {
namespace {

using ops::ConstMatrixMap;
using ops::MatrixMap;

// Winograd tiles are transformed and multiplied in chunks so that the transformed input stays a
// few megabytes whatever the image size.
constexpr int64_t kWinogradTileChunk = 2048;

int64_t attr_int(const Node& n, std::string_view name, int64_t fallback) {
  const Attribute* a = n.attr(name);
  return a && a->type == AttrType::kInt ? a->i : fallback;
}

std::vector<int64_t> attr_ints(const Node& n, std::string_view name) {
  const Attribute* a = n.attr(name);
  return a && a->type == AttrType::kInts ? a->ints : std::vector<int64_t>{};
}

/// f(r0, r1) on contiguous runs of `count` rows of `per_row` elements each, on up to `threads`
/// threads when the rows are large enough to share (ops::parallel_chunks' memory-bound grain).
template <typename F>
void parallel_chunks_of_rows(int threads, int64_t count, int64_t per_row, F&& f) {
  const int64_t grain_rows = std::max<int64_t>(1, ops::kMemoryBoundGrain / std::max<int64_t>(per_row, 1));
  ops::parallel_chunks(threads, count, f, grain_rows);
}

// ---- The kernel --------------------------------------------------------------------------------

class ConvKernel final : public LayerKernel {
 public:
  explicit ConvKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {}

  Status prepare() {
    const Node& n = anchor_node(args_);
    const LayerSpec& spec = *args_.spec;
    x_input_ = input_index(spec, n.inputs[0]);
    const Tensor& w = args_.constants->at(n.inputs[1]);
    if (w.dtype() != DType::kFloat32 || w.rank() < 3 || w.rank() > 5) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch, "W must be float32 of rank 3 to 5, got {} {}",
                                      dtype_name(w.dtype()), shape_to_string(w.shape())));
    }
    w_shape_ = w.shape();
    group_ = attr_int(n, "group", 1);
    const int64_t m = w_shape_[0];
    if (group_ < 1 || m % group_ != 0) {
      return tagged(
          args_, make_error(StatusCode::kInvalidModel, "group {} does not divide the {} output channels", group_, m));
    }
    // Folding, int8 quantization and the Winograd transform work on the weights in double.
    const bool folds = spec.epilogue.batch_norm >= 0;
    const bool in_double =
        folds || args_.tactic == TacticId::kConvIm2colInt8 || args_.tactic == TacticId::kConvWinograd;
    std::vector<double> weights;
    if (in_double) weights.assign(w.values<float>().begin(), w.values<float>().end());
    std::vector<double> bias(static_cast<size_t>(m), 0.0);
    bool has_bias = false;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      VN_ASSIGN_OR_RETURN(std::vector<float> b, constant_floats(args_, n.inputs[2], DType::kFloat32));
      if (static_cast<int64_t>(b.size()) != m) {
        return tagged(args_,
                      make_error(StatusCode::kShapeMismatch, "B has {} values for {} output channels", b.size(), m));
      }
      std::copy(b.begin(), b.end(), bias.begin());
      has_bias = true;
    }
    if (folds) {
      VN_RETURN_IF_ERROR(fold_batch_norm(weights, bias));
      has_bias = true;
    }
    for (const std::string& name : spec.epilogue.biases) {
      VN_ASSIGN_OR_RETURN(std::vector<float> b, constant_floats(args_, name, DType::kFloat32));
      if (b.size() != 1 && static_cast<int64_t>(b.size()) != m) {
        return tagged(args_, make_error(StatusCode::kShapeMismatch, "bias '{}' has {} values for {} channels", name,
                                        b.size(), m));
      }
      for (size_t c = 0; c < bias.size(); ++c) bias[c] += b.size() == 1 ? b[0] : b[c];
      has_bias = true;
    }
    if (has_bias && !args_.drop_bias) {
      epilogue_.bias.assign(bias.begin(), bias.end());
      round_in_place(epilogue_.bias, float_storage(precision_));
    }
    epilogue_.residual = spec.epilogue.residual.empty() ? -1 : input_index(spec, spec.epilogue.residual);
    epilogue_.activation = spec.epilogue.activation;
    rounds_ = epilogue_.round_as(args_);

    if (args_.tactic == TacticId::kConvIm2colInt8) {
      // int8 reads only the quantized weights, one scale per output channel.
      weight_scales_ = per_channel_scales(weights, m);
      weights_int8_ = quantize_per_channel(weights, weight_scales_);
      input_scale_ = args_.scales->at(n.inputs[0]);
      const int64_t rows = static_cast<int64_t>(weights_int8_.size()) / m;
      const int64_t taps = rows / w_shape_[1];
      // Sums of few products are exact in float32 (kFloatExactDepth), so the float32 convolution
      // of the integers gives the int32 sums' values: grouped layers (depthwise) have no int8
      // kernel of their own, a shallow sum (a 1x1 layer of few channels) or a wide window (a
      // stem's 7x7) leaves the int8 product little work per packed byte, where the float32 path
      // packs nothing and forms its windows in place, and a dilated window's taps that read only
      // padding are left out there (DeepLabV3's 3 x 3 layers of dilation 12 to 36 over 33 x 33
      // positions: 11 times slower through the int8 product, whose im2col holds every tap).
      // Deeper sums that do not take the int8 product go in exact slices (one group).
      const Attribute* dilations = n.attr("dilations");
      const bool dilated = dilations != nullptr && std::any_of(dilations->ints.begin(), dilations->ints.end(),
                                                               [](int64_t d) { return d != 1; });
      const bool integer_product = ops::igemm_available() && group_ == 1 && rows >= 64 && taps <= 9 && !dilated;
      if (!integer_product && rows <= kFloatExactDepth) {
        weights_grid_ = Tensor(DType::kFloat32, Shape{m, rows});
        std::copy(weights_int8_.begin(), weights_int8_.end(), weights_grid_.mutable_data<float>());
        weights_int8_ = std::vector<int8_t>();
      } else if (!integer_product && group_ == 1) {
        weights_sliced_ = slice_int8_conv_weights(weights_int8_, m, w_shape_[1], taps);
        if (!weights_sliced_.slices.empty()) weights_int8_ = std::vector<int8_t>();
      } else if (ops::igemm_uses_vnni()) {
        weight_offsets_.resize(static_cast<size_t>(m));
        ops::int8_row_offsets(m, rows, weights_int8_.data(), rows, weight_offsets_.data());
      }
      return Status::OK();
    }
    if (args_.tactic == TacticId::kConvWinograd) {
      // Winograd reads only the transformed weights.
      prepare_winograd(weights);
      return Status::OK();
    }
    if (folds) {
      weights_.assign(weights.begin(), weights.end());
    } else {
      weights_.assign(w.values<float>().begin(), w.values<float>().end());
    }
    round_operands_in_place(weights_, precision_);
    if (!folds) {
      // Unfolded weights are the model's own tensor rounded to the operand format: the layer keeps
      // no copy but reads the model's tensor, which a reference backend running the same model
      // reads too; when the format changes values (fp16, bf16, tf32), they are rounded into a
      // scratch buffer at each run, which costs far less than the layer's products.
      round_at_run_ = !std::equal(weights_.begin(), weights_.end(), w.values<float>().begin());
      weights_ = std::vector<float>();  // not `= {}`, which keeps the capacity
      model_weights_ = w;
    }
    return Status::OK();
  }

  /// int8 quantizes X itself (run_im2col_int8, run_int8_as_float), unless it is the residual too.
  bool rounds_outputs() const override { return rounds_; }

  bool quantizes_input(size_t input) const override {
    return args_.tactic == TacticId::kConvIm2colInt8 && static_cast<int>(input) == x_input_ &&
           x_input_ != epilogue_.residual;
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    return run_with(inputs, outputs, false);
  }

  Status run_on_grid(std::span<const Tensor* const> inputs, std::span<const char>, std::span<const char> on_grid,
                     std::span<Tensor> outputs) const override {
    return run_with(inputs, outputs, on_grid[static_cast<size_t>(x_input_)] != 0);
  }

 private:
  /// run(), told whether X holds values of its int8 grid already (run_on_grid).
  Status run_with(std::span<const Tensor* const> inputs, std::span<Tensor> outputs, bool x_on_grid) const {
    const Tensor& x = *inputs[static_cast<size_t>(x_input_)];
    const Node& n = anchor_node(args_);
    const int64_t node_index = args_.spec->nodes.front();
    if (x.rank() != static_cast<int64_t>(w_shape_.size()) || x.dim(1) != w_shape_[1] * group_) {
      return Status(StatusCode::kShapeMismatch,
                    fmt::format("X {} does not match W {} with group={}", shape_to_string(x.shape()),
                                shape_to_string(w_shape_), group_),
                    n.ref(node_index));
    }
    ops::KernelContext ctx(n, node_index, args_.model->opset(n.domain), {}, {}, 1);
    const Shape in(x.shape().begin() + 2, x.shape().end());
    const Shape kernel(w_shape_.begin() + 2, w_shape_.end());
    VN_ASSIGN_OR_RETURN(const ops::WindowGeometry geo, ops::window_geometry(ctx, in, kernel, false, true));
    VN_RETURN_IF_ERROR(ctx.attr_error());
    Shape out_shape{x.dim(0), w_shape_[0]};
    out_shape.insert(out_shape.end(), geo.out.begin(), geo.out.end());
    const Tensor* residual = epilogue_.residual >= 0 ? inputs[static_cast<size_t>(epilogue_.residual)] : nullptr;
    if (residual && residual->shape() != out_shape) {
      return Status(StatusCode::kShapeMismatch,
                    fmt::format("residual {} does not match the output {}", shape_to_string(residual->shape()),
                                shape_to_string(out_shape)),
                    n.ref(node_index));
    }
    // conv__direct's plane sums add each tap into their output; the other paths write every
    // element, so their output is not zeroed first (a pass over it as long as the epilogue's).
    Result<Tensor> created = args_.tactic == TacticId::kConvDirect && !direct_in_registers(geo)
                                 ? Tensor::create(DType::kFloat32, out_shape)
                                 : Tensor::create_for_overwrite(DType::kFloat32, out_shape);
    if (!created.ok()) return created.status().with_node(n.ref(node_index));
    Tensor y = std::move(*created);
    if (y.numel() > 0) {
      const float* px = x.data<float>();
      std::vector<float> rounded;
      if (precision_.tf32_products) {
        rounded.assign(px, px + x.numel());
        round_to_tf32_in_place(rounded);
        px = rounded.data();
      }
      float* py = y.mutable_data<float>();
      const ops::WindowGeometry g3 = ops::lift_to_3d(geo);
      bool finished = false;  // the epilogue ran with the products
      switch (args_.tactic) {
        case TacticId::kConvDirect:
          run_direct(px, x.dim(0), g3, weights(), py, residual ? residual->data<float>() : nullptr);
          finished = true;
          break;
        case TacticId::kConvWinograd:
          run_winograd(px, x.dim(0), geo, py);
          break;
        case TacticId::kConvIm2colInt8:
          if (!weights_grid_.defined() && weights_sliced_.slices.empty()) {
            run_im2col_int8(px, x.dim(0), g3, py, residual ? residual->data<float>() : nullptr);
          } else {
            run_int8_as_float(px, x.dim(0), g3, py, residual ? residual->data<float>() : nullptr, x_on_grid);
          }
          finished = true;
          break;
        default:
          finished = run_im2col(px, x.dim(0), g3, py, residual ? residual->data<float>() : nullptr);
          break;
      }
      const int64_t out_size = shape_numel(geo.out);
      if (!finished) {
        apply_epilogue(epilogue_, py, x.dim(0), w_shape_[0], out_size, residual ? residual->data<float>() : nullptr,
                       args_.num_threads);
      }
    }
    outputs[0] = std::move(y);
    return Status::OK();
  }

  Status fold_batch_norm(std::vector<double>& weights, std::vector<double>& bias) const {
    const Node& bn = args_.model->graph.nodes[static_cast<size_t>(args_.spec->epilogue.batch_norm)];
    const int64_t m = w_shape_[0];
    std::vector<std::vector<float>> p(4);
    for (size_t i = 0; i < 4; ++i) {
      VN_ASSIGN_OR_RETURN(p[i], constant_floats(args_, bn.inputs[i + 1], DType::kFloat32));
      if (static_cast<int64_t>(p[i].size()) != m) {
        return tagged(args_, make_error(StatusCode::kShapeMismatch,
                                        "BatchNormalization '{}' has {} values of '{}' for {} channels", bn.name,
                                        p[i].size(), bn.inputs[i + 1], m));
      }
    }
    double epsilon = 1e-5;
    if (const Attribute* a = bn.attr("epsilon"); a && a->type == AttrType::kFloat) epsilon = a->f;
    const size_t per_channel = weights.size() / static_cast<size_t>(m);
    for (size_t c = 0; c < static_cast<size_t>(m); ++c) {
      const double scale = p[0][c] / std::sqrt(static_cast<double>(p[3][c]) + epsilon);
      for (size_t i = 0; i < per_channel; ++i) weights[c * per_channel + i] *= scale;
      bias[c] = (bias[c] - p[2][c]) * scale + p[1][c];
    }
    return Status::OK();
  }

  void prepare_winograd(const std::vector<double>& weights) {
    const int64_t m = w_shape_[0], c = w_shape_[1];
    winograd_u_.assign(static_cast<size_t>(16 * m * c), 0.0f);
    std::vector<float> g(9);
    double u[16];
    for (int64_t mo = 0; mo < m; ++mo) {
      for (int64_t ci = 0; ci < c; ++ci) {
        const double* src = weights.data() + (mo * c + ci) * 9;
        for (size_t i = 0; i < 9; ++i) g[i] = static_cast<float>(src[i]);
        winograd_kernel_transform(g.data(), u);
        for (int64_t e = 0; e < 16; ++e)
          winograd_u_[static_cast<size_t>((e * m + mo) * c + ci)] = static_cast<float>(u[e]);
      }
    }
    round_operands_in_place(winograd_u_, precision_);
  }

  /// The weights the direct sum and the float16-accumulating im2col read, rounded whole when the
  /// format changes them (the float32 im2col rounds a block of output channels at a time inside
  /// its products instead; Winograd and int8 prepare their own).
  const float* weights() const {
    if (!model_weights_.defined()) return weights_.data();
    if (!round_at_run_) return model_weights_.data<float>();
    // Kept for the next layer: the largest layer's weights at most.
    thread_local std::vector<float> rounded;
    const std::span<const float> w = model_weights_.values<float>();
    rounded.resize(w.size());
    // The other threads see their own thread_local, so they are handed this thread's buffer.
    float* out = rounded.data();
    ops::parallel_chunks(args_.num_threads, static_cast<int64_t>(w.size()), [&](int64_t lo, int64_t hi) {
      std::copy(w.begin() + lo, w.begin() + hi, out + lo);
      round_operands_in_place(std::span<float>(out + lo, static_cast<size_t>(hi - lo)), precision_);
    });
    return out;
  }

  /// Returns whether the epilogue ran too: with float32 accumulation the bias comes in with the
  /// products and the residual and activation are applied to each block of y as it is done.
  bool run_im2col(const float* x, int64_t batch, const ops::WindowGeometry& g, float* y, const float* residual) const {
    const int64_t m = w_shape_[0], cg = w_shape_[1], mg = m / group_;
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    const int64_t rows = cg * taps;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    bool pointwise = taps == 1;
    for (int i = 0; i < 3; ++i) {
      pointwise = pointwise && g.strides[i] == 1 && g.pads_begin[i] == 0 && g.pads_end[i] == 0;
    }
    const TacticId gemm = precision_.accumulate == DType::kFloat16 ? TacticId::kGemmK32F16Acc : TacticId::kGemmBlocked;
    if (gemm == TacticId::kGemmBlocked) {
      // Float32 accumulation computes what the reference's convolution computes, so it runs that
      // (cache-sized im2col tiles shared among the threads), on operands in this layer's format:
      // the model's weights are rounded a few output channels at a time as the products need them.
      // The bias starts the sums, as in the reference; the residual and the activation follow on
      // each block while it is in cache, where a pass of their own read all of y from memory.
      const int threads = capped_threads(args_.num_threads);
      const float* bias = epilogue_.bias.empty() ? nullptr : epilogue_.bias.data();
      const ops::ConvFinish finish = [&](int64_t img, int64_t channel0, int64_t channels, int64_t col0, int64_t width) {
        if (width == out_size) {
          // Whole planes lie one after another: one segment (the bias is in, by channel).
          const int64_t at = (img * m + channel0) * out_size;
          apply_epilogue_segment(epilogue_, y + at, channels * out_size, channel0, false,
                                 residual ? residual + at : nullptr);
          return;
        }
        for (int64_t ch = channel0; ch < channel0 + channels; ++ch) {
          const int64_t at = (img * m + ch) * out_size + col0;
          // The bias started the sums (conv_float32).
          apply_epilogue_segment(epilogue_, y + at, width, ch, false, residual ? residual + at : nullptr);
        }
      };
      const bool needs_finish =
          residual != nullptr || epilogue_.activation.fn != ActivationFn::kNone || epilogue_.round != DType::kFloat32;
      const ops::ConvFinish* finishing = needs_finish ? &finish : nullptr;
      if (model_weights_.defined() && round_at_run_) {
        const std::function<void(std::span<float>)> round = [this](std::span<float> w) {
          round_operands_in_place(w, precision_);
        };
        // Kept packed in 16 bits where the rounding is to float16 or bfloat16 (kept_format).
        ops::conv_float32(g, batch, group_ * cg, m, group_, x, model_weights_.data<float>(), bias, y, threads, &round,
                          finishing, &model_weights_, kept_format(precision_));
      } else {
        // The model's own weights (not rounded, not folded) stay packed, shared with a reference
        // backend running the same model.
        ops::conv_float32(g, batch, group_ * cg, m, group_, x, weights(), bias, y, threads, nullptr, finishing,
                          model_weights_.defined() ? &model_weights_ : nullptr);
      }
      return true;
    }
    const float* w = weights();
    std::vector<float> col(pointwise ? 0 : static_cast<size_t>(rows * out_size));
    for (int64_t img = 0; img < batch; ++img) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        const float* xg = x + (img * group_ * cg + gi * cg) * in_size;
        const float* cols = xg;
        if (!pointwise) {
          im2col(xg, cg, g, col.data());
          cols = col.data();
        }
        matmul(gemm, w + gi * mg * rows, cols, y + (img * m + gi * mg) * out_size, mg, out_size, rows);
      }
    }
    return false;
  }

  /// x holds values of its int8 grid (CompiledLayer quantized it), so converting it to int8 is
  /// exact; the products sum in int32, and each block of sums is rescaled per output channel and
  /// finished with the epilogue while in cache. A pointwise convolution's products read the
  /// quantized input itself (its im2col matrix).
  void run_im2col_int8(const float* x, int64_t batch, const ops::WindowGeometry& g, float* y,
                       const float* residual) const {
    const int64_t m = w_shape_[0], cg = w_shape_[1], mg = m / group_;
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    const int64_t rows = cg * taps;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    bool pointwise = taps == 1;
    for (int i = 0; i < 3; ++i) {
      pointwise = pointwise && g.strides[i] == 1 && g.pads_begin[i] == 0 && g.pads_end[i] == 0;
    }
    const int threads = args_.num_threads;
    // Every byte of these is written before it is read: no zero fill.
    const int64_t xq_size = batch * group_ * cg * in_size;
    CallBuffer<int8_t> xq(xq_size);
    ops::parallel_chunks(threads, xq_size, [&](int64_t i0, int64_t i1) {
      quantize_to_int8(std::span<const float>(x + i0, static_cast<size_t>(i1 - i0)), input_scale_, xq.get() + i0);
    });
    CallBuffer<int8_t> col(pointwise ? 0 : rows * out_size);
    CallBuffer<int32_t> acc(mg * out_size);
    for (int64_t img = 0; img < batch; ++img) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        const int8_t* xg = xq.get() + (img * group_ * cg + gi * cg) * in_size;
        if (!pointwise) {
          parallel_chunks_of_rows(threads, cg, rows / cg * out_size, [&](int64_t c0, int64_t c1) {
            im2col(xg + c0 * in_size, c1 - c0, g, col.get() + c0 * taps * out_size);
          });
        }
        const ops::Int8Finish finish = [&](int64_t mo0, int64_t mo1, int64_t j0, int64_t j1) {
          for (int64_t mo = mo0; mo < mo1; ++mo) {
            const int64_t ch = gi * mg + mo;
            const float scale = input_scale_ * weight_scales_[static_cast<size_t>(ch)];
            const int32_t* a = acc.get() + mo * out_size;
            const int64_t at = (img * m + ch) * out_size;
            for (int64_t i = j0; i < j1; ++i) y[at + i] = static_cast<float>(a[i]) * scale;
            apply_epilogue_segment(epilogue_, y + at + j0, j1 - j0, ch, true, residual ? residual + at + j0 : nullptr);
          }
        };
        matmul_int8(weights_int8_.data() + gi * mg * rows, pointwise ? xg : col.get(), acc.get(), mg, out_size, rows,
                    threads, nullptr, weight_offsets_.empty() ? nullptr : weight_offsets_.data() + gi * mg, &finish);
      }
    }
  }

  /// An int8 convolution of at most kFloatExactDepth products per sum (or sliced into such sums,
  /// conv_int8_slices): such sums of int8 products are exact in float32 in any order, so the
  /// reference's float32 convolution sums the integers as floats, each block then rescaled as
  /// run_im2col_int8 rescales (the same values) and finished with the epilogue while in cache.
  void run_int8_as_float(const float* x, int64_t batch, const ops::WindowGeometry& g, float* y, const float* residual,
                         bool x_on_grid) const {
    const int64_t m = w_shape_[0], cg = w_shape_[1], mg = m / group_;
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    const ops::ConvFinish finish = [&](int64_t img, int64_t channel0, int64_t channels, int64_t col0, int64_t width) {
      for (int64_t ch = channel0; ch < channel0 + channels; ++ch) {
        const int64_t at = (img * m + ch) * out_size + col0;
        const float scale = input_scale_ * weight_scales_[static_cast<size_t>(ch)];
        for (int64_t i = 0; i < width; ++i) y[at + i] *= scale;
        apply_epilogue_segment(epilogue_, y + at, width, ch, true, residual ? residual + at : nullptr);
      }
    };
    if (weights_sliced_.slices.empty() && ops::conv_direct_suits(group_, cg, mg, g.kernel, g.dilations)) {
      // The path conv_float32 takes for these groups, with X quantized as each task copies its
      // rows (quantize(0) is 0: the padding stays), then the planes finished as it finishes them.
      // Sliced weights (sums too deep for float32) take conv_int8_slices below.
      const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
      const int threads = threads_for_work(args_.num_threads, batch * m * cg * taps * out_size, ops::kProductGrain);
      const std::function<void(std::span<float>)> quantize = [&](std::span<float> v) {
        input_integers(v, input_scale_, v.data(), x_on_grid);
      };
      ops::conv_direct(g, batch, group_ * cg, m, group_, x, weights_grid_.data<float>(), nullptr, y, threads,
                       &quantize);
      parallel_for(capped_threads(args_.num_threads), batch * m,
                   [&](int64_t i) { finish(i / m, i % m, 1, 0, out_size); });
      return;
    }
    const int64_t size = batch * group_ * cg * g.in[0] * g.in[1] * g.in[2];
    CallBuffer<float> xf(size);
    ops::parallel_chunks(args_.num_threads, size, [&](int64_t i0, int64_t i1) {
      input_integers(std::span<const float>(x + i0, static_cast<size_t>(i1 - i0)), input_scale_, xf.get() + i0,
                     x_on_grid);
    });
    if (!weights_sliced_.slices.empty()) {
      conv_int8_slices(g, batch, cg, m, xf.get(), weights_sliced_, y, capped_threads(args_.num_threads), finish);
      return;
    }
    ops::conv_float32(g, batch, group_ * cg, m, group_, xf.get(), weights_grid_.data<float>(), nullptr, y,
                      capped_threads(args_.num_threads), nullptr, &finish, &weights_grid_);
  }

  /// Whether conv__direct sums in registers (ops::conv_direct: depthwise and few channels per
  /// group) rather than plane by plane (direct_plane).
  bool direct_in_registers(const ops::WindowGeometry& g) const {
    return ops::conv_direct_suits(group_, w_shape_[1], w_shape_[0] / group_, g.kernel, g.dilations);
  }

  /// The direct sums of each output plane, then its epilogue while the plane is in cache.
  void run_direct(const float* x, int64_t batch, const ops::WindowGeometry& g, const float* w, float* y,
                  const float* residual) const {
    const int64_t m = w_shape_[0], cg = w_shape_[1], mg = m / group_;
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    const int threads = threads_for_work(args_.num_threads, batch * m * cg * taps * out_size, ops::kProductGrain);
    if (direct_in_registers(g)) {
      // Without a bias, ops::conv_direct sums from 0 in direct_plane's order, (channel, kd, kh, kw),
      // one fused multiply-add each: the same bits, since a padding tap adds w * 0 to a sum that
      // is never -0. It keeps a block of outputs in registers over all the taps where direct_plane
      // passes over the plane once per tap. The bias comes after the sums, as in direct_plane.
      ops::conv_direct(g, batch, group_ * cg, m, group_, x, w, nullptr, y, threads);
      apply_epilogue(epilogue_, y, batch, m, out_size, residual, threads);
      return;
    }
    parallel_for(threads, batch * m, [&](int64_t plane) {
      const int64_t img = plane / m, mo = plane % m, gi = mo / mg;
      const float* xg = x + (img * group_ * cg + gi * cg) * in_size;
      direct_plane(xg, w + mo * cg * taps, cg, g, y + plane * out_size);
      apply_epilogue_segment(epilogue_, y + plane * out_size, out_size, mo, true,
                             residual ? residual + plane * out_size : nullptr);
    });
  }

  void run_winograd(const float* x, int64_t batch, const ops::WindowGeometry& g, float* y) const {
    const int64_t m = w_shape_[0], c = w_shape_[1];
    const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
    const int64_t pad_t = g.pads_begin[0], pad_l = g.pads_begin[1];
    const int64_t tiles_w = (out_w + 1) / 2;
    const int64_t tiles = ((out_h + 1) / 2) * tiles_w;
    std::vector<float> v, prod;
    for (int64_t img = 0; img < batch; ++img) {
      const float* xi = x + img * c * in_h * in_w;
      float* yi = y + img * m * out_h * out_w;
      for (int64_t t0 = 0; t0 < tiles; t0 += kWinogradTileChunk) {
        const int64_t nt = std::min(kWinogradTileChunk, tiles - t0);
        v.assign(static_cast<size_t>(16 * c * nt), 0.0f);
        parallel_for(capped_threads(args_.num_threads), c, [&](int64_t ci) {
          const float* xc = xi + ci * in_h * in_w;
          float d[4][4], tv[16];
          for (int64_t t = 0; t < nt; ++t) {
            const int64_t th = (t0 + t) / tiles_w, tw = (t0 + t) % tiles_w;
            for (int r = 0; r < 4; ++r) {
              const int64_t ih = 2 * th - pad_t + r;
              for (int s = 0; s < 4; ++s) {
                const int64_t iw = 2 * tw - pad_l + s;
                d[r][s] = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w ? xc[ih * in_w + iw] : 0.0f;
              }
            }
            winograd_input_transform(d, tv);
            for (int e = 0; e < 16; ++e) v[static_cast<size_t>((e * c + ci) * nt + t)] = tv[e];
          }
        });
        round_operands_in_place(v, precision_);
        prod.resize(static_cast<size_t>(16 * m * nt));
        for (int e = 0; e < 16; ++e) {
          matmul(TacticId::kGemmBlocked, winograd_u_.data() + e * m * c, v.data() + e * c * nt,
                 prod.data() + e * m * nt, m, nt, c, args_.num_threads);
        }
        parallel_for(capped_threads(args_.num_threads), m, [&](int64_t mo) {
          float tile[16], out[2][2];
          for (int64_t t = 0; t < nt; ++t) {
            for (int e = 0; e < 16; ++e) tile[e] = prod[static_cast<size_t>((e * m + mo) * nt + t)];
            winograd_output_transform(tile, out);
            const int64_t th = (t0 + t) / tiles_w, tw = (t0 + t) % tiles_w;
            for (int r = 0; r < 2; ++r) {
              const int64_t oh = 2 * th + r;
              if (oh >= out_h) continue;
              for (int s = 0; s < 2; ++s) {
                const int64_t ow = 2 * tw + s;
                if (ow < out_w) yi[(mo * out_h + oh) * out_w + ow] = out[r][s];
              }
            }
          }
        });
      }
    }
  }

  KernelArgs args_;
  Precision precision_;
  int x_input_ = 0;
  Shape w_shape_;
  int64_t group_ = 1;
  bool rounds_ = false;                  // the epilogue rounds the output to the storage format
  std::vector<float> weights_;           // folded, in the operand format (else empty)
  Tensor model_weights_;                 // the model's W, when not folded
  bool round_at_run_ = false;            // model_weights_ must be rounded to the operand format
  std::vector<float> winograd_u_;        // [16][M][C] transformed weights, in the operand format
  std::vector<int8_t> weights_int8_;     // folded and quantized per output channel (int8 only)
  std::vector<float> weight_scales_;     // per output channel (int8 only)
  std::vector<int32_t> weight_offsets_;  // ops::int8_row_offsets of weights_int8_ (int8, VNNI only)
  Tensor weights_grid_;  // int8 weights as floats, m x rows, kept packed (run_int8_as_float, instead of weights_int8_)
  Int8ConvSlices weights_sliced_;        // the same in exact slices (deeper sums, off the int8 product)
  float input_scale_ = 1.0f;             // X's tensor scale (int8 only)
  EpilogueRuntime epilogue_;
};

}  // namespace

Support conv_applicable(const KernelArgs& args, std::span<const Tensor* const>) {
  if (args.tactic != TacticId::kConvWinograd) return {};
  const Node& n = anchor_node(args);
  const Tensor& w = args.constants->at(n.inputs[1]);
  if (w.rank() != 4 || w.dim(2) != 3 || w.dim(3) != 3) {
    return {false, fmt::format("Winograd F(2x2,3x3) needs a 2-D 3x3 kernel, W is {}", shape_to_string(w.shape()))};
  }
  auto all_ones = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t s) { return s == 1; });
  };
  if (!all_ones(attr_ints(n, "strides")) || !all_ones(attr_ints(n, "dilations"))) {
    return {false, "Winograd F(2x2,3x3) needs stride 1 and dilation 1"};
  }
  if (attr_int(n, "group", 1) != 1) return {false, "Winograd F(2x2,3x3) runs one group only"};
  return {};
}

Result<std::unique_ptr<LayerKernel>> make_conv_kernel(const KernelArgs& args) {
  auto kernel = std::make_unique<ConvKernel>(args);
  VN_RETURN_IF_ERROR(kernel->prepare());
  return std::unique_ptr<LayerKernel>(std::move(kernel));
}

}  // namespace vn::engine::kernels
