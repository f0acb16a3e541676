#include "ops/split.h"

#include <algorithm>
#include <string>

#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::ops {
namespace {

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

Result<std::vector<int64_t>> split_sizes(const Node& node, int64_t dim, size_t outputs,
                                         const std::vector<int64_t>* given) {
  const auto n_out = static_cast<int64_t>(outputs);
  std::vector<int64_t> sizes;
  if (given != nullptr) {
    sizes = *given;
  } else if (node.has_attr("split")) {
    sizes = node.attr_ints("split");
  } else {
    int64_t n = n_out;
    const bool counted = node.has_attr("num_outputs");
    if (counted) {
      n = node.attr_int("num_outputs", n_out);
      if (n != n_out)
        return fail(ErrorCode::kInvalidArgument, "Split num_outputs=" + std::to_string(n) +
                                                     " but the node has " + std::to_string(n_out) +
                                                     " outputs");
    }
    if (n <= 0) return fail(ErrorCode::kInvalidArgument, "Split needs at least one output");
    if (!counted && dim % n != 0)
      return fail(ErrorCode::kInvalidArgument, "Split of an axis of size " + std::to_string(dim) +
                                                   " into " + std::to_string(n) +
                                                   " equal parts is uneven");
    const int64_t chunk = (dim + n - 1) / n;
    int64_t left = dim;
    for (int64_t i = 0; i < n; ++i) {
      sizes.push_back(std::min(chunk, left));
      left -= sizes.back();
    }
  }
  if (static_cast<int64_t>(sizes.size()) != n_out)
    return fail(ErrorCode::kInvalidArgument,
                "Split sizes " + ints_text(sizes) + " give " + std::to_string(sizes.size()) +
                    " parts but the node has " + std::to_string(n_out) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "Split sizes " + ints_text(sizes) + " contain a negative size");
    total += s;
  }
  if (total != dim)
    return fail(ErrorCode::kInvalidArgument, "Split sizes " + ints_text(sizes) + " sum to " +
                                                 std::to_string(total) +
                                                 ", but the axis has size " + std::to_string(dim));
  return sizes;
}

Result<SplitParts> split_parts(const Node& node, const std::vector<int64_t>& x, size_t outputs,
                               const std::vector<int64_t>* given) {
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Split of a scalar");
  SplitParts p;
  HONE_TRY(p.axis, normalize_axis(axis_attr(node), rank, "Split axis"));
  const auto a = static_cast<size_t>(p.axis);
  p.dim = x[a];
  for (size_t i = 0; i < a; ++i) p.outer *= x[i];
  for (size_t i = a + 1; i < x.size(); ++i) p.inner *= x[i];
  HONE_TRY(p.sizes, split_sizes(node, p.dim, outputs, given));
  int64_t start = 0;
  for (const int64_t size : p.sizes) {
    std::vector<int64_t> d = x;
    d[a] = size;
    p.outs.push_back(std::move(d));
    p.starts.push_back(start);
    start += size;
  }
  return p;
}

}  // namespace hone::ops
