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

namespace {

/// `md` as plain or one of native_tags() where it addresses the same bytes
/// as that layout and differs only in the strides of dims of size 1, else
/// `md`. oneDNN's `==` ignores those strides but its kernels' layout checks
/// do not: a permuted view of N = 1 (MViT's MaxPool3d of tokens viewed as
/// [1, C, T, H, W]) equals ndhwc, yet pooling took its reference kernel.
md_t canonical_layout(const md_t& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0) return md;
  const md_t plain = plain_md(md.dims(), md.data_type());
  if (md == plain && same_bytes(md, plain)) return plain;
  for (memory::format_tag t : native_tags(md.dims().size()))
    if (const md_t tagged(md.dims(), md.data_type(), t); md == tagged && same_bytes(md, tagged))
      return tagged;
  return md;
}

}  // namespace

BufferRef usual(PlanBuilder& b, ValueId v) {
  const BufferRef& r = b.value(v).ref;
  return is_usual_layout(r.md) ? BufferRef{r.buffer, canonical_layout(r.md)} : b.plain(v);
}

namespace {

/// Where element `pos` of a blocked layout lies, in elements from the
/// buffer's start: inner blocks first (the last one innermost), then the
/// outer strides, as oneDNN addresses it.
int64_t element_offset(const dnnl_memory_desc_t& m, dims_t pos) {
  const dnnl_blocking_desc_t& blk = m.format_desc.blocking;
  int64_t off = m.offset0, stride = 1;
  for (int k = blk.inner_nblks - 1; k >= 0; --k) {
    const auto d = static_cast<size_t>(blk.inner_idxs[k]);
    off += pos[d] % blk.inner_blks[k] * stride;
    pos[d] /= blk.inner_blks[k];
    stride *= blk.inner_blks[k];
  }
  for (int d = 0; d < m.ndims; ++d) off += pos[static_cast<size_t>(d)] * blk.strides[d];
  return off;
}

}  // namespace

bool same_bytes(const md_t& a, const md_t& b) {
  const dnnl_memory_desc_t &x = a.data, &y = b.data;
  if (x.ndims != y.ndims || x.data_type != y.data_type || x.format_kind != dnnl_blocked ||
      y.format_kind != dnnl_blocked || x.extra.flags != 0 || y.extra.flags != 0)
    return false;
  int64_t numel = 1;
  for (int i = 0; i < x.ndims; ++i) {
    if (x.dims[i] != y.dims[i] || x.padded_dims[i] != y.padded_dims[i]) return false;
    numel *= x.dims[i];
  }
  if (x.format_desc.blocking.inner_nblks == 0 && y.format_desc.blocking.inner_nblks == 0) {
    if (x.offset0 != y.offset0) return false;
    for (int i = 0; i < x.ndims; ++i)
      if (x.dims[i] != 1 && x.format_desc.blocking.strides[i] != y.format_desc.blocking.strides[i])
        return false;
    return true;
  }
  // Inner blocks: no padding (its bytes would differ), and few enough
  // elements to compare each (a pooled [1,C,1,1], not a feature map).
  constexpr int64_t kMaxCompared = 4096;
  if (numel > kMaxCompared || a.get_size() != b.get_size()) return false;
  for (int i = 0; i < x.ndims; ++i)
    if (x.padded_dims[i] != x.dims[i]) return false;
  dims_t pos(static_cast<size_t>(x.ndims), 0);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t rest = e;
    for (int d = x.ndims - 1; d >= 0; --d) {
      pos[static_cast<size_t>(d)] = rest % x.dims[d];
      rest /= x.dims[d];
    }
    if (element_offset(x, pos) != element_offset(y, pos)) return false;
  }
  return true;
}

}  // namespace hone::onednn
