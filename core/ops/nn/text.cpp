// SPDX-License-Identifier: Apache-2.0
// Text features of classic ML pipelines (scikit-learn text vectorizers exported to ONNX):
// StringNormalizer (stopword removal and case folding) and TfIdfVectorizer (n-gram counts with
// skips, optionally IDF-weighted).
//
// Case handling is ASCII-only: letters outside A-Z/a-z (UTF-8 multi-byte sequences included) are
// left unchanged and compare as distinct bytes. The `locale` attribute is therefore not consulted.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string ascii_upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

// ---- StringNormalizer --------------------------------------------------------------------------

// StringNormalizer-10: X is [C] or [1, C]. Removes the stopwords (case-insensitively unless
// is_case_sensitive), then applies case_change_action. When nothing is left the output is a single
// empty string, shaped [1] or [1, 1].
Status string_normalizer(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kString) return unsupported_dtype(ctx, x.dtype(), {DType::kString});
  if (!(x.rank() == 1 || (x.rank() == 2 && x.dim(0) == 1))) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be [C] or [1, C], got {}", shape_to_string(x.shape()));
  }
  const std::string action = ctx.attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return ctx.fail(StatusCode::kInvalidModel, "case_change_action '{}' is not one of NONE, LOWER, UPPER", action);
  }
  const bool case_sensitive = ctx.attr_int("is_case_sensitive", 0) != 0;
  std::vector<std::string> stopwords;
  if (const Attribute* a = ctx.attr("stopwords")) {
    if (a->type != AttrType::kStrings) {
      return ctx.fail(StatusCode::kInvalidModel, "attribute 'stopwords' must be a list of strings");
    }
    for (const std::string& w : a->strings) stopwords.push_back(case_sensitive ? w : ascii_lower(w));
  }
  std::vector<std::string> kept;
  for (const std::string& s : x.values<std::string>()) {
    const std::string key = case_sensitive ? s : ascii_lower(s);
    if (std::find(stopwords.begin(), stopwords.end(), key) != stopwords.end()) continue;
    kept.push_back(action == "LOWER" ? ascii_lower(s) : (action == "UPPER" ? ascii_upper(s) : s));
  }
  if (kept.empty()) kept.emplace_back();
  const auto c = static_cast<int64_t>(kept.size());
  const Shape out_shape = x.rank() == 1 ? Shape{c} : Shape{1, c};
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, out_shape));
  std::move(kept.begin(), kept.end(), y->mutable_data<std::string>());
  return Status::OK();
}

// ---- TfIdfVectorizer ---------------------------------------------------------------------------

/// The pool of n-grams: each n-gram (as a token vector) mapped to its pool position.
template <typename Token>
struct NgramPool {
  std::map<std::vector<Token>, size_t> ids;
  std::vector<bool> has_level;  // [n]: whether the pool holds any n-gram of length n
};

template <typename Token>
Result<NgramPool<Token>> build_pool(const KernelContext& ctx, const std::vector<Token>& items,
                                    const std::vector<int64_t>& counts, int64_t max_n, size_t ngrams) {
  NgramPool<Token> pool;
  pool.has_level.assign(static_cast<size_t>(max_n) + 1, false);
  size_t id = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(items.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(items.size()) || (end - begin) % n != 0) {
      return ctx.fail(StatusCode::kInvalidModel,
                      "ngram_counts does not split the pool of {} items into whole {}-grams (level {} spans [{}, {}))",
                      items.size(), n, n, begin, end);
    }
    if (n <= max_n && end > begin) pool.has_level[static_cast<size_t>(n)] = true;
    for (int64_t at = begin; at < end; at += n) {
      pool.ids.emplace(std::vector<Token>(items.begin() + at, items.begin() + at + n), id++);
    }
  }
  if (id != ngrams) {
    return ctx.fail(StatusCode::kInvalidModel, "the pool holds {} n-grams but ngram_indexes has {} entries", id,
                    ngrams);
  }
  return pool;
}

/// Counts the pool's n-grams in each row of `tokens` (rows × cols) into `counts` (rows × pool size).
template <typename Token>
void count_ngrams(const NgramPool<Token>& pool, const std::vector<Token>& tokens, int64_t rows, int64_t cols,
                  int64_t min_n, int64_t max_n, int64_t max_skip, std::vector<double>& counts, size_t pool_size) {
  std::vector<Token> key;
  for (int64_t r = 0; r < rows; ++r) {
    const Token* row = tokens.data() + r * cols;
    double* out = counts.data() + static_cast<size_t>(r) * pool_size;
    for (int64_t start = 0; start < cols; ++start) {
      for (int64_t n = std::max<int64_t>(min_n, 1); n <= max_n; ++n) {
        if (!pool.has_level[static_cast<size_t>(n)]) continue;
        // A 1-gram has no gaps, so it is counted once rather than once per skip.
        const int64_t skips = n == 1 ? 0 : max_skip;
        for (int64_t s = 0; s <= skips; ++s) {
          const int64_t step = s + 1;
          if (start + (n - 1) * step >= cols) break;
          key.clear();
          for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * step]);
          const auto it = pool.ids.find(key);
          if (it != pool.ids.end()) out[it->second] += 1.0;
        }
      }
    }
  }
}

// TfIdfVectorizer-9: X is [C] or [N, C] of int32, int64 or strings; Y is float32 [max index + 1]
// or [N, max index + 1].
Status tfidf_vectorizer(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1 && x.rank() != 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be [C] or [N, C], got {}", shape_to_string(x.shape()));
  }
  const int64_t min_n = ctx.attr_int("min_gram_length", 0);
  const int64_t max_n = ctx.attr_int("max_gram_length", 0);
  const int64_t max_skip = ctx.attr_int("max_skip_count", 0);
  if (min_n < 1 || max_n < min_n || max_skip < 0) {
    return ctx.fail(StatusCode::kInvalidModel,
                    "need 1 <= min_gram_length ({}) <= max_gram_length ({}) and max_skip_count ({}) >= 0", min_n, max_n,
                    max_skip);
  }
  const std::string mode = ctx.attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not one of TF, IDF, TFIDF", mode);
  }
  const std::vector<int64_t> ngram_counts = ctx.attr_ints("ngram_counts");
  const std::vector<int64_t> ngram_indexes = ctx.attr_ints("ngram_indexes");
  if (ngram_indexes.empty() ||
      std::any_of(ngram_indexes.begin(), ngram_indexes.end(), [](int64_t i) { return i < 0; })) {
    return ctx.fail(StatusCode::kInvalidModel, "ngram_indexes must be a non-empty list of non-negative indices");
  }
  const std::vector<float> weights = ctx.attr_floats("weights");
  if (!weights.empty() && weights.size() != ngram_indexes.size()) {
    return ctx.fail(StatusCode::kInvalidModel, "weights has {} entries but ngram_indexes has {}", weights.size(),
                    ngram_indexes.size());
  }
  const bool int_pool = ctx.has_attr("pool_int64s");
  if (int_pool == ctx.has_attr("pool_strings")) {
    return ctx.fail(StatusCode::kInvalidModel, "exactly one of pool_int64s and pool_strings must be set");
  }
  const bool string_input = x.dtype() == DType::kString;
  if (string_input == int_pool) {
    return ctx.fail(StatusCode::kInvalidModel, "X of type {} does not match {}", dtype_name(x.dtype()),
                    int_pool ? "pool_int64s (X must be int32 or int64)" : "pool_strings (X must be strings)");
  }
  if (!string_input && x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64) {
    return unsupported_dtype(ctx, x.dtype(), {DType::kString, DType::kInt32, DType::kInt64});
  }
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t cols = x.dim(x.rank() - 1);
  const int64_t width = *std::max_element(ngram_indexes.begin(), ngram_indexes.end()) + 1;
  const size_t pool_size = ngram_indexes.size();
  std::vector<double> counts(static_cast<size_t>(rows) * pool_size, 0.0);
  if (int_pool) {
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> tokens, tensor_to_int64s(x));
    VN_ASSIGN_OR_RETURN(NgramPool<int64_t> pool,
                        build_pool<int64_t>(ctx, ctx.attr_ints("pool_int64s"), ngram_counts, max_n, pool_size));
    count_ngrams<int64_t>(pool, tokens, rows, cols, min_n, max_n, max_skip, counts, pool_size);
  } else {
    const Attribute* a = ctx.attr("pool_strings");
    if (a->type != AttrType::kStrings) {
      return ctx.fail(StatusCode::kInvalidModel, "attribute 'pool_strings' must be a list of strings");
    }
    const std::vector<std::string> tokens(x.values<std::string>().begin(), x.values<std::string>().end());
    VN_ASSIGN_OR_RETURN(NgramPool<std::string> pool,
                        build_pool<std::string>(ctx, a->strings, ngram_counts, max_n, pool_size));
    count_ngrams<std::string>(pool, tokens, rows, cols, min_n, max_n, max_skip, counts, pool_size);
  }
  const Shape out_shape = x.rank() == 2 ? Shape{rows, width} : Shape{width};
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out_shape));
  if (y->numel() == 0) return Status::OK();
  float* py = y->mutable_data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < pool_size; ++i) {
      double v = counts[static_cast<size_t>(r) * pool_size + i];
      if (mode == "IDF") v = v > 0.0 ? 1.0 : 0.0;
      if (mode != "TF" && !weights.empty()) v *= weights[i];
      py[r * width + ngram_indexes[i]] = static_cast<float>(v);
    }
  }
  return Status::OK();
}

}  // namespace

void register_text_ops(OpRegistry& registry) {
  registry.add("StringNormalizer", 10, string_normalizer);
  registry.add("TfIdfVectorizer", 9, tfidf_vectorizer);
}

}  // namespace vn::ops
