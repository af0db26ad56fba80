// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <vector>

#include "core/ir/dtype.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- Windows -----------------------------------------------------------------------------------

TEST(Windows, PeriodicAndSymmetric) {
  const double c = 0.5 - 0.5 * std::cos(std::numbers::pi / 4);  // 0.1464...
  OpTester hann("HannWindow", 17);
  hann.input<int64_t>({}, {8});
  hann.output<float>({8}, {0, static_cast<float>(c), 0.5f, static_cast<float>(1 - c), 1, static_cast<float>(1 - c),
                           0.5f, static_cast<float>(c)});
  hann.run();
  OpTester sym("HannWindow", 17);
  sym.attr("periodic", int64_t{0});
  sym.input<int32_t>({}, {5});
  sym.output<float>({5}, {0, 0.5f, 1, 0.5f, 0});
  sym.run();
  OpTester hamming("HammingWindow", 17);
  hamming.attr("periodic", int64_t{0}).attr("output_datatype", int64_t{dtype_to_onnx(DType::kFloat64)});
  hamming.input<int64_t>({}, {3});
  hamming.output<double>({3}, {4.0 / 46, 1, 4.0 / 46});  // a0 = 25/46, a1 = 21/46
  hamming.run();
  OpTester blackman("BlackmanWindow", 17);
  blackman.attr("periodic", int64_t{0});
  blackman.input<int64_t>({}, {3});
  blackman.output<float>({3}, {0, 1, 0});
  blackman.tolerance(1e-7, 0);
  blackman.run();
  OpTester one("BlackmanWindow", 17);
  one.attr("periodic", int64_t{0});
  one.input<int64_t>({}, {1});
  one.output<float>({1}, {1});
  one.run();
  OpTester empty("HannWindow", 17);
  empty.input<int64_t>({}, {0});
  empty.output<float>({0}, {});
  empty.run();
}

TEST(Windows, ErrorsNameTheProblem) {
  OpTester n("HannWindow", 17);
  n.input<int64_t>({}, {-1});
  n.expect_failure(StatusCode::kInvalidModel, "size must be non-negative, got -1");
  OpTester d("HammingWindow", 17);
  d.attr("output_datatype", int64_t{8});
  d.input<int64_t>({}, {2});
  d.expect_failure(StatusCode::kUnsupportedDType, "input of type string is not supported");
}

// ---- DFT ---------------------------------------------------------------------------------------

/// Naive DFT in long double, zero-padded or truncated to n; interleaved complex output.
std::vector<double> oracle_dft(const std::vector<std::complex<long double>>& x, size_t n, bool inverse) {
  std::vector<double> out;
  for (size_t k = 0; k < n; ++k) {
    std::complex<long double> sum = 0;
    for (size_t t = 0; t < n && t < x.size(); ++t) {
      const long double angle = (inverse ? 2 : -2) * std::numbers::pi_v<long double> * static_cast<long double>(k * t) /
                                static_cast<long double>(n);
      sum += x[t] * std::polar(1.0L, angle);
    }
    if (inverse) sum /= static_cast<long double>(n);
    out.push_back(static_cast<double>(sum.real()));
    out.push_back(static_cast<double>(sum.imag()));
  }
  return out;
}

TEST(DFT, RealForwardOnesidedAndInverse) {
  // DFT of [1, 2, 3, 4] is [10, -2 + 2i, -2, -2 - 2i].
  OpTester f("DFT", 17);
  f.input<float>({1, 4, 1}, {1, 2, 3, 4});
  f.output<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  f.run();
  OpTester o("DFT", 17);
  o.attr("onesided", int64_t{1});
  o.input<float>({1, 4, 1}, {1, 2, 3, 4});
  o.output<float>({1, 3, 2}, {10, 0, -2, 2, -2, 0});
  o.run();
  OpTester i("DFT", 17);
  i.attr("inverse", int64_t{1});
  i.input<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  i.output<float>({1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0});
  i.run();
}

TEST(DFT, LengthPadsOrTruncatesAndAxisSelectsTheSignalDim) {
  const std::vector<std::complex<long double>> x = {{1, 0.5L}, {2, 0}, {-3, 1}, {4, -2}};
  const std::vector<float> xf = {1, 0.5f, 2, 0, -3, 1, 4, -2};
  for (int64_t n : {6, 2}) {
    OpTester t("DFT", 17);
    t.input<float>({1, 4, 2}, xf).input<int64_t>({}, {n});
    const std::vector<double> want = oracle_dft(x, static_cast<size_t>(n), false);
    t.output<float>({1, n, 2}, std::vector<float>(want.begin(), want.end()));
    t.run();
  }
  // axis 2 of a (1, 2, 3, 1) input: each row of 3 is transformed.
  OpTester a("DFT", 17);
  a.attr("axis", int64_t{2});
  a.input<double>({1, 2, 3, 1}, {1, 2, 3, 4, 5, 6});
  std::vector<double> want = oracle_dft({1, 2, 3}, 3, false);
  const std::vector<double> second = oracle_dft({4, 5, 6}, 3, false);
  want.insert(want.end(), second.begin(), second.end());
  a.output<double>({1, 2, 3, 2}, want);
  a.run();
}

TEST(DFT, OnesidedInverseIsIrfft) {
  // numpy.fft.irfft: [10, -2 + 2i, -2] are the one-sided bins of [1, 2, 3, 4]; the imaginary part
  // of bin 0 (and of the Nyquist bin for an even length) is ignored.
  for (int64_t opset : {17, 20}) {
    OpTester t("DFT", opset);
    t.attr("inverse", int64_t{1}).attr("onesided", int64_t{1});
    t.input<float>({1, 3, 2}, {10, 3, -2, 2, -2, 1});
    t.output<float>({1, 4, 1}, {1, 2, 3, 4});
    t.run();
  }
  // An odd dft_length keeps bin 2 whole: numpy.fft.irfft([10, -2 + 2i, -2 + i], n=5).
  OpTester o("DFT", 17);
  o.attr("inverse", int64_t{1}).attr("onesided", int64_t{1});
  o.input<double>({1, 3, 2}, {10, 0, -2, 2, -2, 1}).input<int64_t>({}, {5});
  o.output<double>({1, 5, 1}, {0.4, 1.40404069, 2.3101944, 2.4898056, 3.39595931});
  o.tolerance(1e-8, 1e-8);
  o.run();
}

TEST(DFT, Version20TakesTheAxisAsAnInput) {
  // Default axis -2 is the last signal dimension; axis 0 transforms across the batch.
  OpTester d("DFT", 20);
  d.input<double>({1, 2, 3, 1}, {1, 2, 3, 4, 5, 6});
  std::vector<double> want = oracle_dft({1, 2, 3}, 3, false);
  const std::vector<double> second = oracle_dft({4, 5, 6}, 3, false);
  want.insert(want.end(), second.begin(), second.end());
  d.output<double>({1, 2, 3, 2}, want);
  d.run();
  OpTester b("DFT", 20);
  b.input<double>({2, 3, 1}, {1, 2, 3, 4, 5, 6}).omitted_input().input<int64_t>({}, {0});
  b.output<double>({2, 3, 2}, {5, 0, 7, 0, 9, 0, -3, 0, -3, 0, -3, 0});
  b.run();
  OpTester l("DFT", 20);
  l.input<double>({2, 3, 1}, {1, 2, 3, 4, 5, 6}).omitted_input().input<int64_t>({}, {-1});
  l.expect_failure(StatusCode::kInvalidModel, "axis -1 must name a dimension other than the last, in [-3, 1]");
}

TEST(DFT, ErrorsNameTheProblem) {
  OpTester c("DFT", 17);
  c.attr("onesided", int64_t{1});
  c.input<float>({1, 2, 2}, {1, 0, 2, 0});
  c.expect_failure(StatusCode::kInvalidModel, "onesided = 1 needs a real input for a forward transform");
  OpTester a("DFT", 17);
  a.attr("axis", int64_t{2});
  a.input<float>({1, 2, 1}, {1, 2});
  a.expect_failure(StatusCode::kInvalidModel, "axis 2 must name a dimension other than the last, in [-3, 1]");
  OpTester l("DFT", 17);
  l.input<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  l.expect_failure(StatusCode::kShapeMismatch, "with a last dimension of 1 (real) or 2 (complex)");
}

// ---- STFT --------------------------------------------------------------------------------------

TEST(STFT, FramesWithAndWithoutAWindow) {
  // Frames of 4 every 2 samples of 0..7: each DFT is [sum, -2 + 2i, -2] one-sided.
  OpTester t("STFT", 17);
  t.input<float>({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7}).input<int64_t>({}, {2}).omitted_input().input<int64_t>({}, {4});
  t.output<float>({1, 3, 3, 2}, {6, 0, -2, 2, -2, 0, 14, 0, -2, 2, -2, 0, 22, 0, -2, 2, -2, 0});
  t.run();
  // Window [0, 1, 1, 0] keeps the middle two samples a, b: DFT [a + b, -b - ai, b - a].
  OpTester w("STFT", 17);
  w.input<float>({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7}).input<int64_t>({}, {2}).input<float>({4}, {0, 1, 1, 0});
  w.output<float>({1, 3, 3, 2}, {3, 0, -2, -1, 1, 0, 7, 0, -4, -3, 1, 0, 11, 0, -6, -5, 1, 0});
  w.run();
  OpTester full("STFT", 17);
  full.attr("onesided", int64_t{0});
  full.input<float>({1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0}).input<int64_t>({}, {4}).omitted_input();
  full.input<int64_t>({}, {4});
  full.output<float>({1, 1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  full.run();
}

TEST(STFT, ErrorsNameTheProblem) {
  OpTester m("STFT", 17);
  m.input<float>({1, 8, 1}, std::vector<float>(8, 0)).input<int64_t>({}, {2}).input<float>({4}, {1, 1, 1, 1});
  m.input<int64_t>({}, {3});
  m.expect_failure(StatusCode::kShapeMismatch, "frame_length 3 differs from the window length 4");
  OpTester s("STFT", 17);
  s.input<float>({1, 8, 1}, std::vector<float>(8, 0)).input<int64_t>({}, {0}).omitted_input().input<int64_t>({}, {4});
  s.expect_failure(StatusCode::kInvalidModel, "frame_step must be positive, got 0");
  OpTester n("STFT", 17);
  n.input<float>({1, 8, 1}, std::vector<float>(8, 0)).input<int64_t>({}, {2});
  n.expect_failure(StatusCode::kInvalidModel, "one of window and frame_length must be given");
}

// ---- MelWeightMatrix ---------------------------------------------------------------------------

TEST(MelWeightMatrix, TriangularFiltersOnMelSpacedBins) {
  // 0..500 Hz in 2 + 2 mel-spaced edges: 0, 101.0, 216.5, 348.7 Hz, i.e. DFT bins
  // floor(17 * hz / 1000) = 0, 1, 3, 5; filter 0 rises over bins 0..1 and falls to bin 3, filter 1
  // rises over 1..3 and falls to 5.
  OpTester t("MelWeightMatrix", 17);
  t.input<int32_t>({}, {2}).input<int32_t>({}, {16}).input<int32_t>({}, {1000});
  t.input<float>({}, {0}).input<float>({}, {500});
  t.output<float>({9, 2}, {0, 0, 1, 0, 0.5f, 0.5f, 0, 1, 0, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0});
  t.run();
}

TEST(MelWeightMatrix, ErrorsNameTheProblem) {
  OpTester t("MelWeightMatrix", 17);
  t.input<int32_t>({}, {0}).input<int32_t>({}, {16}).input<int32_t>({}, {1000});
  t.input<float>({}, {0}).input<float>({}, {500});
  t.expect_failure(StatusCode::kInvalidModel,
                   "num_mel_bins (0), dft_length (16) and sample_rate (1000) must be positive");
  OpTester e("MelWeightMatrix", 17);
  e.input<int32_t>({}, {2}).input<int32_t>({}, {16}).input<int32_t>({}, {1000});
  e.input<float>({}, {300}).input<float>({}, {200});
  e.expect_failure(StatusCode::kInvalidModel,
                   "edges must satisfy 0 <= lower_edge_hertz (300) <= upper_edge_hertz (200)");
}

}  // namespace
}  // namespace vn::ops::testing
