// SPDX-License-Identifier: Apache-2.0
// vn_sgemm_avx512: Eigen's GEMM compiled for AVX-512, the only code of Vernier built with it (see
// sgemm.h). It lives in a shared library built with hidden visibility, so its Eigen instances,
// which share their names with the AVX2 ones of the rest of the program, stay its own. Built
// without OpenMP, Eigen runs it on the calling thread.
#include <cstdint>

#include <Eigen/Core>

extern "C" __attribute__((visibility("default"))) void vn_sgemm_avx512(int64_t m, int64_t n, int64_t k, const float* a,
                                                                      int64_t lda, const float* b, int64_t ldb,
                                                                      float* c, int64_t ldc) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<RowMajor, 0, Stride> cm(c, m, n, Stride(ldc));
  cm.noalias() = Eigen::Map<const RowMajor, 0, Stride>(a, m, k, Stride(lda)) *
                 Eigen::Map<const RowMajor, 0, Stride>(b, k, n, Stride(ldb));
}
