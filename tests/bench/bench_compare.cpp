// SPDX-License-Identifier: Apache-2.0
// Throughput of the comparison metrics on float32 (goal: >= 1 GB/s per core). Usage:
//   vn_bench_compare [MIB_PER_TENSOR]
// Compares two float32 tensors of that size (default 64 MiB each) with compare_tensors on one
// thread and prints, per statistic mode, the best of five runs as the bytes of both inputs read
// per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "core/compare/compare.h"

int main(int argc, char** argv) {
  const double mib = argc > 1 ? std::atof(argv[1]) : 64.0;
  const auto n = static_cast<int64_t>(mib * 1024 * 1024 / 4);
  vn::Tensor ref(vn::DType::kFloat32, {n}), test(vn::DType::kFloat32, {n});
  std::mt19937 rng(1);
  std::normal_distribution<float> value(0.0f, 1.0f), noise(0.0f, 1e-3f);
  float* r = ref.mutable_data<float>();
  float* t = test.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    r[i] = value(rng);
    t[i] = r[i] + noise(rng);
  }
  std::printf("%-10s %10s %10s\n", "stat", "ms", "GB/s");
  for (vn::ErrorStat stat : {vn::ErrorStat::kElemwise, vn::ErrorStat::kMax, vn::ErrorStat::kMedian}) {
    double best = 1e30;
    bool passed = false;
    for (int rep = 0; rep < 5; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      vn::TensorComparison c = vn::compare_tensors("t", test, ref, {.atol = 1e-2, .rtol = 1e-2, .stat = stat}, false);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::min(best, s);
      passed = c.passed;
    }
    std::printf("%-10s %10.2f %10.2f%s\n", std::string(vn::error_stat_name(stat)).c_str(), best * 1e3,
                2.0 * static_cast<double>(n) * 4 / best / 1e9, passed ? "" : "  (failed?)");
  }
  return 0;
}
