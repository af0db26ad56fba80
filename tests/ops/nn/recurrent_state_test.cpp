// SPDX-License-Identifier: Apache-2.0
// The stateful ops of linear-attention and state-space models: LinearAttention-27 and
// CausalConvWithState-27, against hand-computed steps and a plain oracle of the recurrence.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ***** LinearAttention *****

/// One head of size 1, two steps: q = [1, 2], k = [1, 1], v = [2, 3] (scale 1/sqrt(1) = 1).
OpTester two_steps(const std::string& rule) {
  OpTester t("LinearAttention", 27);
  t.attr("q_num_heads", int64_t{1}).attr("kv_num_heads", int64_t{1}).attr("update_rule", rule);
  t.input<float>({1, 2, 1}, {1, 2}).input<float>({1, 2, 1}, {1, 1}).input<float>({1, 2, 1}, {2, 3});
  return t;
}

TEST(LinearAttention, EachUpdateRuleByHand) {
  const float half_log = std::log(0.5f);
  {
    // S = 2, then 2 + 3 = 5.
    OpTester t = two_steps("linear");
    t.output<float>({1, 2, 1}, {2, 10}).output<float>({1, 1, 1, 1}, {5});
    t.run();
  }
  {
    // S = 0 * 0.5 + 2 = 2, then 2 * 0.5 + 3 = 4.
    OpTester t = two_steps("gated");
    t.omitted_input().input<float>({1, 2, 1}, {half_log, half_log});
    t.output<float>({1, 2, 1}, {2, 8}).output<float>({1, 1, 1, 1}, {4});
    t.run();
  }
  {
    // v' = 0.5 (2 - 0) = 1, S = 1; v' = 0.5 (3 - 1) = 1, S = 2.
    OpTester t = two_steps("delta");
    t.omitted_input().omitted_input().input<float>({1, 2, 1}, {0.5f, 0.5f});
    t.output<float>({1, 2, 1}, {1, 4}).output<float>({1, 1, 1, 1}, {2});
    t.run();
  }
  {
    // S = 0, v' = 1, S = 1; S = 0.5, v' = 0.5 (3 - 0.5) = 1.25, S = 1.75.
    OpTester t = two_steps("gated_delta");
    t.omitted_input().input<float>({1, 2, 1}, {half_log, half_log}).input<float>({1, 2, 1}, {0.5f, 0.5f});
    t.output<float>({1, 2, 1}, {1, 3.5f}).output<float>({1, 1, 1, 1}, {1.75f});
    t.run();
  }
  {
    // A past state of 1: S = 3, then 6.
    OpTester t = two_steps("linear");
    t.input<float>({1, 1, 1, 1}, {1});
    t.output<float>({1, 2, 1}, {3, 12}).output<float>({1, 1, 1, 1}, {6});
    t.run();
  }
}

TEST(LinearAttention, GroupedQueriesPerFeatureDecayAgainstOracle) {
  const int64_t b = 2, steps = 3, hq = 4, hkv = 2, dk = 3, dv = 2, group = hq / hkv;
  const auto q = random_floats(b * steps * hq * dk, 61), k = random_floats(b * steps * hkv * dk, 62);
  const auto v = random_floats(b * steps * hkv * dv, 63), decay = random_floats(b * steps * hkv * dk, 64, -1, 0);
  const auto beta = random_floats(b * steps * hkv, 65, 0, 1), past = random_floats(b * hkv * dk * dv, 66);
  const double scale = 0.25;
  std::vector<double> s(past.begin(), past.end());
  std::vector<float> out(static_cast<size_t>(b * steps * hq * dv));
  for (int64_t ib = 0; ib < b; ++ib) {
    for (int64_t t = 0; t < steps; ++t) {
      for (int64_t h = 0; h < hkv; ++h) {
        auto S = [&](int64_t i, int64_t m) -> double& { return s[((ib * hkv + h) * dk + i) * dv + m]; };
        auto K = [&](int64_t i) { return double(k[((ib * steps + t) * hkv + h) * dk + i]); };
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t m = 0; m < dv; ++m) S(i, m) *= std::exp(double(decay[((ib * steps + t) * hkv + h) * dk + i]));
        for (int64_t m = 0; m < dv; ++m) {
          double retrieved = 0;
          for (int64_t i = 0; i < dk; ++i) retrieved += S(i, m) * K(i);
          const double vn = beta[(ib * steps + t) * hkv + h] * (v[((ib * steps + t) * hkv + h) * dv + m] - retrieved);
          for (int64_t i = 0; i < dk; ++i) S(i, m) += K(i) * vn;
        }
        for (int64_t g = h * group; g < (h + 1) * group; ++g) {
          for (int64_t m = 0; m < dv; ++m) {
            double acc = 0;
            for (int64_t i = 0; i < dk; ++i) acc += double(q[((ib * steps + t) * hq + g) * dk + i]) * S(i, m);
            out[((ib * steps + t) * hq + g) * dv + m] = static_cast<float>(scale * acc);
          }
        }
      }
    }
  }
  OpTester t("LinearAttention", 27);
  t.attr("q_num_heads", hq).attr("kv_num_heads", hkv).attr("scale", 0.25f).attr("chunk_size", int64_t{64});
  t.input<float>({b, steps, hq * dk}, q).input<float>({b, steps, hkv * dk}, k).input<float>({b, steps, hkv * dv}, v);
  t.input<float>({b, hkv, dk, dv}, past).input<float>({b, steps, hkv * dk}, decay).input<float>({b, steps, hkv}, beta);
  t.output<float>({b, steps, hq * dv}, out);
  t.output<float>({b, hkv, dk, dv}, std::vector<float>(s.begin(), s.end()));
  t.run();
}

TEST(LinearAttention, RefusesInputsItsRuleDoesNotTake) {
  OpTester t = two_steps("linear");
  t.omitted_input().input<float>({1, 2, 1}, {0, 0});
  t.unchecked_output().unchecked_output();
  t.expect_failure(StatusCode::kInvalidModel, "update_rule \"linear\" takes no decay and takes no beta");
}

// ***** CausalConvWithState *****

TEST(CausalConvWithState, HandComputedWithPastStateBiasAndSilu) {
  // Padded input [5, 1, 2, 3], kernel [1, 10]: 15, 21, 32, plus bias 1.
  OpTester t("CausalConvWithState", 27);
  t.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 2}, {1, 10}).input<float>({1}, {1});
  t.input<float>({1, 1, 1}, {5});
  t.output<float>({1, 1, 3}, {16, 22, 33}).output<float>({1, 1, 1}, {3});
  t.run();
  auto silu = [](double x) { return static_cast<float>(x / (1 + std::exp(-x))); };
  for (const char* name : {"silu", "swish"}) {
    // Without past state the padding is zeros: 10, 21, 32.
    OpTester s("CausalConvWithState", 27);
    s.attr("activation", name);
    s.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 2}, {1, 10});
    s.output<float>({1, 1, 3}, {silu(10), silu(21), silu(32)}).output<float>({1, 1, 1}, {3});
    s.run();
  }
}

TEST(CausalConvWithState, ChannelsHaveTheirOwnKernelsAndTheStateIsTheLastSteps) {
  // Two channels, kernel 3: channel 0 sums its window, channel 1 takes its oldest element.
  OpTester t("CausalConvWithState", 27);
  t.input<float>({1, 2, 2}, {1, 2, 10, 20}).input<float>({2, 1, 3}, {1, 1, 1, 1, 0, 0});
  t.omitted_input().input<float>({1, 2, 2}, {3, 4, 30, 40});
  t.output<float>({1, 2, 2}, {8, 7, 30, 40}).output<float>({1, 2, 2}, {1, 2, 10, 20});
  t.run();
}

TEST(CausalConvWithState, RefusesAnUnknownActivation) {
  OpTester t("CausalConvWithState", 27);
  t.attr("activation", "gelu");
  t.input<float>({1, 1, 2}, {1, 2}).input<float>({1, 1, 1}, {1});
  t.unchecked_output().unchecked_output();
  t.expect_failure(StatusCode::kUnsupportedAttr, "activation \"gelu\" is not one of");
}

}  // namespace
}  // namespace vn::ops::testing
