// SPDX-License-Identifier: Apache-2.0
// What a tensor detail shows of one compared pair, kept instead of the two tensors: bounded
// whatever the tensors' size, so a browser of a large model's layer-wise comparison holds a few
// KiB per tensor rather than every activation twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"

namespace vn {

/// How much of a pair a digest keeps.
struct DigestLimits {
  size_t worst = 12;            ///< elements with the largest absolute errors
  size_t slice_maxima = 1024;   ///< per-slice maxima are kept when the tensor has at most this many slices
  size_t heatmaps = 2;          ///< slices whose error map is kept, the worst first
  int heatmap_rows = 24;        ///< a kept map is reduced to at most this many rows...
  int heatmap_cols = 48;        ///< ...and columns, each cell the maximum of its block
};

/// The digest of `test` against `ref` (same shape; reads any real dtype, each side in its own).
/// A slice is a 2-D plane of the last two dimensions (a 1-D tensor is one slice of one row; a
/// scalar one of one element). Errors are |test - ref| in double; a NaN error (NaN on either
/// side, or infinities that do not cancel) is the worst there is.
struct TensorDigest {
  /// One element of the worst-elements list.
  struct Element {
    int64_t index = 0;  ///< flat (C-order) index
    double test = 0;
    double ref = 0;
    double abs_error = 0;
  };
  /// The error map of one slice: rows × cols cells, each the largest error (NaN wins) of a block
  /// of block_rows × block_cols elements (1 × 1 when the slice fits the limits).
  struct Heatmap {
    int64_t slice = 0;
    int rows = 0;
    int cols = 0;
    int64_t block_rows = 1;
    int64_t block_cols = 1;
    std::vector<float> values;  ///< row-major
  };

  Shape shape;
  int64_t slice_rows = 1;
  int64_t slice_cols = 1;
  int64_t slice_count = 0;
  /// The largest error of every slice (NaN when it holds a NaN error); empty when the tensor has
  /// more slices than DigestLimits::slice_maxima.
  std::vector<float> slice_max;
  std::vector<Element> worst;      ///< largest error first; ties by index
  std::vector<Heatmap> heatmaps;   ///< the slice of the worst element first, then the worst slices
};

/// The digest of a pair; an empty one (shape only, no slices) when the two cannot be compared
/// element by element (different shapes, strings, undefined tensors).
TensorDigest digest_tensors(const Tensor& test, const Tensor& ref, const DigestLimits& limits = {});

}  // namespace vn
