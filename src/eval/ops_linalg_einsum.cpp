// Reference Einsum: any equation of letter labels and one ellipsis per
// term, explicit ("ij,jk->ik") or implicit ("ij,jk": ellipsis dims, then the
// labels seen once, sorted). A label repeated within a term takes the
// diagonal; labels absent from the output are summed over. The product
// runs over the full label space, so cost is the naive FLOP count.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "eval/ops.h"
#include "eval/ops_linalg_internal.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

constexpr int kLetters = 52;  // a-z then A-Z; ellipsis dims get ids from kLetters up

int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One term: label ids, with -1 standing for the ellipsis.
Result<std::vector<int>> parse_term(const std::string& term, const std::string& eq) {
  std::vector<int> out;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (term.compare(i, 3, "...") != 0 || ellipsis)
        return fail(ErrorCode::kInvalidArgument,
                    "Einsum equation '" + eq + "' has a malformed ellipsis in term '" + term + "'");
      ellipsis = true;
      out.push_back(-1);
      i += 2;
      continue;
    }
    const int id = letter_id(term[i]);
    if (id < 0)
      return fail(ErrorCode::kInvalidArgument, "Einsum equation '" + eq +
                                                   "' has an invalid character '" +
                                                   std::string(1, term[i]) + "'");
    out.push_back(id);
  }
  return out;
}

struct EinsumPlan {
  std::vector<int> out_labels;  // label ids of the output axes
  std::vector<int> sum_labels;  // labels summed over
  std::vector<int64_t> size;    // per label id
  // Per operand, per label id: element stride (sum over repeated axes).
  std::vector<std::vector<int64_t>> strides;
};

Result<EinsumPlan> plan_einsum(const std::string& equation, const std::vector<const Tensor*>& ops) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    HONE_TRY(auto t, parse_term(lhs.substr(start, comma - start), equation));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ops.size())
    return fail(ErrorCode::kInvalidArgument,
                "Einsum equation '" + equation + "' has " + std::to_string(terms.size()) +
                    " input terms but the node has " + std::to_string(ops.size()) + " inputs");
  // Ellipsis rank: the largest number of dims any ellipsis stands for.
  int64_t ell_rank = 0;
  bool any_ellipsis = false;
  std::vector<int64_t> ell_dims(ops.size(), 0);
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto& t = terms[k];
    const bool has_ell = std::find(t.begin(), t.end(), -1) != t.end();
    const int64_t named = static_cast<int64_t>(t.size()) - (has_ell ? 1 : 0);
    const int64_t r = static_cast<int64_t>(ops[k]->rank());
    if (has_ell ? r < named : r != named)
      return fail(ErrorCode::kInvalidArgument,
                  "Einsum input " + std::to_string(k) + " " + ops[k]->describe() +
                      " does not match its term in equation '" + equation + "'");
    any_ellipsis |= has_ell;
    ell_dims[k] = has_ell ? r - named : 0;
    ell_rank = std::max(ell_rank, ell_dims[k]);
  }
  EinsumPlan p;
  const size_t num_labels = kLetters + static_cast<size_t>(ell_rank);
  p.size.assign(num_labels, -1);
  std::vector<int> count(num_labels, 0);
  p.strides.assign(ops.size(), std::vector<int64_t>(num_labels, 0));
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::vector<int64_t> st = strides_of(ops[k]->shape());
    size_t axis = 0;
    auto bind = [&](int label, bool is_ell) -> Result<void> {
      const int64_t d = ops[k]->dim(axis);
      int64_t& s = p.size[static_cast<size_t>(label)];
      if (s == -1 || (is_ell && s == 1)) {
        s = d;
      } else if (d != s && !(is_ell && d == 1)) {
        return fail(ErrorCode::kInvalidArgument,
                    "Einsum label sizes disagree in equation '" + equation + "': input " +
                        std::to_string(k) + " " + ops[k]->describe() + " axis " +
                        std::to_string(axis) + " has " + std::to_string(d) + ", expected " +
                        std::to_string(s));
      }
      if (d != 1 || !is_ell) p.strides[k][static_cast<size_t>(label)] += st[axis];
      ++count[static_cast<size_t>(label)];
      ++axis;
      return {};
    };
    for (int l : terms[k]) {
      if (l >= 0) {
        HONE_CHECK_OK(bind(l, false));
        continue;
      }
      for (int64_t e = 0; e < ell_dims[k]; ++e)
        HONE_CHECK_OK(bind(static_cast<int>(kLetters + ell_rank - ell_dims[k] + e), true));
    }
  }
  // Output labels.
  if (arrow != std::string::npos) {
    HONE_TRY(auto out_term, parse_term(eq.substr(arrow + 2), equation));
    for (int l : out_term) {
      if (l == -1) {
        for (int64_t e = 0; e < ell_rank; ++e)
          p.out_labels.push_back(static_cast<int>(kLetters + e));
        continue;
      }
      if (count[static_cast<size_t>(l)] == 0)
        return fail(ErrorCode::kInvalidArgument,
                    "Einsum output label in '" + equation + "' does not appear in any input");
      if (std::find(p.out_labels.begin(), p.out_labels.end(), l) != p.out_labels.end())
        return fail(ErrorCode::kInvalidArgument,
                    "Einsum output in '" + equation + "' repeats a label");
      p.out_labels.push_back(l);
    }
  } else {
    if (any_ellipsis)
      for (int64_t e = 0; e < ell_rank; ++e) p.out_labels.push_back(static_cast<int>(kLetters + e));
    std::vector<int> once;
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<size_t>(l)] == 1) once.push_back(l);
    // ASCII order: uppercase (ids 26..51) before lowercase (0..25).
    std::stable_sort(once.begin(), once.end(), [](int a, int b) {
      const int ka = a >= 26 ? a - 26 : a + 26, kb = b >= 26 ? b - 26 : b + 26;
      return ka < kb;
    });
    p.out_labels.insert(p.out_labels.end(), once.begin(), once.end());
  }
  for (size_t l = 0; l < num_labels; ++l) {
    if (p.size[l] == -1) p.size[l] = 1;  // unused ellipsis slot
    const bool used = count[l] > 0 || l >= kLetters;
    if (used && std::find(p.out_labels.begin(), p.out_labels.end(), static_cast<int>(l)) ==
                    p.out_labels.end())
      p.sum_labels.push_back(static_cast<int>(l));
  }
  return p;
}

// Element offsets of every point of a label space, per operand.
std::vector<int64_t> space_offsets(const std::vector<int>& labels, const EinsumPlan& p, size_t k) {
  int64_t n = 1;
  for (int l : labels) n *= p.size[static_cast<size_t>(l)];
  std::vector<int64_t> offs(static_cast<size_t>(n));
  std::vector<int64_t> idx(labels.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    offs[static_cast<size_t>(i)] = off;
    for (int64_t a = static_cast<int64_t>(labels.size()) - 1; a >= 0; --a) {
      const size_t l = static_cast<size_t>(labels[static_cast<size_t>(a)]);
      if (++idx[static_cast<size_t>(a)] < p.size[l]) {
        off += p.strides[k][l];
        break;
      }
      off -= p.strides[k][l] * (p.size[l] - 1);
      idx[static_cast<size_t>(a)] = 0;
    }
  }
  return offs;
}

Result<void> einsum(KernelContext& ctx) {
  HONE_TRY(const std::string equation, ops::einsum_equation(ctx.node()));
  std::vector<const Tensor*> ops;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    HONE_TRY(const Tensor* t, ctx.tensor(i));
    ops.push_back(t);
  }
  if (ops.empty()) return fail(ErrorCode::kInvalidArgument, "Einsum needs at least one input");
  for (const Tensor* t : ops)
    if (t->dtype() != ops[0]->dtype())
      return fail(ErrorCode::kInvalidArgument, "Einsum inputs have different dtypes: " +
                                                   ops[0]->describe() + " and " + t->describe());
  HONE_TRY(EinsumPlan p, plan_einsum(equation, ops));
  std::vector<int64_t> out_shape;
  for (int l : p.out_labels) out_shape.push_back(p.size[static_cast<size_t>(l)]);
  Tensor out = Tensor::zeros(ops[0]->dtype(), out_shape);
  HONE_CHECK_OK(dispatch_numeric(ops[0]->dtype(), [&]<class T>() -> Result<void> {
    using Acc = AccOf<T>;
    const size_t n_ops = ops.size();
    std::vector<HostVector<Acc>> vals(n_ops);
    std::vector<std::vector<int64_t>> out_offs(n_ops), sum_offs(n_ops);
    for (size_t k = 0; k < n_ops; ++k) {
      vals[k] = load_acc_as<Acc, T>(ctx.pool(), *ops[k]);
      out_offs[k] = space_offsets(p.out_labels, p, k);
      sum_offs[k] = space_offsets(p.sum_labels, p, k);
    }
    const int64_t n_out = out.numel();
    const int64_t n_sum = static_cast<int64_t>(sum_offs[0].size());
    T* o = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(n_sum * n_ops, 1));
    ctx.pool().parallel_for(
        n_out,
        [&](int64_t o0, int64_t o1) {
          for (int64_t i = o0; i < o1; ++i) {
            Acc acc{0};
            if (n_ops == 2) {
              const Acc* a = vals[0].data() + out_offs[0][static_cast<size_t>(i)];
              const Acc* b = vals[1].data() + out_offs[1][static_cast<size_t>(i)];
              const int64_t* sa = sum_offs[0].data();
              const int64_t* sb = sum_offs[1].data();
              for (int64_t r = 0; r < n_sum; ++r) acc += a[sa[r]] * b[sb[r]];
            } else {
              for (int64_t r = 0; r < n_sum; ++r) {
                Acc prod{1};
                for (size_t k = 0; k < n_ops; ++k)
                  prod *= vals[k][static_cast<size_t>(out_offs[k][static_cast<size_t>(i)] +
                                                      sum_offs[k][static_cast<size_t>(r)])];
                acc += prod;
              }
            }
            o[i] = from_acc<T>(acc);
          }
        },
        grain);
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_linalg_einsum_ops(OpRegistry& r) {
  r.add("Einsum", einsum);
}

}  // namespace hone::eval
