// SPDX-License-Identifier: Apache-2.0
// Quick start, adding an op: write the kernel in the family file of its ONNX category
// (core/ops/<category>/<family>.cpp), register it in that file's register_<family>_ops at every
// since-version whose semantics it implements, and add a test in tests/ops/. A new family also
// needs its declaration in families.h, a call below and its source in core/ops/CMakeLists.txt.
#include "core/ops/families.h"
#include "core/ops/op_registry.h"

namespace vn::ops {

void register_all_ops(OpRegistry& registry) {
  register_if_ops(registry);
  register_loop_ops(registry);
  register_scan_ops(registry);
  register_constant_ops(registry);
  register_eye_like_ops(registry);
  register_random_ops(registry);
  register_logical_ops(registry);
  register_activation_ops(registry);
  register_elementwise_unary_ops(registry);
  register_elementwise_binary_ops(registry);
  register_variadic_ops(registry);
  register_gemm_ops(registry);
  register_softmax_ops(registry);
  register_cumsum_ops(registry);
  register_det_ops(registry);
  register_einsum_ops(registry);
  register_topk_ops(registry);
  register_conv_ops(registry);
  register_conv_transpose_ops(registry);
  register_pool_ops(registry);
  register_normalization_ops(registry);
  register_dropout_ops(registry);
  register_text_ops(registry);
  register_rnn_ops(registry);
  register_roi_align_ops(registry);
  register_non_max_suppression_ops(registry);
  register_quantize_linear_ops(registry);
  register_qlinear_ops(registry);
  register_reduce_ops(registry);
  register_window_ops(registry);
  register_dft_ops(registry);
  register_mel_weight_matrix_ops(registry);
  register_shape_ops(registry);
  register_transpose_ops(registry);
  register_concat_split_ops(registry);
  register_gather_ops(registry);
  register_slice_ops(registry);
  register_cast_ops(registry);
  register_expand_ops(registry);
  register_where_ops(registry);
  register_pad_ops(registry);
  register_tile_ops(registry);
  register_trilu_ops(registry);
  register_onehot_ops(registry);
  register_nonzero_ops(registry);
  register_space_depth_ops(registry);
  register_reverse_sequence_ops(registry);
  register_scatter_ops(registry);
  register_unique_ops(registry);
  register_resize_ops(registry);
  register_grid_sample_ops(registry);
  // Transformer-era ops (opsets 18-28).
  register_smooth_activation_ops(registry);
  register_attention_ops(registry);
  register_flex_attention_ops(registry);
  register_linear_attention_ops(registry);
  register_rms_group_norm_ops(registry);
  register_rotary_embedding_ops(registry);
  register_causal_conv_ops(registry);
  // Ops new since ONNX 1.12.
  register_loss_ops(registry);
  register_col2im_ops(registry);
  register_deform_conv_ops(registry);
  register_bitcast_ops(registry);
}

}  // namespace vn::ops
