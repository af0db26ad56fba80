// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

using Strings = std::vector<std::string>;

TEST(StringNormalizer, StopwordsAndCaseChange) {
  OpTester t("StringNormalizer", 10);
  t.attr("stopwords", Strings{"monday"}).attr("case_change_action", "UPPER");
  t.input<std::string>({1, 4}, {"Monday", "tuesday", "MONDAY", "Wed-3"});
  t.output<std::string>({1, 2}, {"TUESDAY", "WED-3"});
  t.run();
  OpTester s("StringNormalizer", 10);
  s.attr("stopwords", Strings{"monday"}).attr("is_case_sensitive", int64_t{1}).attr("case_change_action", "LOWER");
  s.input<std::string>({3}, {"Monday", "monday", "TUESDAY"});
  s.output<std::string>({2}, {"monday", "tuesday"});
  s.run();
}

TEST(StringNormalizer, EverythingRemovedLeavesOneEmptyString) {
  OpTester t("StringNormalizer", 10);
  t.attr("stopwords", Strings{"a"});
  t.input<std::string>({2}, {"a", "A"});
  t.output<std::string>({1}, {""});
  t.run();
  OpTester m("StringNormalizer", 10);
  m.attr("stopwords", Strings{"a"});
  m.input<std::string>({1, 1}, {"a"});
  m.output<std::string>({1, 1}, {""});
  m.run();
}

TEST(StringNormalizer, Errors) {
  OpTester s("StringNormalizer", 10);
  s.input<std::string>({2, 2}, {"a", "b", "c", "d"});
  s.expect_failure(StatusCode::kShapeMismatch, "X must be [C] or [1, C], got (2, 2)");
  OpTester a("StringNormalizer", 10);
  a.attr("case_change_action", "TITLE");
  a.input<std::string>({1}, {"a"});
  a.expect_failure(StatusCode::kInvalidModel, "case_change_action 'TITLE' is not one of NONE, LOWER, UPPER");
  OpTester d("StringNormalizer", 10);
  d.input<float>({1}, {1});
  d.expect_failure(StatusCode::kUnsupportedDType, "input of type float32 is not supported (supported: string)");
}

// The pool of ONNX's TfIdfVectorizer examples: 1-grams 2, 3, 5, 4 and 2-grams (5, 6), (7, 8), (6, 7).
void set_pool(OpTester& t, int64_t min_n, int64_t max_n, int64_t skip, const char* mode) {
  t.attr("min_gram_length", min_n).attr("max_gram_length", max_n).attr("max_skip_count", skip).attr("mode", mode);
  t.attr("ngram_counts", Shape{0, 4}).attr("ngram_indexes", Shape{0, 1, 2, 3, 4, 5, 6});
  t.attr("pool_int64s", Shape{2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
}

TEST(TfIdfVectorizer, CountsWithSkipsPerRow) {
  const std::vector<int32_t> x = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  OpTester t("TfIdfVectorizer", 9);
  set_pool(t, 1, 2, 5, "TF");
  t.input<int32_t>({12}, x);
  // 3 appears three times, 5 once; (7, 8) at distances 1, 3 and 6 (skips 0, 2, 5).
  t.output<float>({7}, {0, 3, 1, 0, 1, 3, 1});
  t.run();
  OpTester b("TfIdfVectorizer", 9);
  set_pool(b, 2, 2, 0, "TF");
  b.input<int64_t>({2, 6}, std::vector<int64_t>(x.begin(), x.end()));
  b.output<float>({2, 7}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1});
  b.run();
}

TEST(TfIdfVectorizer, IdfAndTfIdfWeightsAndStrings) {
  const std::vector<int32_t> x = {3, 3, 5};
  OpTester idf("TfIdfVectorizer", 9);
  set_pool(idf, 1, 1, 0, "IDF");
  idf.attr("weights", std::vector<float>{1, 2, 3, 4, 5, 6, 7});
  idf.input<int32_t>({3}, x);
  idf.output<float>({7}, {0, 2, 3, 0, 0, 0, 0});
  idf.run();
  OpTester tfidf("TfIdfVectorizer", 9);
  set_pool(tfidf, 1, 1, 0, "TFIDF");
  tfidf.attr("weights", std::vector<float>{1, 2, 3, 4, 5, 6, 7});
  tfidf.input<int32_t>({3}, x);
  tfidf.output<float>({7}, {0, 4, 3, 0, 0, 0, 0});
  tfidf.run();
  OpTester s("TfIdfVectorizer", 9);
  s.attr("min_gram_length", int64_t{1}).attr("max_gram_length", int64_t{2}).attr("max_skip_count", int64_t{0});
  s.attr("mode", "TF").attr("ngram_counts", Shape{0, 2}).attr("ngram_indexes", Shape{2, 0, 1});
  s.attr("pool_strings", Strings{"a", "b", "a", "b"});
  s.input<std::string>({4}, {"a", "b", "a", "b"});
  // "a" ×2 → column 2, "b" ×2 → column 0, ("a", "b") ×2 → column 1.
  s.output<float>({3}, {2, 2, 2});
  s.run();
}

TEST(TfIdfVectorizer, Errors) {
  OpTester p("TfIdfVectorizer", 9);
  set_pool(p, 1, 2, 0, "TF");
  p.input<std::string>({1}, {"a"});
  p.expect_failure(StatusCode::kInvalidModel, "X of type string does not match pool_int64s");
  OpTester m("TfIdfVectorizer", 9);
  set_pool(m, 1, 2, 0, "BM25");
  m.input<int32_t>({1}, {1});
  m.expect_failure(StatusCode::kInvalidModel, "mode 'BM25' is not one of TF, IDF, TFIDF");
  OpTester c("TfIdfVectorizer", 9);
  c.attr("min_gram_length", int64_t{1}).attr("max_gram_length", int64_t{2}).attr("mode", "TF");
  c.attr("ngram_counts", Shape{0, 3}).attr("ngram_indexes", Shape{0, 1, 2, 3, 4, 5, 6});
  c.attr("pool_int64s", Shape{2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
  c.input<int32_t>({1}, {1});
  c.expect_failure(StatusCode::kInvalidModel, "ngram_counts does not split the pool of 10 items into whole 2-grams");
}

}  // namespace
}  // namespace vn::ops::testing
