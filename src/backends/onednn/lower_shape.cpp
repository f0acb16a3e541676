// Layout ops: Reshape, Squeeze, Unsqueeze, Flatten, Identity and Transpose
// as views of the same buffer in its layout (views.cpp); Concat, Slice, Split
// and constant-mode Pad as reorders of strided views (Concat as oneDNN's
// concat primitive, or in place: its sources written into their parts of its
// output where those are runs of bytes; Slice and Split keep a channels-last
// source's layout).
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "backends/onednn/own_logic.h"
#include "backends/onednn/own_moves.h"
#include "backends/onednn/plan.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/pad.h"
#include "ops/split.h"

namespace hone::onednn {
namespace {

using dnnl::memory;

Result<void> lower_reshape(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const Tensor* shape = b.constant(n.inputs[1]);
  if (shape == nullptr || shape->dtype() != DType::kI64)
    return fail(ErrorCode::kUnsupported, "Reshape needs a constant i64 shape");
  const bool allowzero = ops::reshape_allowzero(n);
  dims_t out(shape->data<int64_t>(), shape->data<int64_t>() + shape->numel());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (i >= in.size())
        return fail(ErrorCode::kInvalidArgument, "Reshape copies a dim the input lacks");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      infer = static_cast<int64_t>(i);
      continue;
    }
    known *= out[i];
  }
  const int64_t numel = shape_numel(in);
  if (infer >= 0) {
    if (known == 0 || numel % known)
      return fail(ErrorCode::kInvalidArgument, "Reshape cannot infer the -1 dim");
    out[static_cast<size_t>(infer)] = numel / known;
  }
  if (shape_numel(out) != numel)
    return fail(ErrorCode::kInvalidArgument, "Reshape of " + shape_to_string(in) + " to " +
                                                 shape_to_string(out) +
                                                 " changes the element count");
  alias(b, n, out);
  return {};
}

/// Squeeze and Unsqueeze: the same bytes under new dims.
Result<void> lower_squeeze(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  dims_t axes = n.attr_ints("axes");
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* t = b.constant(n.inputs[1]);
    if (t == nullptr || t->dtype() != DType::kI64)
      return fail(ErrorCode::kUnsupported, n.op_type + " needs constant i64 axes");
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  }
  const bool squeeze = n.op_type == "Squeeze";
  const int64_t rank = static_cast<int64_t>(in.size() + (squeeze ? 0 : axes.size()));
  std::vector<bool> marked(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t k = ops::try_normalize_axis(a, rank).value_or(-1);
    if (k < 0 || k >= rank || marked[static_cast<size_t>(k)])
      return fail(ErrorCode::kInvalidArgument, n.op_type + " axis " + std::to_string(a) +
                                                   " is out of range or repeated for rank " +
                                                   std::to_string(rank));
    if (squeeze && in[static_cast<size_t>(k)] != 1)
      return fail(ErrorCode::kInvalidArgument,
                  "Squeeze axis " + std::to_string(a) + " of " + shape_to_string(in) + " is not 1");
    marked[static_cast<size_t>(k)] = true;
  }
  dims_t out;
  if (squeeze) {
    for (size_t i = 0; i < in.size(); ++i)
      if (axes.empty() ? in[i] != 1 : !marked[i]) out.push_back(in[i]);
  } else {
    for (size_t i = 0, next = 0; i < static_cast<size_t>(rank); ++i)
      out.push_back(marked[i] ? 1 : in[next++]);
  }
  alias(b, n, out);
  return {};
}

/// The layout tag of `md` among native_tags(), or undef.
memory::format_tag layout_tag(const md_t& md) {
  for (memory::format_tag t : native_tags(md.dims().size()))
    if (md == md_t(md.dims(), memory::data_type::f32, t)) return t;
  return memory::format_tag::undef;
}

/// The non-plain layout the computed values of `vs` are joined in
/// (constants are packed into it), or nothing (plain). Values of rank 4 and
/// up (feature maps) in mixed layouts are joined in the non-plain layout
/// that holds most of their bytes, the others reordered into it: a
/// DenseNet's growing concat of a pool's plain output and its convs'
/// channels-last ones otherwise turns plain for the rest of the block, and
/// every conv then reorders its whole input back.
std::optional<memory::format_tag> shared_layout(const PlanBuilder& b,
                                                const std::vector<ValueId>& vs) {
  std::map<memory::format_tag, int64_t> bytes;
  bool mixed = false;
  size_t rank = 0;
  for (ValueId v : vs) {
    if (const Tensor* c = b.constant(v)) {
      if (c->dtype() != DType::kF32) return std::nullopt;
      continue;
    }
    const md_t& md = b.value(v).ref.md;
    rank = b.value(v).dims.size();
    const memory::format_tag t =
        md.data_type() == memory::data_type::f32 ? layout_tag(md) : memory::format_tag::undef;
    mixed = mixed || (!bytes.empty() && !bytes.count(t));
    bytes[t] += shape_numel(b.value(v).dims);
  }
  if (bytes.empty() || (mixed && rank < 4)) return std::nullopt;
  std::optional<memory::format_tag> best;
  for (const auto& [t, n] : bytes)
    if (t != memory::format_tag::undef && (!best || n > bytes[*best])) best = t;
  return best;
}

/// The byte offset at which the part of layout `whole` of dims `sub` starting
/// at `offsets` is one run of bytes laid out as `part` (the layout of
/// `whole` over `sub` alone): a channel range of nChw16c or of plain NCHW at
/// batch 1, a batch range of any layout. Nothing when it is strided.
std::optional<size_t> contiguous_part(const md_t& whole, const md_t& part, const dims_t& offsets) {
  md_t sub;
  try {
    sub = whole.submemory_desc(part.dims(), offsets);
  } catch (const dnnl::error&) {
    return std::nullopt;  // a part that ends inside a block
  }
  const dnnl_memory_desc_t &x = sub.data, &y = part.data;
  if (x.format_kind != dnnl_blocked || y.format_kind != dnnl_blocked || x.ndims != y.ndims)
    return std::nullopt;
  const auto &bx = x.format_desc.blocking, &by = y.format_desc.blocking;
  if (bx.inner_nblks != by.inner_nblks) return std::nullopt;
  dims_t blocks(static_cast<size_t>(x.ndims), 1);
  for (int i = 0; i < bx.inner_nblks; ++i) {
    if (bx.inner_blks[i] != by.inner_blks[i] || bx.inner_idxs[i] != by.inner_idxs[i])
      return std::nullopt;
    blocks[static_cast<size_t>(bx.inner_idxs[i])] *= bx.inner_blks[i];
  }
  for (int i = 0; i < x.ndims; ++i) {
    if (x.padded_dims[i] != y.padded_dims[i]) return std::nullopt;
    // A stride along an axis of one (outer) step is never taken.
    if (x.padded_dims[i] / blocks[static_cast<size_t>(i)] > 1 && bx.strides[i] != by.strides[i])
      return std::nullopt;
  }
  return static_cast<size_t>(x.offset0) * sizeof(float);
}

/// Concat without a copy where it can be: a source that is a temporary laid
/// out as its part of the output (`layout`, or plain when undef), and whose
/// part is one run of bytes, becomes a slice of the output buffer, so the
/// step that wrote it (and, for a slice of an earlier Concat's output, the
/// steps that wrote that one: DenseNet's growing concats) wrote straight into
/// its place; the other sources are reordered into their parts. False (and
/// nothing lowered) when no source can stay where it is.
bool concat_in_place(PlanBuilder& b, const Node& n, const std::vector<ValueId>& srcs,
                     const dims_t& out, int64_t axis, memory::format_tag layout) {
  const md_t dst_md = layout == memory::format_tag::undef
                          ? plain_md(out)
                          : md_t(out, memory::data_type::f32, layout);
  struct Part {
    md_t md;
    size_t at = 0;       // byte offset in the output
    int root = -1;       // the root temporary holding the source as laid out, or -1
    size_t in_root = 0;  // the source's byte offset in it
  };
  std::vector<Part> parts;
  dims_t offsets(out.size(), 0);
  for (ValueId v : srcs) {
    const dims_t& d = b.value(v).dims;
    Part p;
    p.md =
        layout == memory::format_tag::undef ? plain_md(d) : md_t(d, memory::data_type::f32, layout);
    const std::optional<size_t> at = contiguous_part(dst_md, p.md, offsets);
    if (!at) return false;
    p.at = *at;
    offsets[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
    const BufferRef& ref = b.value(v).ref;
    if (ref.md == p.md && b.buffer_size(ref.buffer) == p.md.get_size())
      p.root = b.root_of(ref.buffer, &p.in_root);
    parts.push_back(std::move(p));
  }
  // Each root goes where its first source wants it, if the output holds it
  // there and every source overlapping it there is one of its own, in the
  // same place: then its bytes are already what the output needs.
  const size_t total = dst_md.get_size();
  std::map<int, std::optional<size_t>> place;  // root -> offset in the output, nullopt: stays
  for (const Part& p : parts) {
    if (p.root < 0 || place.count(p.root)) continue;
    const size_t size = b.buffer_size(p.root);
    std::optional<size_t> at;
    if (p.at >= p.in_root && p.at - p.in_root + size <= total) at = p.at - p.in_root;
    for (const Part& q : parts)
      if (at && q.at < *at + size && *at < q.at + q.md.get_size() &&
          (q.root != p.root || *at + q.in_root != q.at))
        at.reset();
    place[p.root] = at;
  }
  auto in_place = [&](const Part& p) {
    return p.root >= 0 && place[p.root] && *place[p.root] + p.in_root == p.at;
  };
  if (std::none_of(parts.begin(), parts.end(), in_place)) return false;
  const int dst = b.new_temp(dst_md);
  for (const auto& [root, at] : place)
    if (at) b.place_in(root, dst, *at);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (in_place(parts[i])) continue;
    const BufferRef to{b.new_slice(dst, parts[i].at, parts[i].md), parts[i].md};
    const BufferRef from = b.value(srcs[i]).ref;
    dnnl::reorder::primitive_desc pd(cpu_engine(), from.md, cpu_engine(), to.md, user_scratch());
    b.add_step("reorder", dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  }
  b.set(n.outputs[0], PValue{out, BufferRef{dst, dst_md}});
  return true;
}

Result<void> lower_concat(PlanBuilder& b, const Node& n) {
  std::vector<ValueId> srcs;
  for (ValueId v : n.inputs)
    if (v >= 0) srcs.push_back(v);
  if (srcs.empty()) return fail(ErrorCode::kInvalidArgument, "Concat without inputs");
  const dims_t first = value_dims(b, srcs[0]);  // an empty source has no PValue
  const int64_t axis = normalize_axis(ops::axis_attr(n), first.size());
  if (first.empty() || axis < 0 || axis >= static_cast<int64_t>(first.size()))
    return fail(ErrorCode::kInvalidArgument,
                "Concat axis out of range for " + shape_to_string(first));
  dims_t out = first;
  out[static_cast<size_t>(axis)] = 0;
  std::vector<md_t> mds;
  std::vector<std::pair<int, BufferRef>> args;
  std::vector<ValueId> kept;
  for (ValueId v : srcs) {
    const dims_t d = value_dims(b, v);
    for (size_t i = 0; i < d.size(); ++i)
      if (d.size() != first.size() || (static_cast<int64_t>(i) != axis && d[i] != first[i]))
        return fail(ErrorCode::kInvalidArgument, "Concat of " + shape_to_string(first) + " and " +
                                                     shape_to_string(d) + " on axis " +
                                                     std::to_string(axis));
    // oneDNN refuses empty sources; they add nothing.
    if (d[static_cast<size_t>(axis)] == 0) continue;
    out[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
    kept.push_back(v);
  }
  if (kept.empty()) return fail(ErrorCode::kUnsupported, "Concat of empty tensors only");
  // Sources that all live in one channels-last or channel-blocked layout are
  // joined in it (a conv net's skip connections): going through plain would
  // cost a reorder out of and back into that layout for every source.
  // undef: no shared layout (a tag, not an optional: GCC 12 warns that an
  // optional's payload may be read uninitialized where it is not).
  memory::format_tag layout = shared_layout(b, kept).value_or(memory::format_tag::undef);
  // A channel-blocked join along channels is a plain copy only when no
  // source ends inside a block.
  const auto tags = native_tags(out.size());
  if (layout != memory::format_tag::undef && axis == 1 && layout != tags[0]) {
    const int64_t block = layout == tags[1] ? 16 : 8;
    for (ValueId v : kept)
      if (b.value(v).dims[1] % block != 0) layout = memory::format_tag::undef;
  }
  const bool shared = layout != memory::format_tag::undef;
  if (static_cast<int64_t>(out.size()) == 4 && axis == 1) b.note_channel_concat();
  if (concat_in_place(b, n, kept, out, axis, layout)) return {};
  for (ValueId v : kept) {
    const dims_t& d = b.value(v).dims;
    BufferRef src;
    if (!shared) {
      src = b.plain(v);
    } else if (const Tensor* c = b.constant(v)) {
      src = b.pack(*c, plain_md(d), md_t(d, memory::data_type::f32, layout));
    } else {
      src = b.ensure(v, md_t(d, memory::data_type::f32, layout));
    }
    args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(mds.size()), src});
    mds.push_back(src.md);
  }
  const md_t dst_md = shared ? md_t(out, memory::data_type::f32, layout) : plain_md(out);
  dnnl::concat::primitive_desc pd(dst_md, static_cast<int>(axis), mds, cpu_engine(),
                                  user_scratch());
  const BufferRef ref{b.new_temp(dst_md), dst_md};
  args.push_back({DNNL_ARG_DST, ref});
  b.add_step("concat", dnnl::concat(pd), pd, std::move(args));
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

/// Slice with positive steps: a strided view of the input, copied by a reorder.
Result<void> lower_slice(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const auto rank = static_cast<int64_t>(in.size());
  HONE_TRY(std::vector<int64_t> starts, slice_param(b, n, 1, "starts"));
  HONE_TRY(std::vector<int64_t> ends, slice_param(b, n, 2, "ends"));
  HONE_TRY(std::vector<int64_t> axes, slice_param(b, n, 3, "axes"));
  HONE_TRY(std::vector<int64_t> steps, slice_param(b, n, 4, "steps"));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return fail(ErrorCode::kInvalidArgument, "Slice starts, ends, axes and steps differ in length");
  if (in.empty()) return fail(ErrorCode::kInvalidArgument, "Slice of a scalar");
  const BufferRef src = strided_source(b, n.inputs[0]);
  const auto& src_strides = src.md.data.format_desc.blocking.strides;
  const dims_t strides(src_strides, src_strides + in.size());
  dims_t out = in, view_strides = strides;
  int64_t offset = 0;
  bool empty = false;  // the result: an empty value, no step (lower_empty.cpp)
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = ops::try_normalize_axis(axes[k], rank).value_or(-1);
    if (a < 0)
      return fail(ErrorCode::kInvalidArgument, "Slice axis " + std::to_string(axes[k]) +
                                                   " out of range for " + shape_to_string(in));
    if (steps[k] <= 0)
      return fail(ErrorCode::kUnsupported, "Slice with a step of " + std::to_string(steps[k]));
    const int64_t dim = in[static_cast<size_t>(a)];
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + dim : i, 0, dim); };
    const int64_t start = clamp(starts[k]), end = clamp(ends[k]);
    const int64_t count = end > start ? (end - start + steps[k] - 1) / steps[k] : 0;
    empty = empty || count == 0;
    out[static_cast<size_t>(a)] = count;
    view_strides[static_cast<size_t>(a)] = strides[static_cast<size_t>(a)] * steps[k];
    offset += start * strides[static_cast<size_t>(a)];
  }
  if (empty) {
    b.set_empty(n.outputs[0], Tensor::zeros(DType::kF32, out));
    return {};
  }
  md_t view(out, memory::data_type::f32, view_strides);
  view.data.offset0 = offset;  // the view starts at the first selected element
  const md_t dst = dense_like(src.md, out);
  dnnl::reorder::primitive_desc pd(cpu_engine(), view, cpu_engine(), dst, user_scratch());
  const BufferRef ref{b.new_temp(dst), dst};
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, {src.buffer, view}}, {DNNL_ARG_TO, ref}});
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

/// Split: each output a view of the input along the axis, copied by a
/// reorder. The sizes are ONNX's (ops/split.h): the `split` input, known when
/// the plan is built, or attribute, else equal parts.
Result<void> lower_split(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const auto rank = static_cast<int64_t>(in.size());
  const int64_t axis = ops::axis_attr(n);
  const int64_t a = ops::try_normalize_axis(axis, rank).value_or(-1);
  if (a < 0)
    return fail(ErrorCode::kInvalidArgument,
                "Split axis " + std::to_string(axis) + " out of range for " + shape_to_string(in));
  std::optional<std::vector<int64_t>> given;
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* t = b.constant(n.inputs[1]);
    if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
      return fail(ErrorCode::kUnsupported, "Split sizes are not known when the plan is built");
    given.emplace();
    for (int64_t i = 0; i < t->numel(); ++i) given->push_back(tensor_element_as_int64(*t, i));
  }
  HONE_TRY(
      const std::vector<int64_t> sizes,
      ops::split_sizes(n, in[static_cast<size_t>(a)], n.outputs.size(), given ? &*given : nullptr));
  const BufferRef src = strided_source(b, n.inputs[0]);
  const auto& src_strides = src.md.data.format_desc.blocking.strides;
  const dims_t strides(src_strides, src_strides + in.size());
  int64_t start = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const int64_t count = sizes[k];
    if (n.outputs[k] >= 0) {
      dims_t out = in;
      out[static_cast<size_t>(a)] = count;
      if (count == 0) {  // an empty value, no step (lower_empty.cpp)
        b.set_empty(n.outputs[k], Tensor::zeros(DType::kF32, out));
        start += count;
        continue;
      }
      md_t view(out, memory::data_type::f32, strides);
      view.data.offset0 = start * strides[static_cast<size_t>(a)];
      const md_t dst = dense_like(src.md, out);
      dnnl::reorder::primitive_desc pd(cpu_engine(), view, cpu_engine(), dst, user_scratch());
      const BufferRef ref{b.new_temp(dst), dst};
      b.add_step("reorder", dnnl::reorder(pd), pd,
                 {{DNNL_ARG_FROM, {src.buffer, view}}, {DNNL_ARG_TO, ref}});
      b.set(n.outputs[k], PValue{out, ref});
    }
    start += count;
  }
  return {};
}

/// Pad in constant mode, its pads known when the plan is built: the output
/// is first copied from a constant holding the pad value, then the input
/// into its interior (two reorders). Pads of zero alias the input; a
/// negative pad crops (the input's window is read; no fill where no pad is
/// positive: ZeroPad2d((0, 0, 1, -1)), RWKV's token shift, fills one row and
/// drops the last). Reflect, edge and wrap (which may crop)
/// are an own step reading ops::pad_source_offsets (own_logic.cpp).
Result<void> lower_pad(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const size_t r = x.dims.size();
  std::vector<int64_t> pads;
  double value = 0;
  std::vector<int64_t> axes;
  bool has_axes = false;
  auto ints = [&](size_t i, const char* what) -> Result<std::vector<int64_t>> {
    const Tensor* t = b.constant(n.inputs[i]);
    if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
      return fail(ErrorCode::kUnsupported,
                  std::string("Pad ") + what + " are not known when the plan is built");
    std::vector<int64_t> out;
    for (int64_t k = 0; k < t->numel(); ++k) out.push_back(tensor_element_as_int64(*t, k));
    return out;
  };
  HONE_TRY(const ops::PadAttrs attrs, ops::pad_attrs(n));
  if (b.graph().opset("") < 11) {
    pads = attrs.pads;
    value = attrs.value;
  } else {
    HONE_TRY(pads, ints(1, "pads"));
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Tensor* v = b.constant(n.inputs[2]);
      if (v == nullptr || v->numel() != 1)
        return fail(ErrorCode::kUnsupported, "Pad's constant_value is not a known scalar");
      value = tensor_element_as_double(*v, 0);
    }
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
      HONE_TRY(axes, ints(3, "axes"));
      has_axes = true;
    }
  }
  HONE_TRY(const ops::PadWindow w, ops::pad_window(x.dims, pads, has_axes ? &axes : nullptr));
  if (attrs.mode != "constant") return lower_pad_by_offsets(b, n, w, attrs.mode);  // own_logic.cpp
  const dims_t out = w.out;
  if (!w.pads_any() && w.kept == x.dims) {
    b.set(n.outputs[0], x);
    return {};
  }
  // The kept part of the input (a negative pad crops it: w.kept from
  // w.kept_from per axis) lands at max(begin, 0) of the output; where some
  // pad is positive the output is first filled with the pad value.
  const md_t dst = plain_md(out);
  const BufferRef ref{b.new_temp(dst), dst};
  if (w.pads_any()) {
    Tensor fill = Tensor::zeros(DType::kF32, out);
    if (value != 0) std::fill_n(fill.data<float>(), fill.numel(), static_cast<float>(value));
    const BufferRef filled{b.new_constant(std::move(fill)), dst};
    dnnl::reorder::primitive_desc fill_pd(cpu_engine(), dst, cpu_engine(), dst, user_scratch());
    b.add_step("reorder", dnnl::reorder(fill_pd), fill_pd,
               {{DNNL_ARG_FROM, filled}, {DNNL_ARG_TO, ref}});
  }
  const dims_t kept = w.kept;
  if (std::find(kept.begin(), kept.end(), 0) == kept.end()) {
    dims_t strides(r, 1), in_strides(r, 1);
    for (size_t i = r - 1; i > 0; --i) {
      strides[i - 1] = strides[i] * out[i];
      in_strides[i - 1] = in_strides[i] * x.dims[i];
    }
    md_t interior(kept, memory::data_type::f32, strides);
    md_t window(kept, memory::data_type::f32, in_strides);
    int64_t offset = 0, in_offset = 0;
    for (size_t a = 0; a < r; ++a) {
      offset += std::max<int64_t>(w.begin[a], 0) * strides[a];
      in_offset += w.kept_from[a] * in_strides[a];
    }
    interior.data.offset0 = offset;
    window.data.offset0 = in_offset;
    const BufferRef src = b.plain(n.inputs[0]);
    dnnl::reorder::primitive_desc pd(cpu_engine(), window, cpu_engine(), interior, user_scratch());
    b.add_step("reorder", dnnl::reorder(pd), pd,
               {{DNNL_ARG_FROM, {src.buffer, window}}, {DNNL_ARG_TO, {ref.buffer, interior}}});
  }
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

/// `md` with each size-1 axis given the stride a row-major layout would give
/// it (the next axis's stride times its size; 1 for the last), which
/// addresses the same bytes. A permuted view keeps the stride a size-1 axis
/// had before the permutation ([1,1,8,16] viewed as [1,8,1,16]: strides
/// [128,16,128,1]), and oneDNN 2.6's jit binary kernel, broadcasting a second
/// operand over such a source, read the wrong elements (a KV-cache decoder's
/// rotary Mul at one new token: rel L2 0.12). With canonical strides the same
/// view is plain, [128,16,16,1].
md_t canonical_unit_strides(md_t md) {
  dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0) return md;
  auto& st = d.format_desc.blocking.strides;
  for (int i = d.ndims; i-- > 0;)
    if (d.dims[i] == 1) st[i] = i + 1 < d.ndims ? st[i + 1] * d.dims[i + 1] : 1;
  return md;
}

Result<void> lower_transpose(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  HONE_TRY(const dims_t perm, ops::transpose_perm(n, static_cast<int64_t>(in.size())));
  if (in.empty()) {
    alias(b, n, in);
    return {};
  }
  dims_t out(in.size());
  std::vector<int> to(in.size());  // oneDNN's permutation: input axis -> output axis
  for (size_t i = 0; i < in.size(); ++i) {
    const auto p = static_cast<size_t>(perm[i]);
    if (p >= in.size())
      return fail(ErrorCode::kInvalidArgument, "Transpose perm value out of range");
    out[i] = in[p];
    to[p] = static_cast<int>(i);
  }
  // The transposed value is the source's bytes seen through permuted axes,
  // whatever layout the source lives in: no copy here. A conv's channels-last
  // output transposed to NHWC is plain already, and plain NHWC transposed back
  // is a channels-last NCHW value (ConvNeXt's blocks do both, around their
  // LayerNorm and MLP); a reader that needs another layout reorders it once,
  // as it would have reordered the copy.
  const PValue x = b.value(n.inputs[0]);
  const md_t view =
      x.ref.md.data.ndims == static_cast<int>(in.size()) && x.ref.md.data.data_type == dnnl_f32
          ? canonical_unit_strides(x.ref.md.permute_axes(to, /*allow_empty=*/true))
          : md_t();
  if (view.data.format_kind == dnnl_blocked && view.data.offset0 == 0) {
    b.set(n.outputs[0], PValue{out, {x.ref.buffer, view}});
    return {};
  }
  dims_t strides(in.size(), 1);
  for (size_t i = in.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * in[i];
  dims_t view_strides(in.size());
  for (size_t i = 0; i < in.size(); ++i) view_strides[i] = strides[static_cast<size_t>(perm[i])];
  BufferRef src = b.plain(n.inputs[0]);
  const md_t strided(out, memory::data_type::f32, view_strides), dst = plain_md(out);
  dnnl::reorder::primitive_desc pd(cpu_engine(), strided, cpu_engine(), dst, user_scratch());
  const int buf = b.new_temp(dst);
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, {src.buffer, strided}}, {DNNL_ARG_TO, {buf, dst}}});
  b.set(n.outputs[0], PValue{out, {buf, dst}});
  return {};
}

}  // namespace

Result<void> lower_shape(PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Reshape") return lower_reshape(b, n);
  if (op == "Transpose") return lower_transpose(b, n);
  if (op == "Squeeze" || op == "Unsqueeze") return lower_squeeze(b, n);
  if (op == "Concat") return lower_concat(b, n);
  if (op == "Slice") return lower_slice(b, n);
  if (op == "Split") return lower_split(b, n);
  if (op == "Pad") return lower_pad(b, n);
  if (op == "Identity") {
    b.set(n.outputs[0], b.value(n.inputs[0]));
    return {};
  }
  if (op == "Flatten") {
    const dims_t in = b.value(n.inputs[0]).dims;
    const int64_t axis = normalize_axis(ops::axis_attr(n), in.size());
    if (axis < 0 || axis > static_cast<int64_t>(in.size()))
      return fail(ErrorCode::kInvalidArgument,
                  "Flatten axis out of range for " + shape_to_string(in));
    alias(b, n, split2(in, axis));
    return {};
  }
  return fail(ErrorCode::kUnsupported, "no oneDNN lowering for " + op);
}

}  // namespace hone::onednn
