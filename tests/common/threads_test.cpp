// SPDX-License-Identifier: Apache-2.0
#include "core/common/threads.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/ir/onnx_import.h"
#include "core/ops/kernel_util.h"
#include "core/ref/reference_backend.h"

namespace vn {
namespace {

TEST(Threads, TheCapLimitsTheCallingThreadOnlyAndIsRestored) {
  EXPECT_EQ(thread_cap(), 0);
  EXPECT_EQ(capped_threads(6), 6);
  EXPECT_EQ(capped_threads(0), 1);  // at least one
  {
    ThreadCapScope two(2);
    EXPECT_EQ(capped_threads(6), 2);
    EXPECT_EQ(capped_threads(1), 1);
    {
      ThreadCapScope none(0);
      EXPECT_EQ(capped_threads(6), 6);
    }
    EXPECT_EQ(capped_threads(6), 2);
    int other = -1;
    std::thread([&] { other = capped_threads(6); }).join();
    EXPECT_EQ(other, 6);
  }
  EXPECT_EQ(thread_cap(), 0);
}

TEST(Threads, ParallelChunksGiveEachThreadAtLeastTheGrain) {
  std::set<std::thread::id> threads_seen;
  const auto chunks = [&](int threads, int64_t n, int64_t grain) {
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> seen;
    threads_seen.clear();
    ops::parallel_chunks(threads, n, [&](int64_t lo, int64_t hi) {
      std::lock_guard<std::mutex> lock(mu);
      seen.emplace_back(lo, hi);
      threads_seen.insert(std::this_thread::get_id());
    }, grain);
    std::sort(seen.begin(), seen.end());
    return seen;
  };
  using Chunks = std::vector<std::pair<int64_t, int64_t>>;
  // 10000 elements are too few for memory-bound work on two threads, enough for costly work.
  EXPECT_EQ(chunks(4, 10000, ops::kMemoryBoundGrain), (Chunks{{0, 10000}}));
  EXPECT_EQ(chunks(4, 10000, ops::kComputeBoundGrain), (Chunks{{0, 5000}, {5000, 10000}}));
  EXPECT_LE(threads_seen.size(), 2u);
  // Three grains on two threads: a chunk per grain (up to four per thread), claimed in turn.
  const int64_t g = ops::kMemoryBoundGrain;
  EXPECT_EQ(chunks(2, 3 * g, g), (Chunks{{0, g}, {g, 2 * g}, {2 * g, 3 * g}}));
  EXPECT_EQ(chunks(2, 100 * g, g).size(), 8u);
  ThreadCapScope one(1);
  EXPECT_EQ(chunks(4, 10000, ops::kComputeBoundGrain), (Chunks{{0, 10000}}));
  EXPECT_EQ(threads_seen, (std::set<std::thread::id>{std::this_thread::get_id()}));
}

TEST(Threads, ABackendRunsWithinTheCapOfTheThreadThatRunsIt) {
  Result<Model> model = parse_model_text(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] x) => (float[4] y) {
  y = Relu(x)
}
)");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ref::ReferenceBackend ref;
  PrepareOptions three;
  three.num_threads = 3;
  ASSERT_TRUE(ref.prepare(*model, three).ok());
  const TensorMap feeds{{"x", Tensor::from_vector<float>({4}, {-1, 2, -3, 4})}};
  int seen = 0;
  RunOptions options;
  options.observer = [&](int64_t, const Node&, const TensorMap&) {
    seen = omp_get_max_threads();
    return true;
  };
  ASSERT_TRUE(ref.run(feeds, options).ok());
  EXPECT_EQ(seen, 3);
  {
    ThreadCapScope one(1);
    ASSERT_TRUE(ref.run(feeds, options).ok());
    EXPECT_EQ(seen, 1);
  }
}

}  // namespace
}  // namespace vn
