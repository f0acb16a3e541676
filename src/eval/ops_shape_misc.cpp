// Reference kernels that summarize a tensor's contents: Unique and
// TfIdfVectorizer.
#include <algorithm>
#include <map>
#include <numeric>

#include "eval/kernel_util.h"
#include "eval/ops_shape_internal.h"
#include "hone/shape.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

using namespace shape_detail;

template <class T>
bool value_less(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return a.to_float() < b.to_float();
  else
    return a < b;
}

Result<void> unique(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const bool sorted = ctx.node().attr_int("sorted", 1) != 0;
  const bool flat = !ctx.node().has_attr("axis");
  int64_t axis = 0, outer = 1, inner = 1, n = x->numel();
  if (!flat) {
    HONE_TRY(axis, normalize_axis(ops::axis_attr(ctx.node()), static_cast<int64_t>(x->rank()),
                                  "Unique axis"));
    n = x->dim(axis);
    for (int64_t a = 0; a < axis; ++a) outer *= x->dim(a);
    for (int64_t a = axis + 1; a < static_cast<int64_t>(x->rank()); ++a) inner *= x->dim(a);
  }
  // Slice i is every element x[o, i, in]; slices compare lexicographically.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> group_of(static_cast<size_t>(n));  // slice -> group id (by first sort)
  std::vector<int64_t> first, counts;                     // per group
  HONE_CHECK_OK(dispatch_all(x->dtype(), [&]<class T>() -> Result<void> {
    const T* p = x->data<T>();
    // -1, 0, 1 comparison of slices i and j.
    auto cmp = [&](int64_t i, int64_t j) {
      for (int64_t o = 0; o < outer; ++o) {
        const T* a = p + (o * n + i) * inner;
        const T* b = p + (o * n + j) * inner;
        for (int64_t e = 0; e < inner; ++e) {
          if (value_less(a[e], b[e])) return -1;
          if (value_less(b[e], a[e])) return 1;
        }
      }
      return 0;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t i, int64_t j) { return cmp(i, j) < 0; });
    for (size_t k = 0; k < order.size(); ++k) {
      if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
        first.push_back(order[k]);  // stable sort: the earliest occurrence leads its run
        counts.push_back(0);
      }
      group_of[order[k]] = static_cast<int64_t>(first.size()) - 1;
      ++counts.back();
    }
    return {};
  }));
  const int64_t nu = static_cast<int64_t>(first.size());
  // Output position of each group: sorted order, or order of first occurrence.
  std::vector<int64_t> rank_of(static_cast<size_t>(nu));
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(static_cast<size_t>(nu));
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t pos = 0; pos < nu; ++pos) rank_of[by_first[pos]] = pos;
  }
  std::vector<int64_t> out_first(static_cast<size_t>(nu)), out_counts(static_cast<size_t>(nu));
  for (int64_t g = 0; g < nu; ++g) {
    out_first[rank_of[g]] = first[g];
    out_counts[rank_of[g]] = counts[g];
  }
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) inverse[i] = rank_of[group_of[i]];

  std::vector<int64_t> y_shape{nu};
  if (!flat) {
    y_shape = x->shape();
    y_shape[axis] = nu;
  }
  Tensor y = Tensor::zeros(x->dtype(), y_shape);
  const size_t es = dtype_size(x->dtype());
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < nu; ++u, dst += inner)
      copy_elements(x->raw(), (o * n + out_first[u]) * inner, y.raw(), dst, inner, es);
  ctx.set_output(0, std::move(y));
  set_if_wanted(ctx, 1, Tensor::from<int64_t>({nu}, out_first));
  set_if_wanted(ctx, 2, Tensor::from<int64_t>({n}, inverse));
  set_if_wanted(ctx, 3, Tensor::from<int64_t>({nu}, out_counts));
  return {};
}

Result<void> tfidf_vectorizer(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  if (!is_integer(x->dtype()))
    return fail(ErrorCode::kUnsupported,
                "TfIdfVectorizer input must be an integer tensor (string "
                "input is not supported), got " +
                    x->describe());
  if (x->rank() != 1 && x->rank() != 2)
    return fail(ErrorCode::kInvalidArgument,
                "TfIdfVectorizer input must be [C] or [N, C], got " + x->describe());
  if (node.has_attr("pool_strings"))
    return fail(ErrorCode::kUnsupported, "TfIdfVectorizer pool_strings is not supported");
  const std::string mode = node.attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return fail(ErrorCode::kInvalidArgument,
                "TfIdfVectorizer mode '" + mode + "' is not one of TF, IDF, TFIDF");
  const int64_t min_gram = node.attr_int("min_gram_length", 1);
  const int64_t max_gram = node.attr_int("max_gram_length", 1);
  const int64_t max_skip = node.attr_int("max_skip_count", 0);
  if (min_gram < 1 || max_gram < min_gram || max_skip < 0)
    return fail(ErrorCode::kInvalidArgument,
                "TfIdfVectorizer needs 1 <= min_gram_length <= max_gram_length and "
                "max_skip_count >= 0; got " +
                    std::to_string(min_gram) + ", " + std::to_string(max_gram) + ", " +
                    std::to_string(max_skip));
  const std::vector<int64_t> counts_attr = node.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = node.attr_ints("ngram_indexes");
  const std::vector<int64_t> pool = node.attr_ints("pool_int64s");
  const std::vector<float> weights = node.attr_floats("weights");

  // grams[L-1] maps each L-gram of the pool to its ordinal in the pool.
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams(counts_attr.size());
  int64_t ordinal = 0;
  const int64_t pool_n = static_cast<int64_t>(pool.size());
  for (size_t li = 0; li < counts_attr.size(); ++li) {
    const int64_t len = static_cast<int64_t>(li) + 1;
    const int64_t begin = counts_attr[li];
    const int64_t end = li + 1 < counts_attr.size() ? counts_attr[li + 1] : pool_n;
    if (begin < 0 || end < begin || end > pool_n || (end - begin) % len != 0)
      return fail(ErrorCode::kInvalidArgument,
                  "TfIdfVectorizer ngram_counts " + ints_to_string(counts_attr) +
                      " do not split pool_int64s (" + std::to_string(pool_n) + " values) into " +
                      std::to_string(len) + "-grams");
    for (int64_t p = begin; p < end; p += len)
      grams[li].emplace(std::vector<int64_t>(pool.begin() + p, pool.begin() + p + len), ordinal++);
  }
  if (static_cast<int64_t>(indexes.size()) != ordinal)
    return fail(ErrorCode::kInvalidArgument, "TfIdfVectorizer has " + std::to_string(ordinal) +
                                                 " n-grams in its pool but " +
                                                 std::to_string(indexes.size()) + " ngram_indexes");
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != ordinal)
    return fail(ErrorCode::kInvalidArgument, "TfIdfVectorizer has " + std::to_string(ordinal) +
                                                 " n-grams in its pool but " +
                                                 std::to_string(weights.size()) + " weights");
  int64_t width = 0;
  for (int64_t v : indexes) {
    if (v < 0 || v >= (int64_t{1} << 32))
      return fail(
          ErrorCode::kInvalidArgument,
          "TfIdfVectorizer ngram_indexes " + ints_to_string(indexes) + " has an invalid entry");
    width = std::max(width, v + 1);
  }

  const std::vector<int64_t> xs = to_int64s(*x);
  const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
  const int64_t cols = x->dim(x->rank() - 1);
  std::vector<int64_t> out_shape =
      x->rank() == 2 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{width};
  HONE_TRY(Tensor y, Tensor::allocate(DType::kF32, out_shape));
  float* out = y.data<float>();
  std::vector<int64_t> counts(static_cast<size_t>(ordinal));
  std::vector<int64_t> key;
  const int64_t top = std::min<int64_t>(max_gram, static_cast<int64_t>(grams.size()));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    const int64_t* row = xs.data() + r * cols;
    for (int64_t start = 0; start < cols; ++start) {
      for (int64_t len = min_gram; len <= top; ++len) {
        // A 1-gram is the same whatever the skip: count it once.
        const int64_t skips = len == 1 ? 0 : max_skip;
        for (int64_t s = 0; s <= skips; ++s) {
          const int64_t gap = s + 1;
          if (start + (len - 1) * gap >= cols) break;
          key.clear();
          for (int64_t t = 0; t < len; ++t) key.push_back(row[start + t * gap]);
          auto it = grams[len - 1].find(key);
          if (it != grams[len - 1].end()) ++counts[it->second];
        }
      }
    }
    // The spec: weights[i] belongs to the i-th pool n-gram, written at ngram_indexes[i].
    for (int64_t g = 0; g < ordinal; ++g) {
      const double w = weights.empty() ? 1.0 : static_cast<double>(weights[g]);
      double v = 0.0;
      if (mode == "TF")
        v = static_cast<double>(counts[g]);
      else if (mode == "IDF")
        v = counts[g] > 0 ? w : 0.0;
      else
        v = static_cast<double>(counts[g]) * w;
      out[r * width + indexes[g]] = static_cast<float>(v);
    }
  }
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_shape_misc_ops(OpRegistry& r) {
  r.add("Unique", unique);
  r.add("TfIdfVectorizer", tfidf_vectorizer);
}

}  // namespace hone::eval
