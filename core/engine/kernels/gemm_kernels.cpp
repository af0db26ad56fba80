// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul layers (gemm__blocked_f32acc, gemm__split_k4, gemm__k32_f16acc,
// gemm__int8_i32acc), and the matrix product cores (float and int8) that the Conv im2col tactics
// share.
#include <algorithm>
#include <cstring>
#include <memory>

#include "core/engine/kernels/kernels.h"
#include "core/ops/broadcast.h"
#include "core/ops/kernel_util.h"
#include "core/ops/sgemm_driver.h"

namespace vn::engine::kernels {
namespace {

using ops::ConstMatrixMap;
using ops::MatrixMap;

constexpr int64_t kSplits = 4;
constexpr int64_t kSliceDepth = 32;

/// A row-major copy of the transpose of `rows` x `cols` values.
std::vector<float> transposed(const float* x, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(c * rows + r)] = x[r * cols + c];
  }
  return out;
}

/// One operand of the product: a runtime input, or a constant prepared at build time (rounded to
/// the operand format; a transposed A, and B for int8, already transposed).
struct Operand {
  int input = -1;
  std::vector<float> values;
  Tensor model_values;        ///< the model's constant itself (not for int8, nor a transposed A)
  bool round_at_run = false;  ///< model_values must be rounded to the operand format
  bool transposed = false;    ///< B stored as its transpose (transB): values are n x k
  Shape shape;                ///< of op(B) (k x n) or A as the product reads it

  const float* data() const { return model_values.defined() ? model_values.data<float>() : values.data(); }
};

class GemmKernel final : public LayerKernel {
 public:
  explicit GemmKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {}

  Status prepare() {
    const Node& n = anchor_node(args_);
    gemm_ = n.op_type == "Gemm";
    if (gemm_) {
      for (const Attribute& a : n.attributes) {
        if (a.name == "transA" && a.type == AttrType::kInt) trans_a_ = a.i != 0;
        if (a.name == "transB" && a.type == AttrType::kInt) trans_b_ = a.i != 0;
        if (a.name == "alpha" && a.type == AttrType::kFloat) alpha_ = a.f;
        if (a.name == "beta" && a.type == AttrType::kFloat) beta_ = a.f;
      }
    }
    VN_RETURN_IF_ERROR(operand(n.inputs[0], trans_a_, a_));
    VN_RETURN_IF_ERROR(operand(n.inputs[1], trans_b_, b_));
    if (a_.input < 0) trans_a_ = false;
    if (b_.input < 0) trans_b_ = false;
    round_b_panels_ = b_.round_at_run && args_.tactic != TacticId::kGemmInt8;
    round_panels_ = [this](std::span<float> v) { round_operands_in_place(v, precision_); };
    if (args_.tactic == TacticId::kGemmInt8) prepare_int8(n);
    const LayerSpec& spec = *args_.spec;
    if (!args_.drop_bias) {
      if (gemm_ && n.inputs.size() > 2 && !n.inputs[2].empty() && beta_ != 0.0f) {
        VN_ASSIGN_OR_RETURN(c_, constant_floats(args_, n.inputs[2], float_storage(precision_)));
        c_shape_ = args_.constants->at(n.inputs[2]).shape();
      }
      for (const std::string& b : spec.epilogue.biases) {
        VN_ASSIGN_OR_RETURN(std::vector<float> v, constant_floats(args_, b, float_storage(precision_)));
        bias_parts_.push_back(std::move(v));
      }
    }
    epilogue_.residual = spec.epilogue.residual.empty() ? -1 : input_index(spec, spec.epilogue.residual);
    epilogue_.activation = spec.epilogue.activation;
    rounds_ = epilogue_.round_as(args_);
    return Status::OK();
  }

  /// int8 quantizes A itself (product), unless it is the residual too.
  bool rounds_outputs() const override { return rounds_; }

  bool quantizes_input(size_t input) const override {
    return args_.tactic == TacticId::kGemmInt8 && a_.input >= 0 && static_cast<int>(input) == a_.input &&
           a_.input != epilogue_.residual;
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    return run_with(inputs, outputs, false);
  }

  Status run_on_grid(std::span<const Tensor* const> inputs, std::span<const char>, std::span<const char> on_grid,
                     std::span<Tensor> outputs) const override {
    return run_with(inputs, outputs, on_grid[static_cast<size_t>(a_.input)] != 0);
  }

 private:
  /// run(), told whether A holds values of its int8 grid already (run_on_grid).
  Status run_with(std::span<const Tensor* const> inputs, std::span<Tensor> outputs, bool a_on_grid) const {
    // Kept across runs: rounded constants and transposed inputs would otherwise fault in fresh
    // pages at every layer.
    thread_local std::vector<float> a_tmp, b_tmp;
    a_tmp.clear();
    b_tmp.clear();
    const float* pa = nullptr;
    const float* pb = nullptr;
    Shape sa, sb;
    VN_RETURN_IF_ERROR(fetch(a_, inputs, trans_a_, a_tmp, pa, sa));
    VN_RETURN_IF_ERROR(fetch(b_, inputs, trans_b_, b_tmp, pb, sb));
    return gemm_ ? run_gemm(inputs, outputs, pa, sa, pb, sb, a_on_grid)
                 : run_matmul(inputs, outputs, pa, sa, pb, sb, a_on_grid);
  }

  Status operand(const std::string& name, bool trans, Operand& out) {
    out.input = input_index(*args_.spec, name);
    if (out.input >= 0) return Status::OK();
    VN_ASSIGN_OR_RETURN(out.values, constant_floats(args_, name, float_storage(precision_), precision_.tf32_products));
    out.shape = args_.constants->at(name).shape();
    const bool int8 = args_.tactic == TacticId::kGemmInt8;
    if (trans) {
      if (out.shape.size() != 2) {
        return tagged(args_, make_error(StatusCode::kShapeMismatch, "Gemm operand '{}' must be 2-D, got {}", name,
                                        shape_to_string(out.shape)));
      }
      std::swap(out.shape[0], out.shape[1]);
      // A transB weight stays as the model stores it: the product packs it from there, and with
      // few rows (a classifier) sums each output along a contiguous row, as the reference does.
      // Its transposed copy read in a scaled-row order ran 1.3x the reference's time on
      // MobileNetV3's classifier (960 x 1280, memory-bound). int8 quantizes by column of [k, n].
      out.transposed = &out == &b_ && !int8;
      if (!out.transposed) {
        out.values = transposed(out.values.data(), out.shape[1], out.shape[0]);
        return Status::OK();
      }
    }
    if (!int8) {
      // The layer keeps no copy but reads the model's own tensor, which a reference backend
      // running the same model reads too; when the operand format changes values (fp16, bf16,
      // tf32), they are rounded into a scratch buffer at each run.
      const Tensor& constant = args_.constants->at(name);
      out.round_at_run = !std::equal(out.values.begin(), out.values.end(), constant.values<float>().begin());
      out.values = std::vector<float>();  // not `= {}`, which keeps the capacity
      out.model_values = constant;
    }
    return Status::OK();
  }

  /// Quantizes the constant B ([k, n] once prepared) with one scale per output column.
  void prepare_int8(const Node& n) {
    const int64_t k = b_.shape[0], cols = b_.shape[1];
    std::vector<double> columns(b_.values.size());
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        columns[static_cast<size_t>(c * k + r)] = b_.values[static_cast<size_t>(r * cols + c)];
    }
    b_scales_ = per_channel_scales(columns, cols);
    const std::vector<int8_t> by_column = quantize_per_channel(columns, b_scales_);
    std::vector<int8_t> b_int8(by_column.size());
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        b_int8[static_cast<size_t>(r * cols + c)] = by_column[static_cast<size_t>(c * k + r)];
    }
    b_.values = std::vector<float>();
    a_scale_ = args_.scales->at(n.inputs[0]);
    if (ops::igemm_available()) {
      // Kept packed for the int8 product instead (VNNI's bytes, or AVX2's int16 pairs): each
      // weight stored once.
      b_packed_.resize(static_cast<size_t>(ops::packed_int8_b_size(k, cols)));
      ops::pack_int8_b(k, cols, b_int8.data(), cols, b_packed_.data());
    } else {
      // Kept in panels for the float32 kernel (matmul_int8_panels): matmul_int8 would convert all
      // of B at every call (MobileNetV3's int8 classifier ran 3.6 ms against fp32's 0.3).
      b_panels_ = pack_int8_panels(b_int8.data(), k, cols);
    }
  }

  /// y = a · b with the layer's tactic. int8 reads its prepared B and quantizes a itself with A's
  /// scale (quantizes_input; reads the integers off when `a_on_grid`); the sums are int32. `then`,
  /// when given, runs on blocks of y covering it once each, complete (and rescaled, for int8).
  /// On `threads` threads (the layer's when 0).
  void product(const float* a, const float* b, float* y, int64_t m, int64_t n, int64_t k, bool a_on_grid,
               int threads = 0, const ops::GemmFinish* then = nullptr) const {
    if (threads == 0) threads = args_.num_threads;
    if (args_.tactic != TacticId::kGemmInt8) {
      // B is the model's own tensor when it is a constant (fetch): kept packed as it is, or kept
      // rounded in 16 bits when the layer rounds its panels to float16 or bfloat16.
      const bool model_b = b_.input < 0 && b_.model_values.defined();
      matmul(args_.tactic, a, b, y, m, n, k, threads, round_b_panels_ ? &round_panels_ : nullptr, b_.transposed,
             model_b ? &b_.model_values : nullptr, round_b_panels_ ? kept_format(precision_) : ops::Narrow::kNone,
             then);
      return;
    }
    const auto scale = [&](int64_t c) { return a_scale_ * b_scales_[static_cast<size_t>(c)]; };
    if (b_packed_.empty()) {
      CallBuffer<float> af(m * k);
      ops::parallel_chunks(threads, m * k, [&](int64_t i0, int64_t i1) {
        input_integers(std::span<const float>(a + i0, static_cast<size_t>(i1 - i0)), a_scale_, af.get() + i0,
                       a_on_grid);
      });
      // The sums come as floats into y: each block rescaled per column while in cache.
      const ops::Int8Finish finish = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) y[r * n + c] *= scale(c);
        }
        if (then != nullptr) (*then)(r0, r1, c0, c1);
      };
      matmul_int8_panels(af.get(), b_panels_, y, m, threads, &finish);
      return;
    }
    // Every element of these is written before it is read: no zero fill.
    CallBuffer<int32_t> acc(m * n);
    const ops::Int8Finish finish = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) y[r * n + c] = static_cast<float>(acc.get()[r * n + c]) * scale(c);
      }
      if (then != nullptr) (*then)(r0, r1, c0, c1);
    };
    CallBuffer<int8_t> aq(m * k);
    ops::parallel_chunks(threads, m * k, [&](int64_t i0, int64_t i1) {
      quantize_to_int8(std::span<const float>(a + i0, static_cast<size_t>(i1 - i0)), a_scale_, aq.get() + i0);
    });
    matmul_int8(aq.get(), nullptr, acc.get(), m, n, k, threads, b_packed_.data(), nullptr, &finish);
  }

  /// Points `data` at the operand's values: constants as prepared (rounded into `tmp` when they
  /// are the model's and their format changes them, unless the product rounds B's packed panels),
  /// runtime inputs rounded to tf32 and transposed when needed (into `tmp`).
  Status fetch(const Operand& op, std::span<const Tensor* const> inputs, bool trans, std::vector<float>& tmp,
               const float*& data, Shape& shape) const {
    if (op.input < 0) {
      shape = op.shape;
      data = op.data();
      if (op.round_at_run && !(&op == &b_ && round_b_panels_)) {
        tmp.assign(data, data + shape_numel(shape));
        round_operands_in_place(tmp, precision_);
        data = tmp.data();
      }
      return Status::OK();
    }
    const Tensor& t = *inputs[static_cast<size_t>(op.input)];
    shape = t.shape();
    data = t.data<float>();
    if (trans) {
      if (shape.size() != 2) {
        return tagged(
            args_, make_error(StatusCode::kShapeMismatch, "Gemm operands must be 2-D, got {}", shape_to_string(shape)));
      }
      tmp = transposed(data, shape[0], shape[1]);
      std::swap(shape[0], shape[1]);
      data = tmp.data();
    }
    if (precision_.tf32_products) {
      if (tmp.empty()) tmp.assign(data, data + shape_numel(shape));
      round_to_tf32_in_place(tmp);
      data = tmp.data();
    }
    return Status::OK();
  }

  /// The epilogue of an output of `n` columns: the fused biases summed per column.
  Result<EpilogueRuntime> epilogue_for(int64_t n) const {
    EpilogueRuntime epi = epilogue_;
    if (!bias_parts_.empty()) {
      epi.bias.assign(static_cast<size_t>(n), 0.0f);
      for (const std::vector<float>& part : bias_parts_) {
        if (part.size() != 1 && static_cast<int64_t>(part.size()) != n) {
          return tagged(args_, make_error(StatusCode::kShapeMismatch, "a bias of {} values does not fit {} columns",
                                          part.size(), n));
        }
        for (size_t i = 0; i < epi.bias.size(); ++i) epi.bias[i] += part.size() == 1 ? part[0] : part[i];
      }
    }
    return epi;
  }

  /// Adds the fused biases (per column), the residual and the activation, then rounds when the
  /// kernel rounds its output (EpilogueRuntime::round).
  Status finish(float* y, const Shape& out_shape, std::span<const Tensor* const> inputs) const {
    const int64_t n = out_shape.empty() ? 1 : out_shape.back();
    const int64_t total = shape_numel(out_shape);
    VN_ASSIGN_OR_RETURN(const EpilogueRuntime epi, epilogue_for(n));
    const float* residual = epi.residual >= 0 ? inputs[static_cast<size_t>(epi.residual)]->data<float>() : nullptr;
    apply_epilogue(epi, y, n == 0 ? 0 : total / n, n, 1, residual, args_.num_threads);
    return Status::OK();
  }

  /// Whether product() runs finish()'s epilogue on each block of y as it completes it: the int8
  /// product's blocks, and the float32-accumulating GEMM's (the other tactics sum all of y before
  /// any of it is complete).
  bool finishes_blocks() const { return args_.tactic == TacticId::kGemmInt8 || args_.tactic == TacticId::kGemmBlocked; }

  /// product() followed by the epilogue of finish(), each block of y finished while in cache (the
  /// same values: a pass of its own read all of y from memory again). Needs finishes_blocks().
  Status product_finished(const float* a, const float* b, float* y, int64_t m, int64_t n, int64_t k, bool a_on_grid,
                          std::span<const Tensor* const> inputs) const {
    VN_ASSIGN_OR_RETURN(const EpilogueRuntime epi, epilogue_for(n));
    const float* residual = epi.residual >= 0 ? inputs[static_cast<size_t>(epi.residual)]->data<float>() : nullptr;
    const ops::GemmFinish block = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* v = y + r * n + c0;
        if (!epi.bias.empty()) {
          for (int64_t c = c0; c < c1; ++c) v[c - c0] += epi.bias[static_cast<size_t>(c)];
        }
        apply_epilogue_segment(epi, v, c1 - c0, 0, false, residual ? residual + r * n + c0 : nullptr);
      }
    };
    const bool nothing = epi.bias.empty() && residual == nullptr && epi.activation.fn == ActivationFn::kNone &&
                         epi.round == DType::kFloat32;
    product(a, b, y, m, n, k, a_on_grid, 0, nothing ? nullptr : &block);
    return Status::OK();
  }

  Status check_residual(std::span<const Tensor* const> inputs, const Shape& out_shape) const {
    if (epilogue_.residual < 0) return Status::OK();
    const Shape& r = inputs[static_cast<size_t>(epilogue_.residual)]->shape();
    if (r != out_shape) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch, "residual {} does not match the product {}",
                                      shape_to_string(r), shape_to_string(out_shape)));
    }
    return Status::OK();
  }

  Status run_gemm(std::span<const Tensor* const> inputs, std::span<Tensor> outputs, const float* pa, const Shape& sa,
                  const float* pb, const Shape& sb, bool a_on_grid) const {
    if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0]) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch, "Gemm operands {} and {} do not multiply",
                                      shape_to_string(sa), shape_to_string(sb)));
    }
    const int64_t m = sa[0], k = sa[1], n = sb[1];
    const Shape out_shape{m, n};
    VN_RETURN_IF_ERROR(check_residual(inputs, out_shape));
    // Every path of product() writes all of y (k = 0 included): no zero fill.
    Result<Tensor> created = Tensor::create_for_overwrite(DType::kFloat32, out_shape);
    if (!created.ok()) return tagged(args_, created.status());
    Tensor y = std::move(*created);
    float* py = y.mutable_data<float>();
    if (finishes_blocks() && alpha_ == 1.0f && c_.empty()) {
      VN_RETURN_IF_ERROR(product_finished(pa, pb, py, m, n, k, a_on_grid, inputs));
      outputs[0] = std::move(y);
      return Status::OK();
    }
    product(pa, pb, py, m, n, k, a_on_grid);
    if (alpha_ != 1.0f) {
      for (int64_t i = 0; i < m * n; ++i) py[i] *= alpha_;
    }
    if (!c_.empty()) {
      if (!ops::broadcasts_to(c_shape_, out_shape)) {
        return tagged(args_, make_error(StatusCode::kShapeMismatch, "C {} does not broadcast to {}",
                                        shape_to_string(c_shape_), shape_to_string(out_shape)));
      }
      const Shape strides = ops::broadcast_strides(c_shape_, out_shape);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          py[r * n + c] += beta_ * c_[static_cast<size_t>(r * strides[0] + c * strides[1])];
        }
      }
    }
    VN_RETURN_IF_ERROR(finish(py, out_shape, inputs));
    outputs[0] = std::move(y);
    return Status::OK();
  }

  Status run_matmul(std::span<const Tensor* const> inputs, std::span<Tensor> outputs, const float* pa, Shape sa,
                    const float* pb, Shape sb, bool a_on_grid) const {
    if (sa.empty() || sb.empty()) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch, "MatMul operands must have rank >= 1, got {} and {}",
                                      shape_to_string(sa), shape_to_string(sb)));
    }
    // numpy's 1-D promotion: a vector on the left is a row, on the right a column; the added
    // dimension is removed from the result.
    const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
    if (a_vec) sa.insert(sa.begin(), 1);
    if (b_vec) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    if (sb[sb.size() - 2] != k) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch, "MatMul inner dimensions differ: {} and {}",
                                      shape_to_string(sa), shape_to_string(sb)));
    }
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    Result<Shape> batch = ops::broadcast_shapes(batch_a, batch_b);
    if (!batch.ok()) return tagged(args_, batch.status());
    Shape out_shape = *batch;
    if (!a_vec) out_shape.push_back(m);
    if (!b_vec) out_shape.push_back(n);
    VN_RETURN_IF_ERROR(check_residual(inputs, out_shape));
    // Every path of product() writes all of y (k = 0 included): no zero fill.
    Result<Tensor> created = Tensor::create_for_overwrite(DType::kFloat32, out_shape);
    if (!created.ok()) return tagged(args_, created.status());
    Tensor y = std::move(*created);
    float* py = y.mutable_data<float>();
    const int64_t batches = shape_numel(*batch);
    if (shape_numel(batch_b) == 1 && shape_numel(batch_a) == batches) {
      // B is one matrix shared by every batch (a linear layer over a sequence, [L, 1, d] x [d, n]):
      // A's batch folds into M, one large product instead of `batches` matrix-vector ones (the
      // reference does the same; the loop below took BERT's QKV projection 4.6x its time).
      if (finishes_blocks()) {
        VN_RETURN_IF_ERROR(product_finished(pa, pb, py, batches * m, n, k, a_on_grid, inputs));
        outputs[0] = std::move(y);
        return Status::OK();
      }
      product(pa, pb, py, batches * m, n, k, a_on_grid);
    } else {
      batched_products(pa, pb, py, batch_a, batch_b, *batch, m, n, k, a_on_grid);
    }
    VN_RETURN_IF_ERROR(finish(py, out_shape, inputs));
    outputs[0] = std::move(y);
    return Status::OK();
  }

  /// product() for each matrix of numpy.matmul's broadcast batch `batch` of A's and B's batches.
  void batched_products(const float* pa, const float* pb, float* py, const Shape& batch_a, const Shape& batch_b,
                        const Shape& batch, int64_t m, int64_t n, int64_t k, bool a_on_grid) const {
    const Shape stride_a = ops::broadcast_strides(batch_a, batch), stride_b = ops::broadcast_strides(batch_b, batch);
    std::vector<ops::GemmOperands> products;
    for (int64_t bi = 0; bi < shape_numel(batch); ++bi) {
      int64_t rest = bi, off_a = 0, off_b = 0;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t idx = rest % batch[d];
        rest /= batch[d];
        off_a += idx * stride_a[d];
        off_b += idx * stride_b[d];
      }
      products.push_back({pa + off_a * m * k, pb + off_b * k * n, py + bi * m * n});
    }
    if (args_.tactic == TacticId::kGemmBlocked && k > 0) {
      // Attention's many small products: spread over the threads rather than each one's work.
      ops::sgemm_batched(ops::GemmShape{false, false, m, n, k, k, n, n}, products, args_.num_threads,
                         round_b_panels_ ? &round_panels_ : nullptr);
      return;
    }
    // The other tactics likewise, one whole product per thread when there are enough of them
    // (each product's sums do not depend on its threads): the Whisper encoder's attention
    // products one after another, each on all 16 threads, took the engine 1.9x the reference's
    // time there.
    const int cap = capped_threads(args_.num_threads);
    const auto count = static_cast<int64_t>(products.size());
    if (cap > 1 && count >= cap) {
      parallel_for(cap, count, [&](int64_t i) {
        const ops::GemmOperands& op = products[static_cast<size_t>(i)];
        product(op.a, op.b, op.c, m, n, k, a_on_grid, 1);
      });
      return;
    }
    for (const ops::GemmOperands& op : products) product(op.a, op.b, op.c, m, n, k, a_on_grid);
  }

  KernelArgs args_;
  Precision precision_;
  // A constant B that the operand format changes (the model's float32 weights in an fp16 build)
  // is rounded as sgemm packs it, a panel at a time, rather than copied and rounded whole at
  // every run.
  bool round_b_panels_ = false;
  ops::PanelTransform round_panels_;
  bool gemm_ = false;
  bool trans_a_ = false, trans_b_ = false;
  float alpha_ = 1.0f, beta_ = 1.0f;
  Operand a_, b_;
  std::vector<float> c_;
  Shape c_shape_;
  std::vector<std::vector<float>> bias_parts_;  // each of one value or one per column
  EpilogueRuntime epilogue_;
  bool rounds_ = false;            // the epilogue rounds the output to the storage format
  std::vector<uint8_t> b_packed_;  // the same packed by ops::pack_int8_b (int8 only, igemm_available)
  Int8Panels b_panels_;            // the same in float panels' layout (int8 only, without igemm)
  std::vector<float> b_scales_;    // per column of B (int8 only)
  float a_scale_ = 1.0f;           // A's tensor scale (int8 only)
};

}  // namespace

Support gemm_applicable(const KernelArgs& args, std::span<const Tensor* const>) {
  if (args.tactic != TacticId::kGemmInt8) return {};
  const Node& n = anchor_node(args);
  if (n.inputs.size() < 2 || input_index(*args.spec, n.inputs[0]) < 0) {
    return {false, "int8 GEMM quantizes a runtime A per tensor; A here is a constant"};
  }
  auto b = args.constants->find(n.inputs[1]);
  if (b == args.constants->end()) return {false, "int8 GEMM needs constant weights B; B here is a runtime tensor"};
  if (b->second.dtype() != DType::kFloat32 || b->second.rank() != 2) {
    return {false, fmt::format("int8 GEMM needs a 2-D float32 B, got {} {}", dtype_name(b->second.dtype()),
                               shape_to_string(b->second.shape()))};
  }
  return {};
}

void matmul_int8(const int8_t* a, const int8_t* b, int32_t* y, int64_t m, int64_t n, int64_t k, int threads,
                 const uint8_t* packed_b, const int32_t* a_offsets, const ops::Int8Finish* finish) {
  if (m == 0 || n == 0) return;
  if (ops::igemm_available()) {
    // B's packed copy is a per-call buffer (an im2col matrix of megabytes at every call).
    CallBuffer<uint8_t> packed(packed_b == nullptr ? ops::packed_int8_b_size(k, n) : 0);
    if (packed_b == nullptr) {
      ops::pack_int8_b(k, n, b, n, packed.get(), threads);
      packed_b = packed.get();
    }
    // Only VNNI's layout takes the offsets back.
    std::vector<int32_t> offsets;
    if (a_offsets == nullptr && ops::igemm_uses_vnni()) {
      offsets.resize(static_cast<size_t>(m));
      ops::int8_row_offsets(m, k, a, k, offsets.data());
      a_offsets = offsets.data();
    }
    ops::igemm_packed(m, n, k, a, k, a_offsets, packed_b, y, n, threads, finish);
    return;
  }
  detail::matmul_int8_sliced(a, b, y, m, n, k, threads);
  if (finish != nullptr) (*finish)(0, m, 0, n);
}

void detail::matmul_int8_sliced(const int8_t* a, const int8_t* b, int32_t* y, int64_t m, int64_t n, int64_t k,
                                int threads) {
  if (m == 0 || n == 0) return;
  std::fill_n(y, m * n, 0);
  if (k == 0) return;
  // The product runs on sgemm over slices of k kFloatExactDepth deep, and each slice's exact sums
  // are added in int32.
  constexpr int64_t kExactDepth = kFloatExactDepth;
  std::vector<float> af(static_cast<size_t>(m * k)), bf(static_cast<size_t>(k * n)), part(static_cast<size_t>(m * n));
  std::copy_n(a, af.size(), af.begin());
  std::copy_n(b, bf.size(), bf.begin());
  for (int64_t k0 = 0; k0 < k; k0 += kExactDepth) {
    const int64_t kc = std::min(kExactDepth, k - k0);
    ops::sgemm(ops::GemmShape{false, false, m, n, kc, k, n, n}, af.data() + k0, bf.data() + k0 * n, part.data(),
               threads);
    for (int64_t i = 0; i < m * n; ++i) y[i] += static_cast<int32_t>(part[static_cast<size_t>(i)]);
  }
}

void matmul(TacticId tactic, const float* a, const float* b, float* y, int64_t m, int64_t n, int64_t k, int threads,
            const ops::PanelTransform* transform_b, bool b_transposed, const Tensor* b_constant, ops::Narrow kept_as,
            const ops::GemmFinish* finish) {
  MatrixMap<float> ym(y, m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    ym.setZero();
    if (finish != nullptr) (*finish)(0, m, 0, n);
    return;
  }
  // Slice [k0, k0 + kc) of the inner dimension: A's columns and B's rows, strides unchanged.
  const auto slice = [&](int64_t k0, int64_t kc, float* out, const ops::GemmFinish* done) {
    ops::sgemm(ops::GemmShape{false, b_transposed, m, n, kc, k, b_transposed ? k : n, n}, a + k0,
               b_transposed ? b + k0 : b + k0 * n, out, threads, transform_b, b_constant, kept_as, done);
  };
  switch (tactic) {
    case TacticId::kGemmSplitK: {
      const int64_t splits = std::min(kSplits, k);
      const int64_t depth = (k + splits - 1) / splits;
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> part(m, n);
      ym.setZero();
      for (int64_t k0 = 0; k0 < k; k0 += depth) {
        slice(k0, std::min(depth, k - k0), part.data(), nullptr);
        ym += part;
      }
      if (finish != nullptr) (*finish)(0, m, 0, n);
      return;
    }
    case TacticId::kGemmK32F16Acc: {
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> part(m, n);
      ym.setZero();
      for (int64_t k0 = 0; k0 < k; k0 += kSliceDepth) {
        slice(k0, std::min(kSliceDepth, k - k0), part.data(), nullptr);
        ym += part;
        round_in_place(std::span<float>(y, static_cast<size_t>(m * n)), DType::kFloat16);
      }
      if (finish != nullptr) (*finish)(0, m, 0, n);
      return;
    }
    default:
      slice(0, k, y, finish);
      return;
  }
}

Result<std::unique_ptr<LayerKernel>> make_gemm_kernel(const KernelArgs& args) {
  auto kernel = std::make_unique<GemmKernel>(args);
  VN_RETURN_IF_ERROR(kernel->prepare());
  return std::unique_ptr<LayerKernel>(std::move(kernel));
}

}  // namespace vn::engine::kernels
