// SPDX-License-Identifier: Apache-2.0
// One registration function per reference-kernel family; register_all_ops calls them in the order
// of ONNX's category folders (the families added for opsets 18-28 last). Each registers its kernels
// at every since-version whose semantics it implements.
#pragma once

#include "core/ops/op_registry.h"

namespace vn::ops {

// controlflow/
void register_if_ops(OpRegistry& registry);    ///< If
void register_loop_ops(OpRegistry& registry);  ///< Loop
void register_scan_ops(OpRegistry& registry);  ///< Scan
// generator/
void register_constant_ops(OpRegistry& registry);  ///< Constant, ConstantOfShape, Range
void register_eye_like_ops(OpRegistry& registry);  ///< EyeLike
void register_random_ops(OpRegistry& registry);    ///< RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial
// logical/
void register_logical_ops(OpRegistry& registry);  ///< Equal, Less, Greater, *OrEqual, Not, And, Or, Xor, Bit*
// math/
void register_activation_ops(OpRegistry& registry);          ///< Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Clip, Elu, ...
void register_elementwise_unary_ops(OpRegistry& registry);   ///< Abs, Neg, Exp, Log, Sqrt, Sin, Round, Sign, IsNaN, ...
void register_elementwise_binary_ops(OpRegistry& registry);  ///< Add, Sub, Mul, Div, Pow, Mod
void register_variadic_ops(OpRegistry& registry);            ///< Max, Min, Sum, Mean
void register_gemm_ops(OpRegistry& registry);                ///< Gemm, MatMul, MatMulInteger
void register_softmax_ops(OpRegistry& registry);             ///< Softmax, LogSoftmax, Hardmax
void register_cumsum_ops(OpRegistry& registry);              ///< CumSum, CumProd
void register_det_ops(OpRegistry& registry);                 ///< Det
void register_einsum_ops(OpRegistry& registry);              ///< Einsum
void register_topk_ops(OpRegistry& registry);                ///< TopK
// nn/
void register_conv_ops(OpRegistry& registry);           ///< Conv, ConvInteger
void register_conv_transpose_ops(OpRegistry& registry);  ///< ConvTranspose
void register_pool_ops(OpRegistry& registry);           ///< Max/Average/LpPool, Global*Pool, MaxUnpool, MaxRoiPool
void register_normalization_ops(OpRegistry& registry);  ///< BatchNormalization, LayerNormalization, LRN, ...
void register_dropout_ops(OpRegistry& registry);        ///< Dropout
void register_text_ops(OpRegistry& registry);           ///< StringNormalizer, TfIdfVectorizer
void register_rnn_ops(OpRegistry& registry);            ///< RNN, GRU, LSTM
// object_detection/
void register_roi_align_ops(OpRegistry& registry);            ///< RoiAlign
void register_non_max_suppression_ops(OpRegistry& registry);  ///< NonMaxSuppression
// quantization/
void register_quantize_linear_ops(OpRegistry& registry);  ///< QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
void register_qlinear_ops(OpRegistry& registry);          ///< QLinearConv, QLinearMatMul
// reduction/
void register_reduce_ops(OpRegistry& registry);  ///< Reduce* (Sum, Mean, Max, Min, Prod, L1, L2, ...), ArgMax, ArgMin
// signal/
void register_window_ops(OpRegistry& registry);             ///< HannWindow, HammingWindow, BlackmanWindow
void register_dft_ops(OpRegistry& registry);                ///< DFT, STFT
void register_mel_weight_matrix_ops(OpRegistry& registry);  ///< MelWeightMatrix
// tensor/
void register_shape_ops(OpRegistry& registry);         ///< Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Identity
void register_transpose_ops(OpRegistry& registry);     ///< Transpose
void register_concat_split_ops(OpRegistry& registry);  ///< Concat, Split
void register_gather_ops(OpRegistry& registry);        ///< Gather, GatherElements, GatherND
void register_slice_ops(OpRegistry& registry);         ///< Slice
void register_cast_ops(OpRegistry& registry);          ///< Cast, CastLike
void register_expand_ops(OpRegistry& registry);        ///< Expand
void register_where_ops(OpRegistry& registry);         ///< Where
void register_pad_ops(OpRegistry& registry);           ///< Pad, CenterCropPad
void register_tile_ops(OpRegistry& registry);              ///< Tile
void register_trilu_ops(OpRegistry& registry);             ///< Trilu
void register_onehot_ops(OpRegistry& registry);            ///< OneHot
void register_nonzero_ops(OpRegistry& registry);           ///< NonZero, Compress
void register_space_depth_ops(OpRegistry& registry);       ///< DepthToSpace, SpaceToDepth
void register_reverse_sequence_ops(OpRegistry& registry);  ///< ReverseSequence
void register_scatter_ops(OpRegistry& registry);           ///< ScatterElements, ScatterND, Scatter, TensorScatter
void register_unique_ops(OpRegistry& registry);            ///< Unique
void register_resize_ops(OpRegistry& registry);            ///< Resize, Upsample
void register_grid_sample_ops(OpRegistry& registry);       ///< GridSample, AffineGrid
// Transformer-era ops (opsets 18-28), kept together.
void register_smooth_activation_ops(OpRegistry& registry);  ///< math/: Gelu, Mish, Swish, SwiGLU
void register_attention_ops(OpRegistry& registry);          ///< nn/: Attention
void register_flex_attention_ops(OpRegistry& registry);     ///< nn/: FlexAttention (ai.onnx.preview)
void register_linear_attention_ops(OpRegistry& registry);   ///< nn/: LinearAttention
void register_rms_group_norm_ops(OpRegistry& registry);     ///< nn/: RMSNormalization, GroupNormalization
void register_rotary_embedding_ops(OpRegistry& registry);   ///< nn/: RotaryEmbedding
void register_causal_conv_ops(OpRegistry& registry);        ///< nn/: CausalConvWithState
// Added for opsets 18-28 (issue #23), by ONNX category.
void register_loss_ops(OpRegistry& registry);         ///< NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (math/)
void register_col2im_ops(OpRegistry& registry);       ///< Col2Im (nn/)
void register_deform_conv_ops(OpRegistry& registry);  ///< DeformConv (nn/)
void register_bitcast_ops(OpRegistry& registry);      ///< BitCast (tensor/)

}  // namespace vn::ops
