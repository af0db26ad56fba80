// SPDX-License-Identifier: Apache-2.0
// Attention-23/24/25 and FlexAttention-1 against hand-computed values, against a plain oracle
// written from the operator's formulas (scores = Q K^T * scale + bias, softmax, times V), and for
// float16 against the step-by-step float16 values numpy gives for ONNX's reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// Sizes of a case; tensors are (B, H, L, D) unless the test says otherwise.
struct Sizes {
  int64_t b = 1, hq = 1, hkv = 1, lq = 1, lkv = 1, past = 0, d = 1, dv = 1;
  int64_t total() const { return past + lkv; }
};

/// The operator's outputs computed the plain way, in double: bias(b, h, i, j) is given per element
/// (0 or -inf, or a mask value); query head h reads key/value head h / (hq / hkv).
struct Oracle {
  std::vector<float> y, qk, qk_softcapped, qk_biased, probs;
};

Oracle attention_oracle(const Sizes& s, const std::vector<float>& q, const std::vector<float>& k,
                        const std::vector<float>& v, double scale, double softcap,
                        const std::function<double(int64_t, int64_t, int64_t, int64_t)>& bias) {
  Oracle o;
  const int64_t t = s.total();
  for (int64_t b = 0; b < s.b; ++b) {
    for (int64_t h = 0; h < s.hq; ++h) {
      const int64_t kh = h / (s.hq / s.hkv);
      for (int64_t i = 0; i < s.lq; ++i) {
        std::vector<double> row(static_cast<size_t>(t));
        bool all_masked = true;
        for (int64_t j = 0; j < t; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < s.d; ++e) {
            dot += double(q[static_cast<size_t>(((b * s.hq + h) * s.lq + i) * s.d + e)]) *
                   k[static_cast<size_t>(((b * s.hkv + kh) * t + j) * s.d + e)];
          }
          dot *= scale;
          o.qk.push_back(static_cast<float>(dot));
          if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
          o.qk_softcapped.push_back(static_cast<float>(dot));
          const double bv = bias(b, h, i, j);
          if (bv != -INFINITY) all_masked = false;
          row[static_cast<size_t>(j)] = dot + bv;
          o.qk_biased.push_back(static_cast<float>(row[static_cast<size_t>(j)]));
        }
        double mx = -INFINITY, sum = 0;
        for (double x : row) mx = std::max(mx, x);
        for (double& x : row) sum += (x = std::exp(x - mx));
        for (double& x : row) x = all_masked ? 0.0 : x / sum;
        for (double x : row) o.probs.push_back(static_cast<float>(x));
        for (int64_t e = 0; e < s.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < t; ++j) {
            acc += row[static_cast<size_t>(j)] * v[static_cast<size_t>(((b * s.hkv + kh) * t + j) * s.dv + e)];
          }
          o.y.push_back(static_cast<float>(acc));
        }
      }
    }
  }
  return o;
}

/// (B, H, L, D) -> (B, L, H * D).
std::vector<float> to_3d(const std::vector<float>& x, int64_t b, int64_t h, int64_t l, int64_t d) {
  std::vector<float> out(x.size());
  for (int64_t ib = 0; ib < b; ++ib)
    for (int64_t ih = 0; ih < h; ++ih)
      for (int64_t il = 0; il < l; ++il)
        for (int64_t id = 0; id < d; ++id)
          out[static_cast<size_t>(((ib * l + il) * h + ih) * d + id)] =
              x[static_cast<size_t>(((ib * h + ih) * l + il) * d + id)];
  return out;
}

/// concat(past, new) along L of (B, H, L, D) arrays.
std::vector<float> concat_l(const std::vector<float>& past, const std::vector<float>& now, int64_t bh, int64_t lp,
                            int64_t ln, int64_t d) {
  std::vector<float> out;
  for (int64_t i = 0; i < bh; ++i) {
    out.insert(out.end(), past.begin() + i * lp * d, past.begin() + (i + 1) * lp * d);
    out.insert(out.end(), now.begin() + i * ln * d, now.begin() + (i + 1) * ln * d);
  }
  return out;
}

TEST(Attention, HandComputed) {
  // One query [1, 0] against keys [1, 0] and [0, 1]: scores 1/sqrt(2) and 0.
  OpTester t("Attention", 23);
  t.input<float>({1, 1, 1, 2}, {1, 0});
  t.input<float>({1, 1, 2, 2}, {1, 0, 0, 1});
  t.input<float>({1, 1, 2, 1}, {1, 3});
  const double p0 = std::exp(1 / std::sqrt(2.0)) / (std::exp(1 / std::sqrt(2.0)) + 1);
  t.output<float>({1, 1, 1, 1}, {static_cast<float>(p0 * 1 + (1 - p0) * 3)});
  t.run();
}

TEST(Attention, GroupedQueryCausalWithPastAgainstOracle) {
  const Sizes s{.b = 2, .hq = 4, .hkv = 2, .lq = 3, .lkv = 3, .past = 2, .d = 4, .dv = 3};
  const auto q = random_floats(s.b * s.hq * s.lq * s.d, 1);
  const auto k = random_floats(s.b * s.hkv * s.lkv * s.d, 2);
  const auto v = random_floats(s.b * s.hkv * s.lkv * s.dv, 3);
  const auto pk = random_floats(s.b * s.hkv * s.past * s.d, 4);
  const auto pv = random_floats(s.b * s.hkv * s.past * s.dv, 5);
  const auto present_k = concat_l(pk, k, s.b * s.hkv, s.past, s.lkv, s.d);
  const auto present_v = concat_l(pv, v, s.b * s.hkv, s.past, s.lkv, s.dv);
  // Causal with a cache: query i sits at position past + i and sees keys up to it.
  const Oracle o = attention_oracle(s, q, present_k, present_v, 0.5, 0, [&](int64_t, int64_t, int64_t i, int64_t j) {
    return j > i + s.past ? -INFINITY : 0.0;
  });
  for (int64_t opset : {23, 24, 25}) {
    OpTester t("Attention", opset);
    t.attr("is_causal", int64_t{1});
    t.input<float>({s.b, s.hq, s.lq, s.d}, q).input<float>({s.b, s.hkv, s.lkv, s.d}, k);
    t.input<float>({s.b, s.hkv, s.lkv, s.dv}, v).omitted_input();
    t.input<float>({s.b, s.hkv, s.past, s.d}, pk).input<float>({s.b, s.hkv, s.past, s.dv}, pv);
    t.output<float>({s.b, s.hq, s.lq, s.dv}, o.y);
    t.output<float>({s.b, s.hkv, s.total(), s.d}, present_k);
    t.output<float>({s.b, s.hkv, s.total(), s.dv}, present_v);
    t.output<float>({s.b, s.hq, s.lq, s.total()}, o.qk);
    t.run();
  }
}

TEST(Attention, ThreeDInputsFloatMaskSoftcapAndEveryQkOutputMode) {
  const Sizes s{.b = 2, .hq = 2, .hkv = 2, .lq = 3, .lkv = 4, .d = 2, .dv = 3};
  const auto q = random_floats(s.b * s.hq * s.lq * s.d, 11, -2, 2);
  const auto k = random_floats(s.b * s.hkv * s.lkv * s.d, 12, -2, 2);
  const auto v = random_floats(s.b * s.hkv * s.lkv * s.dv, 13);
  std::vector<float> mask = random_floats(s.lq * s.lkv, 14);
  mask[1] = -kInf;
  const float scale = 0.7f, softcap = 1.5f;
  const double s_sqrt = std::sqrt(scale);
  const Oracle o = attention_oracle(s, q, k, v, s_sqrt * s_sqrt, softcap,
                                    [&](int64_t, int64_t, int64_t i, int64_t j) { return mask[i * s.lkv + j]; });
  const std::vector<float>* by_mode[] = {&o.qk, &o.qk_softcapped, &o.qk_biased, &o.probs};
  for (int64_t mode = 0; mode < 4; ++mode) {
    OpTester t("Attention", 23);
    t.attr("q_num_heads", s.hq).attr("kv_num_heads", s.hkv).attr("scale", scale).attr("softcap", softcap);
    t.attr("qk_matmul_output_mode", mode);
    t.input<float>({s.b, s.lq, s.hq * s.d}, to_3d(q, s.b, s.hq, s.lq, s.d));
    t.input<float>({s.b, s.lkv, s.hkv * s.d}, to_3d(k, s.b, s.hkv, s.lkv, s.d));
    t.input<float>({s.b, s.lkv, s.hkv * s.dv}, to_3d(v, s.b, s.hkv, s.lkv, s.dv));
    t.input<float>({s.lq, s.lkv}, mask);
    t.output<float>({s.b, s.lq, s.hq * s.dv}, to_3d(o.y, s.b, s.hq, s.lq, s.dv));
    t.omitted_output().omitted_output();
    t.output<float>({s.b, s.hq, s.lq, s.lkv}, *by_mode[mode]);
    t.run();
  }
}

TEST(Attention, ShortBoolMaskMasksTheRestAndAFullyMaskedRowGivesZeros) {
  // total = 3 keys, the mask covers 2: key 2 is masked everywhere; row 1 masks keys 0 and 1 too.
  OpTester t("Attention", 23);
  t.attr("qk_matmul_output_mode", int64_t{3});
  t.input<float>({1, 1, 2, 1}, {1, 2});
  t.input<float>({1, 1, 3, 1}, {0, 1, 5});
  t.input<float>({1, 1, 3, 1}, {10, 20, 30});
  t.input(Tensor::from_vector<bool>({2, 2}, {true, true, false, false}));
  const double p1 = std::exp(1.0) / (1 + std::exp(1.0));  // row 0: scores 0 and 1 (scale 1)
  t.output<float>({1, 1, 2, 1}, {static_cast<float>(10 * (1 - p1) + 20 * p1), 0});
  t.omitted_output().omitted_output();
  t.output<float>({1, 1, 2, 3}, {static_cast<float>(1 - p1), static_cast<float>(p1), 0, 0, 0, 0});
  t.run();
}

TEST(Attention, Version24ExternalCacheAlignsCausalityToEachBatchsLength) {
  // kv holds 4 slots; batch 0 has 3 valid keys, batch 1 has 1. One query per batch, the newest
  // token: it sees keys 0..nonpad-1.
  const Sizes s{.b = 2, .lq = 1, .lkv = 4, .d = 2, .dv = 1};
  const auto q = random_floats(4, 21), k = random_floats(16, 22), v = random_floats(8, 23);
  const std::vector<int64_t> nonpad = {3, 1};
  const Oracle o = attention_oracle(s, q, k, v, 1 / std::sqrt(2.0), 0, [&](int64_t b, int64_t, int64_t, int64_t j) {
    return j >= nonpad[static_cast<size_t>(b)] ? -INFINITY : 0.0;
  });
  OpTester t("Attention", 24);
  t.attr("is_causal", int64_t{1});
  t.input<float>({2, 1, 1, 2}, q).input<float>({2, 1, 4, 2}, k).input<float>({2, 1, 4, 1}, v);
  t.omitted_input().omitted_input().omitted_input();
  t.input<int64_t>({2}, nonpad);
  t.output<float>({2, 1, 1, 1}, o.y);
  t.run();
}

TEST(Attention, Version25WindowOfZeroAttendsToItselfOnly) {
  OpTester t("Attention", 25);
  t.attr("left_window_size", int64_t{0}).attr("right_window_size", int64_t{0});
  t.input<float>({1, 1, 3, 1}, {1, 2, 3}).input<float>({1, 1, 3, 1}, {3, 2, 1});
  t.input<float>({1, 1, 3, 1}, {7, 8, 9});
  t.output<float>({1, 1, 3, 1}, {7, 8, 9});
  t.run();
  // A left window of 1 with causality: query i sees keys i-1 and i.
  const Sizes s{.lq = 3, .lkv = 3};
  const std::vector<float> q = {1, 2, 3}, k = {3, 2, 1}, v = {7, 8, 9};
  const Oracle o = attention_oracle(s, q, k, v, 1.0, 0, [](int64_t, int64_t, int64_t i, int64_t j) {
    return (j > i || i - j > 1) ? -INFINITY : 0.0;
  });
  OpTester w("Attention", 25);
  w.attr("is_causal", int64_t{1}).attr("left_window_size", int64_t{1});
  w.input<float>({1, 1, 3, 1}, q).input<float>({1, 1, 3, 1}, k).input<float>({1, 1, 3, 1}, v);
  w.output<float>({1, 1, 3, 1}, o.y);
  w.run();
}

std::vector<Eigen::half> halves(const std::vector<float>& v) {
  std::vector<Eigen::half> out;
  for (float x : v) out.emplace_back(x);
  return out;
}

TEST(Attention, Float16RoundsEachStepAsOnnxReference) {
  // numpy float16 (ONNX's reference steps: Q*s, K*s, matmul, softcap, softmax, matmul), GQA 2:1,
  // softcap 2. Rounding once from double gives 0.116943359375 for the first element instead.
  OpTester t("Attention", 23);
  t.attr("softcap", 2.0f);
  t.input<Eigen::half>({1, 2, 2, 4},
                       halves({0.50048828125, 1.5888671875, 1.1025390625, -1.099609375, -0.79931640625, 1.494140625,
                               -1.978515625, 1.28515625, 1.1884765625, -0.1282958984375, -0.7880859375,
                               -0.88623046875, -0.98046875, -0.2197265625, 0.0181884765625, 0.2139892578125}));
  t.input<Eigen::half>({1, 1, 3, 4}, halves({1.982421875, 1.1708984375, 0.48876953125, 1.9560546875, -1.138671875,
                                             -1.359375, 0.4501953125, -1.82421875, -1.857421875, 0.0595703125,
                                             -0.1351318359375, 1.6689453125}));
  t.input<Eigen::half>({1, 1, 3, 2},
                       halves({0.51708984375, 0.05645751953125, -0.01250457763671875, -1.009765625, -1.953125,
                               -1.23046875}));
  t.output<Eigen::half>({1, 2, 2, 2}, halves({0.1168212890625, -0.386474609375, -1.107421875, -0.8125,
                                              0.02545166015625, -0.5537109375, -1.0546875, -1.037109375}));
  t.run();
}

TEST(Attention, RefusesWhatItDoesNotImplementOrTheModelGetsWrong) {
  auto base = [](int64_t opset) {
    OpTester t("Attention", opset);
    t.input<float>({1, 2, 1, 2}, {1, 2, 3, 4}).input<float>({1, 1, 1, 2}, {1, 1}).input<float>({1, 1, 1, 2}, {1, 1});
    return t;
  };
  {
    OpTester t = base(23);
    t.attr("softcap", -1.0f);
    t.expect_failure(StatusCode::kUnsupportedAttr, "softcap -1 is not supported");
  }
  {
    OpTester t = base(23);
    t.attr("softmax_precision", int64_t{7});
    t.expect_failure(StatusCode::kUnsupportedAttr, "softmax_precision 7 is not supported");
  }
  {
    OpTester t = base(23);
    t.attr("scale", -0.5f);
    t.expect_failure(StatusCode::kUnsupportedAttr, "takes its square root");
  }
  {
    OpTester t("Attention", 23);
    t.input<float>({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6}).input<float>({1, 2, 1, 2}, {1, 1, 1, 1});
    t.input<float>({1, 2, 1, 2}, {1, 1, 1, 1});
    t.expect_failure(StatusCode::kShapeMismatch, "must be a multiple of kv_num_heads");
  }
  {
    OpTester t = base(23);
    t.input<float>({1, 2}, {0, 0});
    t.expect_failure(StatusCode::kShapeMismatch, "exceeds the total sequence length 1");
  }
  {
    // nonpad_kv_seqlen came with version 24: a version-23 node that has it is refused.
    OpTester t = base(23);
    t.omitted_input().omitted_input().omitted_input().input<int64_t>({1}, {1});
    t.expect_failure(StatusCode::kUnsupportedAttr, "input 6 of Attention-23 is not implemented");
  }
}

// ***** FlexAttention *****

TEST(FlexAttention, GroupedQueriesAgainstOracle) {
  const Sizes s{.b = 1, .hq = 4, .hkv = 2, .lq = 2, .lkv = 3, .d = 4, .dv = 2};
  const auto q = random_floats(32, 31), k = random_floats(24, 32), v = random_floats(12, 33);
  const Oracle o = attention_oracle(s, q, k, v, 0.5, 0, [](int64_t, int64_t, int64_t, int64_t) { return 0.0; });
  OpTester t("FlexAttention", 1, "ai.onnx.preview");
  t.input<float>({1, 4, 2, 4}, q).input<float>({1, 2, 3, 4}, k).input<float>({1, 2, 3, 2}, v);
  t.output<float>({1, 4, 2, 2}, o.y);
  t.run();
}

TEST(FlexAttention, RefusesScoresLargerThanATensorMayBe) {
  // 2^19 queries and keys of size 1: 2^38 scores, refused before anything is allocated.
  const int64_t n = int64_t{1} << 19;
  OpTester t("FlexAttention", 1, "ai.onnx.preview");
  for (int i = 0; i < 3; ++i) t.input(Tensor(DType::kFloat32, {1, 1, n, 1}));
  t.expect_failure(StatusCode::kShapeMismatch, "larger than the 64 GiB limit on one tensor");
}

TEST(FlexAttention, ScoreAndProbGraphsRunOnTheScores) {
  // score_mod adds 1 to every score (no change after softmax) and prob_mod doubles the
  // probabilities: Y is twice plain attention.
  const char* text = R"ONNX(
<ir_version: 10, opset_import: ["" : 26, "ai.onnx.preview" : 1]>
g (float[1,1,2,1] Q, float[1,1,2,1] K, float[1,1,2,1] V) => (float[1,1,2,1] Y) {
  Y = ai.onnx.preview.FlexAttention (Q, K, V)
      <score_mod = s (float[1,1,2,2] x) => (float[1,1,2,2] y) { one = Constant <value_float = 1.0> ()
                                                                 y = Add(x, one) },
       prob_mod = p (float[1,1,2,2] x) => (float[1,1,2,2] y) { two = Constant <value_float = 2.0> ()
                                                                y = Mul(x, two) }>
}
)ONNX";
  Result<Model> model = parse_model_text(text);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ref::ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(*model, PrepareOptions{}).ok());
  TensorMap feeds;
  feeds.set("Q", Tensor::from_vector<float>({1, 1, 2, 1}, {1, 2}));
  feeds.set("K", Tensor::from_vector<float>({1, 1, 2, 1}, {0, 1}));
  feeds.set("V", Tensor::from_vector<float>({1, 1, 2, 1}, {4, 8}));
  Result<TensorMap> out = backend.run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Scores q*k: row 0 [0, 1], row 1 [0, 2] (scale 1).
  const double p0 = std::exp(1.0) / (1 + std::exp(1.0)), p1 = std::exp(2.0) / (1 + std::exp(2.0));
  const Tensor want = Tensor::from_vector<float>(
      {1, 1, 2, 1}, {static_cast<float>(2 * (4 * (1 - p0) + 8 * p0)), static_cast<float>(2 * (4 * (1 - p1) + 8 * p1))});
  EXPECT_EQ(compare_tensors(want, *out->find("Y"), 1e-6, 1e-6), "");
}

}  // namespace
}  // namespace vn::ops::testing
