// SPDX-License-Identifier: Apache-2.0
// Accuracy and speed of core/ops/vector_math.h against glibc's float functions.
//
// Accuracy: over every STRIDE-th float bit pattern (default 97; 1 covers all 2^32), counts how
// often vmath's exp, erf and tanh, and glibc's expf, erff and tanhf, differ from the double
// function rounded to float, (float)exp((double)x) and so on (the correctly rounded value in
// practice: the double function's error is below one double ulp; the count of its disagreements
// with the long double function rounded to float tells how far that holds). Each disagreement of vmath is printed with the long double
// function's value. Also checks that vmath's vector and scalar paths agree bit for bit.
// Speed: ns per element on one thread, vmath's arrays against a loop of glibc's functions.
//
//   vn_bench_vector_math [STRIDE]
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/ops/vector_math.h"

namespace {

namespace vmath = vn::ops::vmath;

bool same(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

struct Counts {
  uint64_t tested = 0, ours = 0, glibc = 0, paths = 0, long_double = 0;
};

template <typename Vec, typename Scalar, typename Glibc, typename Double, typename Long>
Counts sweep(const char* name, uint64_t stride, Vec vec, Scalar scalar, Glibc glibc, Double dbl, Long ld) {
  Counts c;
  std::vector<float> x, y;
  const uint64_t batch = uint64_t{1} << 20;
  for (uint64_t start = 0; start < (uint64_t{1} << 32); start += batch * stride) {
    x.clear();
    for (uint64_t p = start; p < start + batch * stride && p < (uint64_t{1} << 32); p += stride) {
      x.push_back(std::bit_cast<float>(static_cast<uint32_t>(p)));
    }
    y.resize(x.size());
    vec(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float v = x[i];
      const float want = dbl(v);
      ++c.tested;
      if (std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(scalar(v))) ++c.paths;
      if (!same(glibc(v), want)) ++c.glibc;
      if (!same(ld(v), want)) ++c.long_double;
      if (!same(y[i], want)) {
        ++c.ours;
        std::printf("  %s(%a): vmath %a, double %a, long double %a\n", name, static_cast<double>(v),
                    static_cast<double>(y[i]), static_cast<double>(want), static_cast<double>(ld(v)));
      }
    }
  }
  std::printf(
      "%s: %llu patterns; differ from the double function rounded to float: vmath %llu, glibc %llu "
      "(%.2e), the long double function rounded %llu; vector and scalar paths differ: %llu\n",
      name, static_cast<unsigned long long>(c.tested), static_cast<unsigned long long>(c.ours),
      static_cast<unsigned long long>(c.glibc), static_cast<double>(c.glibc) / static_cast<double>(c.tested),
      static_cast<unsigned long long>(c.long_double), static_cast<unsigned long long>(c.paths));
  return c;
}

/// The fastest of 5 rounds, each f over x 64 times (x stays in the cache: the speed of the code, not
/// of the memory).
template <typename F>
double ns_per_element(const std::vector<float>& x, std::vector<float>& y, F f) {
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int rep = 0; rep < 64; ++rep) f(x.data(), y.data(), static_cast<int64_t>(x.size()));
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ns / (64.0 * static_cast<double>(x.size())));
  }
  return best;
}

void speed(const char* name, const std::vector<float>& x, auto ours, auto theirs) {
  std::vector<float> y(x.size());
  const double a = ns_per_element(x, y, ours);
  const double b = ns_per_element(x, y, [&](const float* p, float* q, int64_t n) {
    for (int64_t i = 0; i < n; ++i) q[i] = theirs(p[i]);
  });
  std::printf("%s: vmath %.3f ns/element, glibc %.3f (glibc/vmath %.2f)\n", name, a, b, b / a);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t stride = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 97;
  if (stride == 0) {
    std::fprintf(stderr, "usage: vn_bench_vector_math [STRIDE >= 1]\n");
    return 2;
  }
  sweep(
      "exp", stride, [](const float* x, float* y, int64_t n) { vmath::exp(x, y, n); },
      [](float v) { return vmath::exp(v); }, [](float v) { return std::exp(v); },
      [](float v) { return static_cast<float>(std::exp(static_cast<double>(v))); },
      [](float v) { return static_cast<float>(std::exp(static_cast<long double>(v))); });
  sweep(
      "erf", stride, [](const float* x, float* y, int64_t n) { vmath::erf(x, y, n); },
      [](float v) { return vmath::erf(v); }, [](float v) { return std::erf(v); },
      [](float v) { return static_cast<float>(std::erf(static_cast<double>(v))); },
      [](float v) { return static_cast<float>(std::erf(static_cast<long double>(v))); });
  sweep(
      "tanh", stride, [](const float* x, float* y, int64_t n) { vmath::tanh(x, y, n); },
      [](float v) { return vmath::tanh(v); }, [](float v) { return std::tanh(v); },
      [](float v) { return static_cast<float>(std::tanh(static_cast<double>(v))); },
      [](float v) { return static_cast<float>(std::tanh(static_cast<long double>(v))); });

  std::mt19937 rng(7);
  std::vector<float> scores(1 << 13), activations(1 << 13);
  std::uniform_real_distribution<float> below(-30.0f, 0.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : scores) v = below(rng);
  for (float& v : activations) v = normal(rng);
  speed(
      "exp on [-30, 0]", scores, [](const float* x, float* y, int64_t n) { vmath::exp(x, y, n); },
      [](float v) { return std::exp(v); });
  speed(
      "erf on N(0, 1)", activations, [](const float* x, float* y, int64_t n) { vmath::erf(x, y, n); },
      [](float v) { return std::erf(v); });
  std::vector<float> wide(activations);
  for (float& v : wide) v *= 3.0f;
  speed(
      "erf on N(0, 3)", wide, [](const float* x, float* y, int64_t n) { vmath::erf(x, y, n); },
      [](float v) { return std::erf(v); });
  speed(
      "sigmoid on N(0, 3)", wide, [](const float* x, float* y, int64_t n) { vmath::sigmoid(x, y, n); },
      [](float v) { return v >= 0.0f ? 1.0f / (1.0f + std::exp(-v)) : std::exp(v) / (1.0f + std::exp(v)); });
  speed(
      "tanh on N(0, 1)", activations, [](const float* x, float* y, int64_t n) { vmath::tanh(x, y, n); },
      [](float v) { return std::tanh(v); });
  return 0;
}
