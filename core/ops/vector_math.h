// SPDX-License-Identifier: Apache-2.0
// float32 exp, erf and tanh over arrays, vectorized (AVX2 and FMA where the build has them), that are
// exact in practice: each evaluates the function in double precision with polynomials (relative
// error about one unit in the last place of a double) and rounds once to float. The result is the
// correctly rounded float of the true value unless that value lies within about 2^-52 of the
// midpoint between two floats, which bench_vector_math counts over float bit patterns: over all
// 2^32, neither differs from the double function rounded to float, where glibc's expf differs in
// 4.0 per 10^5 and erff in 3 per 100. The vector path and the scalar fallback evaluate the same
// double formula, with no fused or reordered step of the compiler's choosing, so the two give the
// same bits.
//
// Edges are those of the C library's float functions: exp overflows to +inf from 88.72283935546875
// on and gives the correctly rounded subnormal or +0 below -87.34, exp(-inf) = +0, erf(±0) = ±0,
// erf(±inf) = ±1, and NaN gives the same NaN (quieted).
#pragma once

#include <cstdint>

namespace vn::ops::vmath {

/// exp(x) rounded once to float.
float exp(float x);
/// y[i] = exp(x[i]) for i < n; y may be x.
void exp(const float* x, float* y, int64_t n);
/// y[i] = exp(x[i] - shift) for i < n, the subtraction in float (Softmax's step); y may be x.
void exp_shifted(const float* x, float shift, float* y, int64_t n);

/// erf(x) rounded once to float.
float erf(float x);
/// y[i] = erf(x[i]) for i < n; y may be x.
void erf(const float* x, float* y, int64_t n);

/// y[i] = sigmoid(x[i]) in the split form, e = exp(-|x|) (as exp above) and then (x >= 0 ? 1 : e) /
/// (1 + e) in float: exp never overflows, and for x < 0 no 1 - 1/(1+e) cancels to 0. y may be x.
void sigmoid(const float* x, float* y, int64_t n);
/// sigmoid(x) as the array form computes it.
float sigmoid(float x);
/// y[i] = x[i] * sigmoid(x[i]), the product of sigmoid's float with x rounded once: the bits of
/// a Sigmoid followed by a Mul (SiLU, Swish). y may be x.
void silu(const float* x, float* y, int64_t n);

/// tanh(x) evaluated in double (as exp, from e^(2|x|) - 1 without cancellation) and rounded once to
/// float, x's sign on it: tanh(±0) = ±0, tanh(±inf) = ±1, NaN gives the same NaN (quieted).
float tanh(float x);
/// y[i] = tanh(x[i]) for i < n; y may be x.
void tanh(const float* x, float* y, int64_t n);

/// y[i] = 0.5 x (1 + erf(x / sqrt 2)) for x = x[i], evaluated in double and rounded once to float
/// (ONNX's Gelu), with x / sqrt 2 taken as x times the double nearest 1 / sqrt 2; y may be x.
void gelu_erf(const float* x, float* y, int64_t n);

/// exp_shifted, and in the same loop z[i] = float(double(q[i]) / d) for i < n (as divide): Softmax
/// divides one row while it exponentiates the next, the divider working beside the multipliers. z
/// may be q; neither may overlap x or y.
void exp_shifted_divide(const float* x, float shift, float* y, int64_t n, const float* q, double d, float* z);
/// exp_shifted_divide with z[i] = q[i] / d in float (divide_float).
void exp_shifted_divide_float(const float* x, float shift, float* y, int64_t n, const float* q, float d, float* z);

/// The largest of x[0, n) as `m = v > m ? v : m` from m = -inf takes it (a NaN never wins; -inf
/// when every value is NaN), in lanes: between +0 and -0 it may keep either.
float max(const float* x, int64_t n);

/// y[i] = float(double(x[i]) / d) for i < n; y may be x.
void divide(const float* x, double d, float* y, int64_t n);
/// y[i] = x[i] / d in float for i < n; y may be x.
void divide_float(const float* x, float d, float* y, int64_t n);

}  // namespace vn::ops::vmath
