// SPDX-License-Identifier: Apache-2.0
#include "core/ops/sgemm.h"

#include <Eigen/Core>

#ifdef VN_HAVE_SGEMM_AVX512
extern "C" void vn_sgemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                int64_t ldb, float* c, int64_t ldc);
#endif

namespace vn::ops {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;

void sgemm_here(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                int64_t ldc) {
  Eigen::Map<RowMajor, 0, Stride> cm(c, m, n, Stride(ldc));
  cm.noalias() = Eigen::Map<const RowMajor, 0, Stride>(a, m, k, Stride(lda)) *
                 Eigen::Map<const RowMajor, 0, Stride>(b, k, n, Stride(ldb));
}

}  // namespace

bool sgemm_uses_avx512() {
#ifdef VN_HAVE_SGEMM_AVX512
  // Asked of the CPU, not of the build machine: valgrind, for one, hides AVX-512.
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return avx512;
#else
  return false;
#endif
}

void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc) {
  if (m == 0 || n == 0) return;
#ifdef VN_HAVE_SGEMM_AVX512
  if (sgemm_uses_avx512()) {
    vn_sgemm_avx512(m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
#endif
  sgemm_here(m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace vn::ops
