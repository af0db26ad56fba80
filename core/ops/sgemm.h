// SPDX-License-Identifier: Apache-2.0
// The float32 matrix product under the reference backend's convolutions, on one thread (callers
// share the work among theirs). On machines with AVX-512 it runs Eigen's GEMM compiled for
// AVX-512 in a shared library of its own (sgemm_avx512.cpp), about 1.8x faster than the AVX2
// build the rest of Vernier gets: g++ 12 miscompiles ordinary code with AVX-512 on, so only this
// one product is built with it, behind a C entry point, its Eigen instances hidden in the library.
#pragma once

#include <cstdint>

namespace vn::ops {

/// C = A * B for row-major float32 matrices: A is m x k with rows lda apart, B is k x n with rows
/// ldb apart, C is m x n with rows ldc apart (overwritten). Single-threaded.
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc);

/// Whether sgemm runs the AVX-512 build here (the library was built and the CPU has AVX-512).
bool sgemm_uses_avx512();

}  // namespace vn::ops
