// The blocked (nChw16c) variant of the channels-last region: whether a
// program takes it, how its convs read their inputs, and the kernel names.
// See nhwc.h for the rule and the measurements behind it.
#include <algorithm>

#include "backends/aot/nhwc.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

bool mult16(const DimExpr& d) {
  return d.is_const() && d.value() > 0 && d.value() % 16 == 0;
}

/// `d` right-aligned to rank 4 (N, C, H, W).
DimExprs rank4(const DimExprs& d) {
  DimExprs a(4 - std::min<size_t>(4, d.size()), DimExpr(1));
  a.insert(a.end(), d.begin(), d.end());
  return a;
}

std::vector<ValueId> made_by(const Program& p, const Step& s) {
  std::vector<ValueId> v;
  if (s.anchor >= 0) v.push_back(p.node(s.anchor).outputs[0]);
  for (NodeId m : s.chain) v.push_back(p.node(m).outputs[0]);
  return v;
}

/// A conv's input under the blocked rule: read as nChw16c, read as NCHW by
/// oneDNN itself (few channels, dense), or copied into nChw16c scratch.
enum class ConvSource { kBlocked, kNchwDirect, kCopy, kNone };

ConvSource conv_source(const Program& p, const Step& s) {
  const Node& conv = p.node(s.anchor);
  const ValueId x = p.operands.at(s.anchor)[0];
  const DimExprs& xd = p.values[static_cast<size_t>(x)].dims;
  if (reads_blocked(p, x)) return ConvSource::kBlocked;
  // oneDNN 2.6's JIT kernel from NCHW straight into nChw16c covers inputs of
  // under 16 channels (an image); others would fall to its reference kernel.
  if (ops::conv_group(conv) == 1 && xd[1].is_const() && xd[1].value() < 16)
    return ConvSource::kNchwDirect;
  if (mult16(xd[1])) return ConvSource::kCopy;
  return ConvSource::kNone;
}

}  // namespace

DimExprs blocked_dims(const DimExprs& d) {
  const DimExprs a = rank4(d);
  // A channel extent of 1 broadcasts over C: the operand is plain NCHW.
  if (is_one(a[1])) return {a[0], DimExpr(1), a[2], a[3], DimExpr(1)};
  return {a[0], DimExpr(a[1].value() / 16), a[2], a[3], DimExpr(16)};
}

bool reads_blocked(const Program& p, ValueId v) {
  const DimExprs& seen = p.values[static_cast<size_t>(v)].dims;
  if (seen.size() != 4 || !mult16(seen[1])) return false;
  if (is_one(seen[2]) && is_one(seen[3])) return true;  // [N, C, 1, 1]: the same bytes
  while (p.values[static_cast<size_t>(v)].place == Place::kView)
    v = p.values[static_cast<size_t>(v)].view_of;
  const ValueInfo& info = p.values[static_cast<size_t>(v)];
  return info.def_step >= 0 && p.steps[static_cast<size_t>(info.def_step)].nhwc &&
         info.dims == seen;
}

bool blocked_fits(const Program& p) {
  bool depthwise = false;
  for (const Step& s : p.steps) {
    if (!s.nhwc) continue;
    // Every 4-D value the step walks or stores: C a multiple of 16 (or 1,
    // which is the same bytes as NCHW and stays so).
    for (ValueId v : made_by(p, s)) {
      const DimExprs& d = p.values[static_cast<size_t>(v)].dims;
      if (d.size() == 4 && !mult16(d[1]) && !is_one(d[1])) return false;
    }
    const std::vector<ValueId> mine = made_by(p, s);
    for (NodeId m : s.chain)
      for (ValueId o : p.operands.at(m)) {
        const ValueInfo& info = p.values[static_cast<size_t>(o)];
        if (info.literal || std::find(mine.begin(), mine.end(), o) != mine.end()) continue;
        const DimExprs a = rank4(info.dims);
        if (info.dims.size() > 4 || !(is_one(a[1]) || mult16(a[1]))) return false;
        // A full-channel operand with H or W > 1 must be stored blocked itself.
        if (!is_one(a[1]) && !(is_one(a[2]) && is_one(a[3])) && !reads_blocked(p, o)) return false;
      }
    if (s.anchor < 0) continue;
    const Node& n = p.node(s.anchor);
    const DimExprs& y = p.values[static_cast<size_t>(n.outputs[0])].dims;
    if (!mult16(y[1])) return false;
    if (n.op_type == "Conv") {
      if (conv_source(p, s) == ConvSource::kNone) return false;
      depthwise = depthwise || ops::conv_group(n) > 1;
    } else if (!reads_blocked(p, p.operands.at(s.anchor)[0])) {
      return false;  // a pool
    }
  }
  return depthwise;
}

void set_blocked_conv(Program& p, Step& s) {
  const ValueId x = p.operands.at(s.anchor)[0];
  const ConvSource src = conv_source(p, s);
  // Unlike on the NHWC path a binary post-op is no obstacle to reading NCHW
  // directly: its operand is nChw16c like the conv's own result.
  s.nchw_src_blocked = src == ConvSource::kNchwDirect;
  s.scratch_floats =
      src == ConvSource::kCopy ? product(p.values[static_cast<size_t>(x)].dims) : DimExpr(0);
}

std::string describe_blocked(const Program& p, const Step& s) {
  std::string k;
  if (s.anchor >= 0 && p.node(s.anchor).op_type == "Conv") {
    if (s.nchw_src_blocked)
      k = "conv.f32.aot.dnnl_nchw_to_nChw16c";
    else if (!(s.scratch_floats.is_const() && s.scratch_floats.value() == 0))
      k = "layout.f32.aot.nchw_to_nChw16c+conv.f32.aot.dnnl_nChw16c";
    else
      k = "conv.f32.aot.dnnl_nChw16c";
    if (!s.chain.empty()) k += s.post_ops ? "+post_ops" : "+fused_eltwise_nChw16c";
    return k;
  }
  k = s.anchor >= 0 ? "pool.f32.aot." + p.node(s.anchor).op_type + "_nChw16c"
                    : "loop.f32.aot.nChw16c";
  if (!s.chain.empty()) k += "+fused_eltwise";
  return k;
}

}  // namespace hone::aot
