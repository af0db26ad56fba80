// SPDX-License-Identifier: Apache-2.0
// Throughput of the comparison metrics on float32, per core (goal: >= 1 GB/s). Usage:
//   vn_bench_compare [MIB_PER_TENSOR...]
// Compares two float32 tensors of each size (default 64 MiB, as a large output, and 1 and
// 0.0625 MiB, as the layer tensors a layer-wise comparison streams) with compare_tensors on one
// thread, and prints the best of five runs as the bytes of both inputs read per second. Every
// statistic mode computes the same metrics (max, mean, median, quantile, cosine, ...); the median
// mode is timed.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/common/threads.h"
#include "core/compare/compare.h"

int main(int argc, char** argv) {
  vn::set_default_threads(1);
  std::vector<double> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atof(argv[i]));
  if (sizes.empty()) sizes = {64.0, 1.0, 0.0625};
  std::printf("%-10s %10s %10s\n", "MiB", "ms", "GB/s");
  for (double mib : sizes) {
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
    // Small tensors repeat so that one timing spans at least ~10 ms.
    const int repeat = static_cast<int>(std::max<int64_t>(1, (int64_t{4} << 20) / std::max<int64_t>(n, 1)));
    double best = 1e30;
    bool passed = false;
    for (int rep = 0; rep < 5; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      for (int k = 0; k < repeat; ++k) {
        passed = vn::compare_tensors("t", test, ref, {.atol = 1e-2, .rtol = 1e-2, .stat = vn::ErrorStat::kMedian}, false)
                     .passed;
      }
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeat);
    }
    std::printf("%-10g %10.3f %10.2f%s\n", mib, best * 1e3, 2.0 * static_cast<double>(n) * 4 / best / 1e9,
                passed ? "" : "  (failed?)");
  }
  return 0;
}
