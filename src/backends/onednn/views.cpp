// Values seen through other dims without a copy: Reshape, Flatten, Squeeze
// and Unsqueeze as oneDNN's reshape of the layout a value lives in, and the
// layouts Slice and Split copy their parts into (plan.h declares them).
#include <algorithm>
#include <optional>
#include <vector>

#include "backends/onednn/plan.h"

namespace hone::onednn {
namespace {

using dnnl::memory;

/// Strided, f32, no inner blocks, no offset: what oneDNN's reshape and a
/// view through strides take.
bool strided(const md_t& md) {
  const dnnl_memory_desc_t& d = md.data;
  return d.format_kind == dnnl_blocked && d.format_desc.blocking.inner_nblks == 0 &&
         d.data_type == dnnl_f32 && d.offset0 == 0 && d.extra.flags == 0;
}

/// `md` reshaped to `dims` without moving a byte, or nullopt.
std::optional<md_t> reshaped(const md_t& md, const dims_t& dims) {
  const md_t out = md.reshape(dims, /*allow_empty=*/true);
  if (out.data.format_kind != dnnl_blocked) return std::nullopt;
  return out;
}

/// A dense layout of `in` that reshapes to `out` as a view and keeps `like`'s
/// order of axes otherwise: the input axes that merge into (or split from)
/// the same output axes stay together in row-major order, and those groups
/// lie in memory in the order of their outermost axis in `like`. A channel
/// shuffle's last Reshape ([N,C/2,2,H,W] of a channels-last value to
/// [N,C,H,W]) so copies into channels-last, not plain. nullopt when the
/// element counts disagree.
std::optional<md_t> reshapable_like(const md_t& like, const dims_t& in, const dims_t& out) {
  std::vector<size_t> group(in.size());
  size_t groups = 0;
  for (size_t i = 0, j = 0; i < in.size() || j < out.size(); ++groups) {
    int64_t pi = 1, pj = 1;
    if (i < in.size()) pi *= in[i], group[i++] = groups;
    if (j < out.size()) pj *= out[j++];
    while (pi != pj) {
      if (pi < pj && i < in.size()) {
        pi *= in[i];
        group[i++] = groups;
      } else if (pj < pi && j < out.size()) {
        pj *= out[j++];
      } else {
        return std::nullopt;
      }
    }
  }
  const auto& st = like.data.format_desc.blocking.strides;
  std::vector<int64_t> key(groups, -1);  // a group's largest stride in `like`
  for (size_t i = 0; i < in.size(); ++i) key[group[i]] = std::max(key[group[i]], st[i]);
  std::vector<size_t> order(groups);
  for (size_t k = 0; k < groups; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return key[x] > key[y]; });
  dims_t strides(in.size(), 1);
  int64_t step = 1;
  for (size_t k = groups; k-- > 0;)
    for (size_t i = in.size(); i-- > 0;)
      if (group[i] == order[k]) {
        strides[i] = step;
        step *= in[i];
      }
  return md_t(in, memory::data_type::f32, strides);
}

}  // namespace

void alias(PlanBuilder& b, const Node& n, dims_t dims) {
  const PValue x = b.value(n.inputs[0]);
  if (x.dtype != DType::kF32) {
    b.set(n.outputs[0], PValue{std::move(dims), x.ref, x.dtype});  // plain bytes already
    return;
  }
  if (!dims.empty() && !x.dims.empty() && x.ref.md.dims() == x.dims && strided(x.ref.md) &&
      !is_plain(x.ref.md)) {
    if (auto view = reshaped(x.ref.md, dims)) {
      b.set(n.outputs[0], PValue{dims, {x.ref.buffer, *view}});
      return;
    }
    if (auto want = reshapable_like(x.ref.md, x.dims, dims)) {
      if (auto view = reshaped(*want, dims)) {
        const BufferRef copy = b.reorder_to(x.ref, *want);
        b.set(n.outputs[0], PValue{dims, {copy.buffer, *view}});
        return;
      }
    }
  }
  BufferRef src = b.plain(n.inputs[0]);
  b.set(n.outputs[0], PValue{dims, {src.buffer, plain_md(dims)}});
}

BufferRef strided_source(PlanBuilder& b, ValueId v) {
  const PValue& x = b.value(v);
  if (strided(x.ref.md) && !x.dims.empty() && x.ref.md.dims() == x.dims) return x.ref;
  return b.plain(v);
}

md_t dense_like(const md_t& like, const dims_t& dims) {
  const auto& st = like.data.format_desc.blocking.strides;
  std::vector<size_t> order(dims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return st[x] > st[y]; });
  dims_t strides(dims.size(), 1);
  int64_t step = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[order[k]] = step;
    step *= dims[order[k]];
  }
  return md_t(dims, memory::data_type::f32, strides);
}

bool is_usual_layout(const md_t& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || is_plain(md)) return true;
  if (d.format_desc.blocking.inner_nblks > 0) {
    // A primitive's blocked layout keeps its outer axes in order; a
    // transposed one does not.
    for (int i = 0; i + 1 < d.ndims; ++i)
      if (d.format_desc.blocking.strides[i] < d.format_desc.blocking.strides[i + 1]) return false;
    return true;
  }
  for (memory::format_tag t : native_tags(md.dims().size()))
    if (md == md_t(md.dims(), md.data_type(), t)) return true;
  return false;
}

BufferRef usual(PlanBuilder& b, ValueId v) {
  const BufferRef& r = b.value(v).ref;
  return is_usual_layout(r.md) ? r : b.plain(v);
}

}  // namespace hone::onednn
