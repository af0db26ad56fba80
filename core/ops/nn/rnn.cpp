// SPDX-License-Identifier: Apache-2.0
// Recurrent layers: RNN, GRU and LSTM (one layer each, ONNX "Recurrent" section). One engine
// serves all three: per direction and time step it computes the gate pre-activations of the
// whole batch with two GEMMs (X_t·W^T and H_{t-1}·R^T) and applies the cell's equations.
//
// Shared semantics:
// - direction forward, reverse or bidirectional (forward first in every output's direction axis);
// - layout 0 (time-major) or 1 (batch-major; opset 14 and later);
// - sequence_lens: a sequence of length L reads time steps [0, L) (a reverse pass starts at L-1),
//   Y is zero past L, and Y_h / Y_c hold the state after the last step it read. A length of 0
//   gives zero final states, as ONNX Runtime does;
// - clip bounds every activation input to [-clip, clip], including the cell state fed to LSTM's h
//   (the carried state itself is not clipped), again as ONNX Runtime does;
// - activation lists name one function per gate function (f for RNN; f, g for GRU; f, g, h for
//   LSTM), per direction. activation_alpha and activation_beta are consumed in list order by the
//   functions that take them; a missing value takes the default of the same-named ONNX op
//   (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1, ThresholdedRelu 1, Affine 1/0, ScaledTanh 1/1).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/sgemm_driver.h"
#include "core/ops/vector_math.h"

namespace vn::ops {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
size_t function_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

// ***** Activation functions *****

enum class Fn {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct FnInfo {
  const char* name;
  Fn fn;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  float alpha;
  float beta;
};

constexpr FnInfo kFunctions[] = {
    {"Relu", Fn::kRelu, 0, 0.0f, 0.0f},
    {"Tanh", Fn::kTanh, 0, 0.0f, 0.0f},
    {"Sigmoid", Fn::kSigmoid, 0, 0.0f, 0.0f},
    {"Affine", Fn::kAffine, 2, 1.0f, 0.0f},
    {"LeakyRelu", Fn::kLeakyRelu, 1, 0.01f, 0.0f},
    {"ThresholdedRelu", Fn::kThresholdedRelu, 1, 1.0f, 0.0f},
    {"ScaledTanh", Fn::kScaledTanh, 2, 1.0f, 1.0f},
    {"HardSigmoid", Fn::kHardSigmoid, 2, 0.2f, 0.5f},
    {"Elu", Fn::kElu, 1, 1.0f, 0.0f},
    {"Softsign", Fn::kSoftsign, 0, 0.0f, 0.0f},
    {"Softplus", Fn::kSoftplus, 0, 0.0f, 0.0f},
};

struct Activation {
  Fn fn = Fn::kTanh;
  double alpha = 0.0;
  double beta = 0.0;

  template <typename T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    switch (fn) {
      case Fn::kRelu:
        return x > T(0) ? x : T(0);
      case Fn::kTanh:
        return tanh(x);
      case Fn::kSigmoid: {
        // Split form: exp of a non-positive argument never overflows. (float32 gates take
        // vmath::sigmoid's arrays instead: Recurrence::apply.)
        if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
        const T e = std::exp(x);
        return e / (T(1) + e);
      }
      case Fn::kAffine:
        return a * x + b;
      case Fn::kLeakyRelu:
        return x >= T(0) ? x : a * x;
      case Fn::kThresholdedRelu:
        return x > a ? x : T(0);
      case Fn::kScaledTanh:
        return a * tanh(b * x);
      case Fn::kHardSigmoid:
        return std::clamp(a * x + b, T(0), T(1));
      case Fn::kElu:
        return x >= T(0) ? x : a * std::expm1(x);  // expm1 keeps precision near 0
      case Fn::kSoftsign:
        return x / (T(1) + std::abs(x));
      case Fn::kSoftplus:
        // log(1 + e^x) without overflow for large x.
        return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }

  /// tanh as the Tanh op computes it: vmath's in float32.
  template <typename T>
  static T tanh(T x) {
    if constexpr (std::is_same_v<T, float>) {
      return vmath::tanh(x);
    } else {
      return std::tanh(x);
    }
  }
};

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

/// The activations of every direction, in the order of the `activations` attribute (defaults when
/// absent). Names match case-insensitively, as in ONNX Runtime.
Result<std::vector<Activation>> read_activations(const KernelContext& ctx, Cell cell, int64_t num_directions) {
  static const char* const kDefaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const size_t per_direction = function_count(cell);
  const size_t expected = per_direction * static_cast<size_t>(num_directions);
  std::vector<std::string> names = ctx.attr_strings("activations");
  if (names.empty()) {
    for (int64_t d = 0; d < num_directions; ++d) {
      for (size_t f = 0; f < per_direction; ++f) names.emplace_back(kDefaults[static_cast<int>(cell)][f]);
    }
  }
  if (names.size() != expected) {
    return ctx.fail(StatusCode::kInvalidModel, "activations lists {} functions, expected {} ({} per direction)",
                    names.size(), expected, per_direction);
  }
  const std::vector<float> alphas = ctx.attr_floats("activation_alpha");
  const std::vector<float> betas = ctx.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const std::string& name : names) {
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFunctions) {
      if (same_name(f.name, name)) info = &f;
    }
    if (!info) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "activation '{}' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                      "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus",
                      name);
    }
    Activation a{info->fn, info->alpha, info->beta};
    if (info->params >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (info->params >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    acts.push_back(a);
  }
  return acts;
}

// ***** Shapes and validation *****

struct Config {
  Cell cell = Cell::kRnn;
  int64_t layout = 0;
  int64_t num_directions = 1;
  bool reverse = false;  // single reverse direction
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  std::optional<double> clip;
  bool linear_before_reset = false;
  bool input_forget = false;
  std::vector<Activation> acts;
  std::vector<int64_t> lengths;  // per batch entry
};

Status check_shape(const KernelContext& ctx, const char* what, const Tensor& t, const Shape& expected) {
  if (t.shape() != expected) {
    return ctx.fail(StatusCode::kShapeMismatch, "input {} has shape {}, expected {}", what, shape_to_string(t.shape()),
                    shape_to_string(expected));
  }
  return Status::OK();
}

/// Reads attributes and checks every input's shape and dtype. Inputs: X, W, R, B, sequence_lens,
/// initial_h, then for LSTM initial_c and P.
Result<Config> configure(const KernelContext& ctx, Cell cell, int64_t layout) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  Config c;
  c.cell = cell;
  c.layout = layout;
  if (layout != 0 && layout != 1) return ctx.fail(StatusCode::kInvalidModel, "layout must be 0 or 1, got {}", layout);
  const std::string direction = ctx.attr_string("direction", "forward");
  if (direction == "bidirectional") {
    c.num_directions = 2;
  } else if (direction == "reverse") {
    c.reverse = true;
  } else if (direction != "forward") {
    return ctx.fail(StatusCode::kInvalidModel, "direction '{}' is not forward, reverse or bidirectional", direction);
  }
  if (ctx.has_attr("clip")) {
    const float clip = ctx.attr_float("clip", 0.0f);
    if (!(clip >= 0.0f)) return ctx.fail(StatusCode::kInvalidModel, "clip must be non-negative, got {}", clip);
    c.clip = clip;
  }
  c.linear_before_reset = cell == Cell::kGru && ctx.attr_int("linear_before_reset", 0) != 0;
  c.input_forget = cell == Cell::kLstm && ctx.attr_int("input_forget", 0) != 0;
  VN_ASSIGN_OR_RETURN(c.acts, read_activations(ctx, cell, c.num_directions));

  const Tensor& x = ctx.input(0);
  const Tensor& r = ctx.input(2);
  if (x.rank() != 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "input X must be 3-D, got shape {}", shape_to_string(x.shape()));
  }
  c.seq = layout == 0 ? x.dim(0) : x.dim(1);
  c.batch = layout == 0 ? x.dim(1) : x.dim(0);
  c.input = x.dim(2);
  if (r.rank() != 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "input R must be 3-D, got shape {}", shape_to_string(r.shape()));
  }
  c.hidden = r.dim(2);
  if (ctx.has_attr("hidden_size") && ctx.attr_int("hidden_size", 0) != c.hidden) {
    return ctx.fail(StatusCode::kShapeMismatch, "hidden_size is {} but R has shape {}", ctx.attr_int("hidden_size", 0),
                    shape_to_string(r.shape()));
  }
  const int64_t gates = gate_count(cell) * c.hidden;
  const Shape state_shape =
      layout == 0 ? Shape{c.num_directions, c.batch, c.hidden} : Shape{c.batch, c.num_directions, c.hidden};
  struct Operand {
    size_t index;
    const char* name;
    Shape shape;
  };
  std::vector<Operand> operands = {{1, "W", {c.num_directions, gates, c.input}},
                                   {2, "R", {c.num_directions, gates, c.hidden}},
                                   {3, "B", {c.num_directions, 2 * gates}},
                                   {5, "initial_h", state_shape}};
  if (cell == Cell::kLstm) {
    operands.push_back({6, "initial_c", state_shape});
    operands.push_back({7, "P", {c.num_directions, 3 * c.hidden}});
  }
  for (const Operand& o : operands) {
    if (!ctx.has_input(o.index)) continue;
    const Tensor& t = ctx.input(o.index);
    if (t.dtype() != x.dtype()) {
      return ctx.fail(StatusCode::kInvalidModel, "input {} is {} but X is {}", o.name, dtype_name(t.dtype()),
                      dtype_name(x.dtype()));
    }
    VN_RETURN_IF_ERROR(check_shape(ctx, o.name, t, o.shape));
  }

  c.lengths.assign(static_cast<size_t>(c.batch), c.seq);
  if (ctx.has_input(4)) {
    VN_ASSIGN_OR_RETURN(c.lengths, input_int64s(ctx, 4, "sequence_lens"));
    if (static_cast<int64_t>(c.lengths.size()) != c.batch || ctx.input(4).rank() != 1) {
      return ctx.fail(StatusCode::kShapeMismatch, "input sequence_lens has shape {}, expected ({})",
                      shape_to_string(ctx.input(4).shape()), c.batch);
    }
    for (int64_t len : c.lengths) {
      if (len < 0 || len > c.seq) {
        return ctx.fail(StatusCode::kInvalidModel, "sequence length {} is outside [0, {}]", len, c.seq);
      }
    }
  }
  return c;
}

// ***** The recurrence *****

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;

template <typename T>
class Recurrence {
 public:
  Recurrence(const KernelContext& ctx, const Config& c) : ctx_(ctx), c_(c) {}

  /// Runs every direction and writes the requested outputs (null when not requested).
  void run(Tensor* y, Tensor* y_h, Tensor* y_c) {
    for (int64_t d = 0; d < c_.num_directions; ++d) direction(d, y, y_h, y_c);
  }

 private:
  // Offsets of one hidden-size row in the layout's tensors.
  int64_t x_offset(int64_t t, int64_t b) const {
    return (c_.layout == 0 ? t * c_.batch + b : b * c_.seq + t) * c_.input;
  }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (c_.layout == 0 ? (t * c_.num_directions + d) * c_.batch + b : (b * c_.seq + t) * c_.num_directions + d) *
           c_.hidden;
  }
  int64_t state_offset(int64_t d, int64_t b) const {
    return (c_.layout == 0 ? d * c_.batch + b : b * c_.num_directions + d) * c_.hidden;
  }

  /// y (rows x g) = a (rows x cols) times the transpose of m (g x cols), all row-major: float32
  /// through sgemm (the same sums at any thread count; m's packed panels kept from run to run when
  /// it lies in the model's constant `constant`), the other types through Eigen.
  void times_transposed(const T* a, int64_t rows, int64_t cols, const T* m, int64_t g, T* y,
                        const Tensor* constant) const {
    if constexpr (std::is_same_v<T, float>) {
      sgemm(GemmShape{false, true, rows, g, cols, cols, cols, g}, a, m, y, ctx_.num_threads(), nullptr, constant);
    } else {
      Eigen::Map<Mat<T>>(y, rows, g).noalias() =
          Eigen::Map<const Mat<T>>(a, rows, cols) * Eigen::Map<const Mat<T>>(m, g, cols).transpose();
    }
  }

  void apply(Eigen::Ref<Mat<T>> m, const Activation& f) const {
    const T bound = c_.clip ? static_cast<T>(*c_.clip) : T(0);
    const bool clip = c_.clip.has_value();
    if constexpr (std::is_same_v<T, float>) {
      // Sigmoid and Tanh in float32 run over whole rows in vmath's arrays (the Sigmoid and Tanh
      // ops' bits): one at a time through glibc they were a sixth of an LSTM's run.
      if (f.fn == Fn::kTanh || f.fn == Fn::kSigmoid) {
        if (clip) m = m.unaryExpr([&](T v) { return std::clamp(v, -bound, bound); });
        for (Eigen::Index r = 0; r < m.rows() && m.cols() > 0; ++r) {
          float* row = &m(r, 0);
          if (f.fn == Fn::kTanh) {
            vmath::tanh(row, row, m.cols());
          } else {
            vmath::sigmoid(row, row, m.cols());
          }
        }
        return;
      }
    }
    m = m.unaryExpr([&](T v) { return f(clip ? std::clamp(v, -bound, bound) : v); });
  }

  Mat<T> initial_state(size_t input, int64_t d) const {
    Mat<T> s = Mat<T>::Zero(c_.batch, c_.hidden);
    if (!ctx_.has_input(input)) return s;
    const T* src = ctx_.input(input).template data<T>();
    for (int64_t b = 0; b < c_.batch; ++b) {
      s.row(b) = Eigen::Map<const Row<T>>(src + state_offset(d, b), c_.hidden);
    }
    return s;
  }

  void direction(int64_t d, Tensor* y, Tensor* y_h, Tensor* y_c) {
    const int64_t H = c_.hidden;
    const int64_t G = gate_count(c_.cell) * H;
    const bool reverse = c_.reverse || d == 1;
    const Activation* acts = &c_.acts[static_cast<size_t>(d) * function_count(c_.cell)];
    const ConstMatrixMap<T> w(ctx_.input(1).template data<T>() + d * G * c_.input, G, c_.input);
    const ConstMatrixMap<T> r(ctx_.input(2).template data<T>() + d * G * H, G, H);
    Row<T> wb = Row<T>::Zero(G), rb = Row<T>::Zero(G);
    if (ctx_.has_input(3)) {
      const T* bias = ctx_.input(3).template data<T>() + d * 2 * G;
      wb = Eigen::Map<const Row<T>>(bias, G);
      rb = Eigen::Map<const Row<T>>(bias + G, G);
    }
    Row<T> p = Row<T>::Zero(3 * H);  // LSTM peepholes i, o, f
    if (c_.cell == Cell::kLstm && ctx_.has_input(7)) {
      p = Eigen::Map<const Row<T>>(ctx_.input(7).template data<T>() + d * 3 * H, 3 * H);
    }

    Mat<T> h = initial_state(5, d);
    Mat<T> cs = c_.cell == Cell::kLstm ? initial_state(6, d) : Mat<T>();
    // The input's share of every step's gates, X W^T + Wb, in one product before the recurrence:
    // row i belongs to X's row i (x_offset / input), whatever the layout.
    Mat<T> xw(c_.seq * c_.batch, G);
    times_transposed(ctx_.input(0).template data<T>(), c_.seq * c_.batch, c_.input, w.data(), G, xw.data(),
                     ctx_.constant_input(1));
    xw.rowwise() += wb;
    Mat<T> gates(c_.batch, G);
    Mat<T> hr(c_.batch, G);
    const int64_t longest = c_.batch ? *std::max_element(c_.lengths.begin(), c_.lengths.end()) : 0;
    for (int64_t s = 0; s < longest; ++s) {
      for (int64_t b = 0; b < c_.batch; ++b) {
        const int64_t len = c_.lengths[static_cast<size_t>(b)];
        // Past its length a sequence's state is kept; its gates are computed from a zero input.
        gates.row(b) = s < len ? Row<T>(xw.row(x_offset(reverse ? len - 1 - s : s, b) / c_.input)) : wb;
      }
      Mat<T> next_h;
      Mat<T> next_c;
      if (c_.cell == Cell::kRnn) {
        times_transposed(h.data(), c_.batch, H, r.data(), G, hr.data(), ctx_.constant_input(2));
        gates += hr;
        gates.rowwise() += rb;
        apply(gates, acts[0]);
        next_h = gates;
      } else if (c_.cell == Cell::kGru) {
        next_h = gru_step(gates, h, r, rb, acts);
      } else {
        times_transposed(h.data(), c_.batch, H, r.data(), G, hr.data(), ctx_.constant_input(2));
        gates += hr;
        gates.rowwise() += rb;
        lstm_step(gates, cs, p, acts, next_h, next_c);
      }
      for (int64_t b = 0; b < c_.batch; ++b) {
        const int64_t len = c_.lengths[static_cast<size_t>(b)];
        if (s >= len) continue;
        h.row(b) = next_h.row(b);
        if (c_.cell == Cell::kLstm) cs.row(b) = next_c.row(b);
        if (y) {
          Eigen::Map<Row<T>>(y->template mutable_data<T>() + y_offset(reverse ? len - 1 - s : s, d, b), H) = h.row(b);
        }
      }
    }
    for (int64_t b = 0; b < c_.batch; ++b) {
      const bool ran = c_.lengths[static_cast<size_t>(b)] > 0;
      if (y_h) {
        Eigen::Map<Row<T>> out(y_h->template mutable_data<T>() + state_offset(d, b), H);
        if (ran) out = h.row(b);
      }
      if (y_c) {
        Eigen::Map<Row<T>> out(y_c->template mutable_data<T>() + state_offset(d, b), H);
        if (ran) out = cs.row(b);
      }
    }
  }

  // GRU, gates z, r, h: the reset gate applies to H_{t-1} before the recurrence GEMM
  // (linear_before_reset = 0) or to its result (linear_before_reset = 1).
  Mat<T> gru_step(const Mat<T>& gates, const Mat<T>& h, const ConstMatrixMap<T>& r, const Row<T>& rb,
                  const Activation* acts) const {
    const int64_t H = c_.hidden;
    Mat<T> zr = h * r.topRows(2 * H).transpose();
    zr.rowwise() += rb.head(2 * H);
    Mat<T> z = gates.leftCols(H) + zr.leftCols(H);
    Mat<T> reset = gates.middleCols(H, H) + zr.rightCols(H);
    apply(z, acts[0]);
    apply(reset, acts[0]);
    Mat<T> candidate = gates.rightCols(H);
    if (c_.linear_before_reset) {
      Mat<T> hr = h * r.bottomRows(H).transpose();
      hr.rowwise() += rb.tail(H);
      candidate += (reset.array() * hr.array()).matrix();
    } else {
      const Mat<T> gated = (reset.array() * h.array()).matrix();
      candidate.noalias() += gated * r.bottomRows(H).transpose();
      candidate.rowwise() += rb.tail(H);
    }
    apply(candidate, acts[1]);
    return ((T(1) - z.array()) * candidate.array() + z.array() * h.array()).matrix();
  }

  // LSTM, gates i, o, f, c; peepholes read C_{t-1} for i and f and C_t for o.
  void lstm_step(const Mat<T>& gates, const Mat<T>& cs, const Row<T>& p, const Activation* acts, Mat<T>& next_h,
                 Mat<T>& next_c) const {
    const int64_t H = c_.hidden;
    Mat<T> in = gates.leftCols(H);
    in.array() += cs.array().rowwise() * p.head(H).array();
    apply(in, acts[0]);
    Mat<T> forget;
    if (c_.input_forget) {
      forget = (T(1) - in.array()).matrix();
    } else {
      forget = gates.middleCols(2 * H, H);
      forget.array() += cs.array().rowwise() * p.tail(H).array();
      apply(forget, acts[0]);
    }
    Mat<T> cell = gates.rightCols(H);
    apply(cell, acts[1]);
    next_c = (forget.array() * cs.array() + in.array() * cell.array()).matrix();
    Mat<T> out = gates.middleCols(H, H);
    out.array() += next_c.array().rowwise() * p.segment(H, H).array();
    apply(out, acts[0]);
    Mat<T> squashed = next_c;
    apply(squashed, acts[2]);
    next_h = (out.array() * squashed.array()).matrix();
  }

  const KernelContext& ctx_;
  const Config& c_;
};

Status recurrent(KernelContext& ctx, Cell cell, int64_t layout) {
  VN_ASSIGN_OR_RETURN(const Config c, configure(ctx, cell, layout));
  const DType dtype = ctx.input(0).dtype();
  const Shape y_shape = layout == 0 ? Shape{c.seq, c.num_directions, c.batch, c.hidden}
                                    : Shape{c.batch, c.seq, c.num_directions, c.hidden};
  const Shape state_shape =
      layout == 0 ? Shape{c.num_directions, c.batch, c.hidden} : Shape{c.batch, c.num_directions, c.hidden};
  return dispatch_types(FloatTypes{}, ctx, dtype, [&]<typename T>() -> Status {
    Tensor* y = nullptr;
    Tensor* y_h = nullptr;
    Tensor* y_c = nullptr;
    if (output_requested(ctx, 0)) {
      VN_ASSIGN_OR_RETURN(y, ctx.allocate_output(0, dtype, y_shape));
    }
    if (output_requested(ctx, 1)) {
      VN_ASSIGN_OR_RETURN(y_h, ctx.allocate_output(1, dtype, state_shape));
    }
    if (cell == Cell::kLstm && output_requested(ctx, 2)) {
      VN_ASSIGN_OR_RETURN(y_c, ctx.allocate_output(2, dtype, state_shape));
    }
    Recurrence<T>(ctx, c).run(y, y_h, y_c);
    return Status::OK();
  });
}

// Opset 7 has no layout attribute; 14 adds it.
Status rnn_7(KernelContext& ctx) { return recurrent(ctx, Cell::kRnn, 0); }
Status rnn_14(KernelContext& ctx) { return recurrent(ctx, Cell::kRnn, ctx.attr_int("layout", 0)); }
Status gru_7(KernelContext& ctx) { return recurrent(ctx, Cell::kGru, 0); }
Status gru_14(KernelContext& ctx) { return recurrent(ctx, Cell::kGru, ctx.attr_int("layout", 0)); }
Status lstm_7(KernelContext& ctx) { return recurrent(ctx, Cell::kLstm, 0); }
Status lstm_14(KernelContext& ctx) { return recurrent(ctx, Cell::kLstm, ctx.attr_int("layout", 0)); }

}  // namespace

void register_rnn_ops(OpRegistry& registry) {
  registry.add("RNN", 7, rnn_7);
  // Version 22 of each only added bfloat16.
  for (int64_t v : {14, 22}) registry.add("RNN", v, rnn_14);
  registry.add("GRU", 7, gru_7);
  for (int64_t v : {14, 22}) registry.add("GRU", v, gru_14);
  registry.add("LSTM", 7, lstm_7);
  for (int64_t v : {14, 22}) registry.add("LSTM", v, lstm_14);
}

}  // namespace vn::ops
