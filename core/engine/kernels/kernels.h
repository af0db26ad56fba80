// SPDX-License-Identifier: Apache-2.0
// The tactic implementations, one file per layer kind, behind one factory and one applicability
// check per kind (dispatched by core/engine/layer.cpp), plus the helpers they share.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "core/engine/layer.h"
#include "core/ops/igemm.h"
#include "core/ops/nn/conv.h"
#include "core/ops/sgemm_driver.h"

namespace vn::engine::kernels {

// ---- Per-kind factories and applicability (see make_layer_kernel / tactic_applicable) ---------

Support conv_applicable(const KernelArgs& args, std::span<const Tensor* const> inputs);
Result<std::unique_ptr<LayerKernel>> make_conv_kernel(const KernelArgs& args);

/// gemm__int8_i32acc needs a runtime A and a constant 2-D float32 B; the other tactics run any
/// Gemm/MatMul.
Support gemm_applicable(const KernelArgs& args, std::span<const Tensor* const> inputs);
Result<std::unique_ptr<LayerKernel>> make_gemm_kernel(const KernelArgs& args);

Result<std::unique_ptr<LayerKernel>> make_softmax_kernel(const KernelArgs& args);
Result<std::unique_ptr<LayerKernel>> make_layernorm_kernel(const KernelArgs& args);
Result<std::unique_ptr<LayerKernel>> make_reduce_kernel(const KernelArgs& args);
Result<std::unique_ptr<LayerKernel>> make_activation_kernel(const KernelArgs& args);
Result<std::unique_ptr<LayerKernel>> make_pool_kernel(const KernelArgs& args);
Result<std::unique_ptr<LayerKernel>> make_eltwise_kernel(const KernelArgs& args);
/// Runs the layer's nodes one by one with the reference kernels (any kind, any dtype).
Result<std::unique_ptr<LayerKernel>> make_reference_kernel(const KernelArgs& args);

// ---- Shared helpers ---------------------------------------------------------------------------

/// The layer's first node, whose attributes describe the main op.
const Node& anchor_node(const KernelArgs& args);
/// `status` tagged with the anchor node.
Status tagged(const KernelArgs& args, Status status);
/// Position of runtime tensor `name` in spec.inputs, or -1.
int input_index(const LayerSpec& spec, const std::string& name);
/// The constant `name` as float32 values rounded to `format` (a storage format or, when
/// `tf32` is set, tf32). kInvalidModel when it is missing or not float32.
Result<std::vector<float>> constant_floats(const KernelArgs& args, const std::string& name, DType format,
                                           bool tf32 = false);

/// y (m x n) = a (m x k) · b (k x n), all row-major, on up to `threads` threads, computed as
/// `tactic` does: kGemmBlocked (one GEMM, float32 accumulation: the reference's sgemm, so its sums
/// are the reference's), kGemmSplitK (4 partial GEMMs over slices of k, summed at the end) or
/// kGemmK32F16Acc (32-deep slices added into a float16 accumulator). Other tactics are a
/// programming error. `transform_b`, when given, is applied to B's values as they are packed
/// (ops::PanelTransform). With `b_transposed`, b holds B's transpose (n x k, row-major): a Gemm's
/// transB weights, read where they lie. `b_constant`, when b lies in that constant of the model,
/// lets the products keep B packed (ops::packed_weights): as it is without a transform, rounded
/// in `kept_as` with one that rounds to that 16-bit format (kept_format). `finish`, when given,
/// runs on blocks of y covering it once each (ops::GemmFinish): as the product completes them
/// under kGemmBlocked, on all of y at the end under the others.
void matmul(TacticId tactic, const float* a, const float* b, float* y, int64_t m, int64_t n, int64_t k, int threads = 1,
            const ops::PanelTransform* transform_b = nullptr, bool b_transposed = false,
            const Tensor* b_constant = nullptr, ops::Narrow kept_as = ops::Narrow::kNone,
            const ops::GemmFinish* finish = nullptr);

/// The 16-bit format that round_operands_in_place gives under `precision` (float16, bfloat16), in
/// which the products keep a layer's rounded constant weights packed; kNone for the others
/// (float32, tf32, int8).
ops::Narrow kept_format(const Precision& precision);

/// Sums of up to this many int8 products are exact in float32 in any order: each product is at
/// most 2^14 in magnitude, every partial sum at most 2^24.
inline constexpr int64_t kFloatExactDepth = 1024;

/// y (m x n, int32) = a (m x k) · b (k x n), int8 operands, all row-major, summed exactly in int32
/// (k up to 2^17), on up to `threads` threads. Where ops::igemm_available(), the product runs on
/// ops::igemm_packed (VNNI or AVX2): `packed_b`, when not null, is b already packed by
/// ops::pack_int8_b (b is then not read), and `a_offsets` ops::int8_row_offsets of a (computed here
/// when null and VNNI needs them). Elsewhere b is read and those two are ignored. `finish`, when
/// given, runs on blocks of y covering it once each, as ops::igemm_packed says (one block, all of
/// y, where igemm_packed is not available).
void matmul_int8(const int8_t* a, const int8_t* b, int32_t* y, int64_t m, int64_t n, int64_t k, int threads = 1,
                 const uint8_t* packed_b = nullptr, const int32_t* a_offsets = nullptr,
                 const ops::Int8Finish* finish = nullptr);
/// A constant int8 B (k x n) for builds without the int8 product (ops::igemm_available), kept
/// once in int8 in sgemm.h's panel layout (k x ops::kPackCols values per panel, columns past n
/// zero).
struct Int8Panels {
  int64_t k = 0, n = 0;
  std::vector<int8_t> values;
};
/// B (k x n, row-major) as Int8Panels.
Int8Panels pack_int8_panels(const int8_t* b, int64_t k, int64_t n);
/// y (m x n) = a (m x b.k, rows b.k apart: the integers of an int8 grid as floats,
/// quantize_to_float) · B, the exact int32 sums converted to float32 (exact up to 2^24): products
/// of slices up to kFloatExactDepth deep on the float32 kernel, B's panels widened a few at a time,
/// the slices added in int32 (one slice is written as the float kernel sums it). On up to
/// `threads` threads (the result does not depend on their number); `finish`, when given, runs on
/// blocks of y (a range of rows and one of columns) covering it once each, each once its sums are
/// complete, and may rewrite them.
void matmul_int8_panels(const float* a, const Int8Panels& b, float* y, int64_t m, int threads = 1,
                        const ops::Int8Finish* finish = nullptr);

/// The int8 weights of a one-group convolution summing more than kFloatExactDepth products, for
/// layers that do not take the int8 product (dilated ones, or builds without it): its input
/// channels cut into even slices of at most kFloatExactDepth products per sum, each slice's
/// weights (output channel by output channel) as floats.
struct Int8ConvSlices {
  struct Slice {
    int64_t channel0 = 0, channels = 0;
    /// m x (channels x taps) float32: a constant of the layer, so that the float32 convolution
    /// keeps it packed from call to call (ops::conv_float32's w_constant).
    Tensor weights;
  };
  std::vector<Slice> slices;
};
/// `w` (m x channels x taps, int8) in slices; none when one tap's products already number more
/// than kFloatExactDepth.
Int8ConvSlices slice_int8_conv_weights(const std::vector<int8_t>& w, int64_t m, int64_t channels, int64_t taps);
/// y = the int8 convolution of x (batch x channels planes of g.in: the integers of an int8 grid
/// as floats) with the sliced weights, exact: each slice's float32 convolution sums exactly, the
/// slices add in int32, and y holds float32 of the whole sums, as the int8 kernels give them.
/// `finish` runs on every block of y once it holds them (ops::conv_float32's blocks, of the last
/// slice), from any of up to `threads` threads.
void conv_int8_slices(const ops::WindowGeometry& g, int64_t batch, int64_t channels, int64_t m, const float* x,
                      const Int8ConvSlices& weights, float* y, int threads, const ops::ConvFinish& finish);

/// A buffer of `count` T for one call of a kernel (an int8 product's int32 sums, a quantized copy
/// of its input), not zeroed: a tensor's storage, whose large buffers come from mappings kept for
/// reuse. A heap buffer of 4 MiB or more is a fresh mapping (configure_heap_for_tensors) whose
/// pages fault in at every call: ConvNeXt-T's first-stage int8 MatMuls faulted in 26 MB per
/// inference, 3 of their 8 ms. Throws std::bad_alloc when memory runs out, as new does.
template <typename T>
class CallBuffer {
 public:
  explicit CallBuffer(int64_t count) {
    Result<Tensor> t = Tensor::create_for_overwrite(dtype_of<T>, {count});
    if (!t.ok()) throw std::bad_alloc();
    tensor_ = std::move(*t);
    data_ = tensor_.mutable_data<T>();
  }
  T* get() const { return data_; }

 private:
  Tensor tensor_;
  T* data_ = nullptr;
};

namespace detail {
/// matmul_int8 where ops::igemm_packed is not: float32 products of 1024-deep slices (their sums
/// are exact integers below 2^24) added in int32. Callable anywhere (for tests).
void matmul_int8_sliced(const int8_t* a, const int8_t* b, int32_t* y, int64_t m, int64_t n, int64_t k, int threads);
}  // namespace detail

/// Applies `activation` to every value exactly (library functions, float32), on up to `threads`
/// threads for large spans.
void activate_exact(const Activation& activation, std::span<float> values, int threads);
/// activate_exact on v[0, n), on the calling thread.
void activate_values(const Activation& activation, float* v, int64_t n);

/// The sum of e[0, n) in float: element k goes to lane k % 16 of the first n - n % 16, the lanes
/// add in halves (lane l + lane l + 8, then + 4, + 2, + 1), then the rest in order (Softmax's
/// denominators, float32 GlobalAveragePool).
float lane_sum(const float* e, int64_t n);
/// Applies `activation` with the fast approximations of act__fast, on up to `threads` threads.
void activate_fast(const Activation& activation, std::span<float> values, int threads);

/// The part of an Epilogue a product kernel applies after its GEMM, resolved at build time.
struct EpilogueRuntime {
  std::vector<float> bias;  ///< one value per channel, or empty
  int residual = -1;        ///< index of the residual tensor in spec.inputs, or -1
  Activation activation;
  /// Then rounded to this storage format (kFloat32: not rounded); kInt8 rounds to the grid of
  /// `round_scale` when it is positive (KernelArgs::round_outputs).
  DType round = DType::kFloat32;
  float round_scale = 0.0f;

  /// Sets `round` and `round_scale` from `args` when it asks the kernel to round its output;
  /// returns whether it does.
  bool round_as(const KernelArgs& args);
};

/// Applies bias, residual, activation and rounding to y viewed as [outer, channels, inner] (the bias is
/// indexed by channel), on up to `threads` threads; `residual` (or null) has y's layout and size.
void apply_epilogue(const EpilogueRuntime& epilogue, float* y, int64_t outer, int64_t channels, int64_t inner,
                    const float* residual, int threads);

/// apply_epilogue on one segment of `length` values: channel `channel`'s row (bias[channel], when
/// `bias` and there is one) plus its `residual` row (or null), then the activation, then the
/// rounding. A kernel
/// that finishes its output a channel's row at a time applies it while the row is in cache.
void apply_epilogue_segment(const EpilogueRuntime& epilogue, float* v, int64_t length, int64_t channel, bool bias,
                            const float* residual);

}  // namespace vn::engine::kernels
