// SPDX-License-Identifier: Apache-2.0
// Einsum with numpy's equation language: explicit ("ij,jk->ik") and implicit ("ij,jk") outputs,
// repeated labels within an operand (diagonals, "ii->i"), labels summed away, and "..." for
// broadcast dimensions.
//
// Every label gets one loop; an operand's stride for a label is the sum of its strides at the
// positions carrying that label (which walks a diagonal for a repeated label) and 0 where an
// ellipsis dimension of size 1 broadcasts or the label is absent from the operand.
//
// Two float operands (the common contraction, e.g. attention's "bhqd,bhkd->bhqk") become one
// batched GEMM: the loops are sorted into batch (in both operands and the output), M (first
// operand and output), N (second operand and output) and K (summed) groups, each operand is
// gathered through its strides into [batch, M, K] / [batch, K, N] order, and the product is
// scattered into the output order. Other cases run the loops directly, the output loops outside
// and the summed ones inside; their float products accumulate in double and integer ones wrap
// modulo 2^n.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

// Label ids: 0-51 for the letters a-z, A-Z; 52 + j for the j-th broadcast (ellipsis) dimension.
constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

int letter_id(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
  return -2;
}

/// Sort key giving numpy's implicit-output order (character codes: uppercase before lowercase).
int letter_order(int id) { return id < 26 ? 'a' + id : 'A' + (id - 26); }

/// Parses one term ("ij", "...ij", "") into letter ids with kEllipsis for "...".
Result<std::vector<int>> parse_term(const KernelContext& ctx, std::string_view term) {
  std::vector<int> labels;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (term.substr(i, 3) != "..." || seen_ellipsis) {
        return ctx.fail(StatusCode::kInvalidModel, "equation term '{}' has a '.' outside a single '...'", term);
      }
      seen_ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int id = letter_id(term[i]);
    if (id < 0) {
      return ctx.fail(StatusCode::kInvalidModel, "equation term '{}' has the character '{}'; labels are letters", term,
                      term[i]);
    }
    labels.push_back(id);
  }
  return labels;
}

struct EinsumPlan {
  std::vector<int64_t> dims;                  // one per loop: output labels first, then summed ones
  size_t out_loops = 0;                       // the first out_loops loops index the output
  std::vector<std::vector<int64_t>> strides;  // [operand][loop]
  std::vector<std::vector<bool>> present;     // [operand][loop]: the operand carries the label
  Shape out_shape;
};

Result<EinsumPlan> plan_einsum(const KernelContext& ctx, std::string equation) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  const size_t n = ctx.input_count();
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    VN_ASSIGN_OR_RETURN(std::vector<int> t, parse_term(ctx, std::string_view(lhs).substr(start, comma - start)));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != n) {
    return ctx.fail(StatusCode::kInvalidModel, "equation '{}' has {} input terms but the node has {} inputs", equation,
                    terms.size(), n);
  }
  // Expand each "..." into broadcast label ids, right-aligned across operands.
  size_t ellipsis_rank = 0;
  std::vector<size_t> operand_ellipsis(n, 0);
  for (size_t k = 0; k < n; ++k) {
    if (!ctx.has_input(k)) return ctx.fail(StatusCode::kInvalidModel, "input {} is missing", k);
    const auto rank = static_cast<size_t>(ctx.input(k).rank());
    const bool has = std::find(terms[k].begin(), terms[k].end(), kEllipsis) != terms[k].end();
    const size_t letters = terms[k].size() - (has ? 1 : 0);
    if (has ? letters > rank : letters != rank) {
      return ctx.fail(StatusCode::kShapeMismatch, "equation term {} has {} labels but input {} has rank {}", k, letters,
                      k, rank);
    }
    operand_ellipsis[k] = has ? rank - letters : 0;
    ellipsis_rank = std::max(ellipsis_rank, operand_ellipsis[k]);
  }
  std::vector<std::vector<int>> labels(n);  // per operand, one id per dim
  for (size_t k = 0; k < n; ++k) {
    for (int id : terms[k]) {
      if (id != kEllipsis) {
        labels[k].push_back(id);
        continue;
      }
      for (size_t j = ellipsis_rank - operand_ellipsis[k]; j < ellipsis_rank; ++j) {
        labels[k].push_back(kLetters + static_cast<int>(j));
      }
    }
  }
  const int total_ids = kLetters + static_cast<int>(ellipsis_rank);
  std::vector<int64_t> size(static_cast<size_t>(total_ids), -1);
  std::vector<int> count(static_cast<size_t>(total_ids), 0);
  for (size_t k = 0; k < n; ++k) {
    const Tensor& t = ctx.input(k);
    for (size_t d = 0; d < labels[k].size(); ++d) {
      const int id = labels[k][d];
      const int64_t dim = t.dim(static_cast<int64_t>(d));
      int64_t& s = size[static_cast<size_t>(id)];
      ++count[static_cast<size_t>(id)];
      if (s < 0 || (id >= kLetters && s == 1)) {
        s = dim;
      } else if (dim != s && !(id >= kLetters && dim == 1)) {
        return ctx.fail(StatusCode::kShapeMismatch, "dimension {} of input {} has size {} but its label has size {}", d,
                        k, dim, s);
      }
    }
  }
  // Output labels.
  std::vector<int> out;
  if (arrow != std::string::npos) {
    VN_ASSIGN_OR_RETURN(std::vector<int> t, parse_term(ctx, std::string_view(equation).substr(arrow + 2)));
    for (int id : t) {
      if (id == kEllipsis) {
        for (size_t j = 0; j < ellipsis_rank; ++j) out.push_back(kLetters + static_cast<int>(j));
        continue;
      }
      if (count[static_cast<size_t>(id)] == 0) {
        return ctx.fail(StatusCode::kInvalidModel, "output label '{}' of '{}' appears in no input",
                        static_cast<char>(letter_order(id)), equation);
      }
      if (std::find(out.begin(), out.end(), id) != out.end()) {
        return ctx.fail(StatusCode::kInvalidModel, "output label '{}' of '{}' is repeated",
                        static_cast<char>(letter_order(id)), equation);
      }
      out.push_back(id);
    }
  } else {
    // numpy's implicit output: the broadcast dims, then the letters used exactly once, sorted.
    for (size_t j = 0; j < ellipsis_rank; ++j) out.push_back(kLetters + static_cast<int>(j));
    std::vector<int> once;
    for (int id = 0; id < kLetters; ++id) {
      if (count[static_cast<size_t>(id)] == 1) once.push_back(id);
    }
    std::sort(once.begin(), once.end(), [](int a, int b) { return letter_order(a) < letter_order(b); });
    out.insert(out.end(), once.begin(), once.end());
  }
  EinsumPlan p;
  std::vector<int> loops = out;
  p.out_loops = out.size();
  for (int id = 0; id < total_ids; ++id) {
    if (count[static_cast<size_t>(id)] > 0 && std::find(out.begin(), out.end(), id) == out.end()) loops.push_back(id);
  }
  for (int id : loops) p.dims.push_back(size[static_cast<size_t>(id)]);
  p.out_shape.assign(p.dims.begin(), p.dims.begin() + static_cast<std::ptrdiff_t>(p.out_loops));
  p.strides.assign(n, std::vector<int64_t>(loops.size(), 0));
  p.present.assign(n, std::vector<bool>(loops.size(), false));
  for (size_t k = 0; k < n; ++k) {
    const Tensor& t = ctx.input(k);
    int64_t stride = 1;
    for (size_t d = labels[k].size(); d-- > 0;) {
      const int64_t dim = t.dim(static_cast<int64_t>(d));
      const size_t loop = static_cast<size_t>(std::find(loops.begin(), loops.end(), labels[k][d]) - loops.begin());
      p.present[k][loop] = true;
      if (dim != 1 || p.dims[loop] == 1) p.strides[k][loop] += stride;
      stride *= dim;
    }
  }
  return p;
}

template <typename T>
using EinsumAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T>
void run_einsum(const EinsumPlan& p, const std::vector<const T*>& in, T* out) {
  using A = EinsumAcc<T>;
  const size_t loops = p.dims.size();
  const size_t n = in.size();
  int64_t out_count = 1, sum_count = 1;
  for (size_t l = 0; l < loops; ++l) (l < p.out_loops ? out_count : sum_count) *= p.dims[l];
  std::vector<int64_t> idx(loops, 0);
  std::vector<int64_t> off(n, 0);
  // Odometer step over loops [first, last): advances idx and the operand offsets.
  auto advance = [&](size_t first, size_t last) {
    for (size_t l = last; l-- > first;) {
      ++idx[l];
      for (size_t k = 0; k < n; ++k) off[k] += p.strides[k][l];
      if (idx[l] < p.dims[l]) return;
      for (size_t k = 0; k < n; ++k) off[k] -= p.strides[k][l] * p.dims[l];
      idx[l] = 0;
    }
  };
  for (int64_t o = 0; o < out_count; ++o) {
    A acc = A(0);
    for (int64_t s = 0; s < sum_count; ++s) {
      A prod = A(1);
      for (size_t k = 0; k < n; ++k) prod = static_cast<A>(prod * static_cast<A>(in[k][off[k]]));
      acc = static_cast<A>(acc + prod);
      advance(p.out_loops, loops);
    }
    out[o] = static_cast<T>(acc);
    advance(0, p.out_loops);
  }
}

/// Copies the strided view (`shape`, element `strides`) of `src` into the dense buffer `dst`.
template <typename T>
void gather_view(const T* src, const Shape& shape, const Shape& strides, T* dst) {
  const Shape all[] = {contiguous_strides(shape), strides};
  const StridedLoop loop(shape, all);
  const int64_t n = loop.row_size();
  const int64_t step = loop.inner_stride(1);
  loop.for_each_row([&](int64_t dense, const int64_t* off) {
    const T* from = src + off[1];
    T* to = dst + dense;
    for (int64_t i = 0; i < n; ++i) to[i] = from[i * step];
  });
}

/// The two-operand contraction as a batched GEMM (see the file comment).
template <typename T>
void run_einsum_gemm(const EinsumPlan& p, const T* a, const T* b, T* y) {
  std::vector<size_t> batch, m, n, k;
  for (size_t l = 0; l < p.dims.size(); ++l) {
    if (l >= p.out_loops) {
      k.push_back(l);
    } else if (p.present[0][l] && p.present[1][l]) {
      batch.push_back(l);
    } else {
      (p.present[0][l] ? m : n).push_back(l);
    }
  }
  auto product = [&](const std::vector<size_t>& group) {
    int64_t v = 1;
    for (size_t l : group) v *= p.dims[l];
    return v;
  };
  const int64_t bs = product(batch), ms = product(m), ns = product(n), ks = product(k);
  // The view of operand `op` with its loops in the order of `groups`.
  auto view = [&](size_t op, std::initializer_list<const std::vector<size_t>*> groups, Shape& shape, Shape& strides) {
    for (const std::vector<size_t>* g : groups) {
      for (size_t l : *g) {
        shape.push_back(p.dims[l]);
        strides.push_back(p.strides[op][l]);
      }
    }
  };
  std::vector<T> ap(static_cast<size_t>(bs * ms * ks)), bp(static_cast<size_t>(bs * ks * ns));
  std::vector<T> r(static_cast<size_t>(bs * ms * ns), T(0));
  Shape shape, strides;
  view(0, {&batch, &m, &k}, shape, strides);
  gather_view(a, shape, strides, ap.data());
  shape.clear();
  strides.clear();
  view(1, {&batch, &k, &n}, shape, strides);
  gather_view(b, shape, strides, bp.data());
  if (ks > 0) {
    for (int64_t i = 0; i < bs; ++i) {
      MatrixMap<T> rm(r.data() + i * ms * ns, ms, ns);
      rm.noalias() =
          ConstMatrixMap<T>(ap.data() + i * ms * ks, ms, ks) * ConstMatrixMap<T>(bp.data() + i * ks * ns, ks, ns);
    }
  }
  // r is dense [batch, M, N]; read it back in the output's loop order.
  std::vector<int64_t> r_stride(p.dims.size(), 0);
  int64_t stride = 1;
  for (const std::vector<size_t>* g : {&n, &m, &batch}) {
    for (size_t i = g->size(); i-- > 0;) {
      r_stride[(*g)[i]] = stride;
      stride *= p.dims[(*g)[i]];
    }
  }
  Shape out_strides(r_stride.begin(), r_stride.begin() + static_cast<std::ptrdiff_t>(p.out_loops));
  gather_view(r.data(), p.out_shape, out_strides, y);
}

Status einsum(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("equation")) return ctx.fail(StatusCode::kInvalidModel, "attribute equation is required");
  const DType dtype = ctx.input(0).dtype();
  for (size_t k = 1; k < ctx.input_count(); ++k) {
    if (ctx.has_input(k) && ctx.input(k).dtype() != dtype) {
      return ctx.fail(StatusCode::kInvalidModel, "input {} is {} but input 0 is {}; all inputs must have the same type",
                      k, dtype_name(ctx.input(k).dtype()), dtype_name(dtype));
    }
  }
  VN_ASSIGN_OR_RETURN(EinsumPlan plan, plan_einsum(ctx, ctx.attr_string("equation", "")));
  return dispatch_types(NumericTypes{}, ctx, dtype, [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, plan.out_shape));
    if (y->numel() == 0) return Status::OK();
    std::vector<const T*> in;
    for (size_t k = 0; k < ctx.input_count(); ++k) in.push_back(ctx.input(k).data<T>());
    if constexpr (std::is_floating_point_v<T>) {
      if (in.size() == 2) {
        run_einsum_gemm<T>(plan, in[0], in[1], y->mutable_data<T>());
        return Status::OK();
      }
    }
    run_einsum<T>(plan, in, y->mutable_data<T>());
    return Status::OK();
  });
}

}  // namespace

// Einsum-28 only added bfloat16.
void register_einsum_ops(OpRegistry& registry) {
  for (int64_t v : {12, 28}) registry.add("Einsum", v, einsum);
}

}  // namespace vn::ops
