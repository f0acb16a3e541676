// choose_layouts(): which steps of a conv net run channels-last (NHWC).
#include "backends/aot/nhwc.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"
#include "ops/unary.h"

namespace hone::aot {
namespace {

bool static_chw(const DimExprs& d) {
  return d.size() == 4 && d[1].is_const() && d[2].is_const() && d[3].is_const();
}

bool is_pool(const std::string& op) {
  return op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
         op == "GlobalMaxPool";
}

/// Convs that oneDNN's convolution primitive runs here: 2-D, constant
/// weights, dense or depthwise.
bool conv_capable(const Program& p, NodeId id) {
  const Node& n = p.node(id);
  const auto& ops = p.operands.at(id);
  if (ops.size() < 2) return false;
  const ValueInfo& x = p.values[static_cast<size_t>(ops[0])];
  const ValueInfo& w = p.values[static_cast<size_t>(ops[1])];
  if (!static_chw(x.dims) || !w.constant || !w.is_f32() || w.dims.size() != 4) return false;
  if (ops.size() > 2 && !p.values[static_cast<size_t>(ops[2])].constant) return false;
  const int64_t g = ops::conv_group(n), c = x.dims[1].value(), m = w.dims[0].value();
  if (!(g == 1 || (g == c && m == g && w.dims[1].value() == 1))) return false;
  return window_of(n, x.dims, {w.dims[2].value(), w.dims[3].value()}, false).has_value();
}

bool pool_capable(const Program& p, NodeId id) {
  const Node& n = p.node(id);
  const DimExprs& x = p.values[static_cast<size_t>(p.operands.at(id)[0])].dims;
  if (!static_chw(x)) return false;
  if (n.op_type.rfind("Global", 0) == 0) return true;
  const auto pa = ops::pool_attrs(n);
  return pa && window_of(n, x, pa->kernel_shape, pa->ceil_mode).has_value();
}

class Layouts {
 public:
  explicit Layouts(Program& p) : p_(p), g_(*p.graph) {
    consumers_.resize(p.values.size());
    for (size_t i = 0; i < g_.nodes().size(); ++i)
      for (ValueId v : g_.nodes()[i].inputs)
        if (v >= 0) consumers_[static_cast<size_t>(v)].push_back(static_cast<NodeId>(i));
    for (size_t si = 0; si < p.steps.size(); ++si) {
      if (p.steps[si].anchor >= 0) step_of_[p.steps[si].anchor] = static_cast<int>(si);
      for (NodeId m : p.steps[si].chain) step_of_[m] = static_cast<int>(si);
    }
  }

  void run() {
    for (Step& s : p_.steps) s.nhwc = capable(s);
    // Dropping a step to NCHW can only make others drop: a fixed point.
    for (bool changed = true; changed;) {
      changed = false;
      for (Step& s : p_.steps)
        if (s.nhwc && !consistent(s)) s.nhwc = false, changed = true;
    }
    for (Step& s : p_.steps) {
      if (!s.nhwc) continue;
      for (ValueId v : made(s)) {
        ValueInfo& info = p_.values[static_cast<size_t>(v)];
        info.nhwc = info.dims.size() == 4 && !same_bytes_either_layout(info.dims);
      }
    }
    p_.blocked = blocked_fits(p_);
    for (Step& s : p_.steps) {
      if (!s.nhwc || s.anchor < 0 || p_.node(s.anchor).op_type != "Conv") continue;
      s.post_ops = !s.chain.empty() && conv_post_ops(p_, s).has_value();
      if (p_.blocked) {
        set_blocked_conv(p_, s);
        continue;
      }
      // No im2col: oneDNN reads the input in place, or a channels-last copy of it.
      const ValueId x = p_.operands.at(s.anchor)[0];
      s.scratch_floats =
          stored_nhwc_compatible(x) ? DimExpr(0) : product(p_.values[static_cast<size_t>(x)].dims);
      // oneDNN 2.6 has no fast kernel from NCHW to NHWC, and its NHWC one is
      // slow for a 3-channel input (brgconv 19 us against 11 us for mobilenet's
      // first conv at batch 8); from NCHW to nChw16c it has a JIT kernel for
      // inputs under 16 channels, so such a conv writes nChw16c scratch and a
      // reorder makes it channels-last. Binary post-ops would need their
      // operand blocked too, so those convs keep the copy.
      const Node& conv = p_.node(s.anchor);
      const DimExprs& xd = p_.values[static_cast<size_t>(x)].dims;
      const DimExprs& yd = p_.values[static_cast<size_t>(conv.outputs[0])].dims;
      bool binary = false;
      if (const auto ops = s.post_ops ? conv_post_ops(p_, s) : std::nullopt; ops)
        for (const PostOp& po : *ops) binary = binary || po.src1 != kNoValue;
      if (!stored_nhwc_compatible(x) && ops::conv_group(conv) == 1 && xd[1].is_const() &&
          xd[1].value() < 16 && yd[1].is_const() && yd[1].value() % 16 == 0 && !binary) {
        s.nchw_src_blocked = true;
        s.scratch_floats = product(yd);
      }
    }
  }

 private:
  bool capable(const Step& s) const {
    if (s.anchor >= 0) {
      const std::string& op = p_.node(s.anchor).op_type;
      if (op == "Conv") return conv_capable(p_, s.anchor);
      if (is_pool(op)) return pool_capable(p_, s.anchor);
      return false;
    }
    return static_chw(p_.values[static_cast<size_t>(s.result)].dims);
  }

  std::vector<ValueId> made(const Step& s) const {
    std::vector<ValueId> v;
    if (s.anchor >= 0) v.push_back(p_.node(s.anchor).outputs[0]);
    for (NodeId m : s.chain) v.push_back(p_.node(m).outputs[0]);
    return v;
  }

  /// Whether `v`'s bytes, as stored under the current decisions, read as NHWC.
  bool stored_nhwc_compatible(ValueId v) const {
    while (p_.values[static_cast<size_t>(v)].place == Place::kView)
      v = p_.values[static_cast<size_t>(v)].view_of;
    const ValueInfo& info = p_.values[static_cast<size_t>(v)];
    if (same_bytes_either_layout(info.dims)) return true;
    if (info.def_step < 0 || info.place == Place::kView) return false;
    return p_.steps[static_cast<size_t>(info.def_step)].nhwc;
  }

  bool consistent(const Step& s) const {
    const std::vector<ValueId> mine = made(s);
    auto is_mine = [&](ValueId v) { return std::find(mine.begin(), mine.end(), v) != mine.end(); };
    // What the step reads (a conv converts an NCHW input itself).
    if (s.anchor >= 0 && is_pool(p_.node(s.anchor).op_type) &&
        !stored_nhwc_compatible(p_.operands.at(s.anchor)[0]))
      return false;
    for (NodeId m : s.chain)
      for (ValueId v : p_.operands.at(m))
        if (!is_mine(v) && !p_.values[static_cast<size_t>(v)].literal && !stored_nhwc_compatible(v))
          return false;
    // Who reads what it stores: only channels-last steps, unless the bytes agree.
    for (ValueId v : mine) {
      const ValueInfo& info = p_.values[static_cast<size_t>(v)];
      if (info.place == Place::kLocal || info.place == Place::kNone) continue;
      if (same_bytes_either_layout(info.dims)) continue;
      if (std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end())
        return false;
      for (NodeId c : consumers_[static_cast<size_t>(v)]) {
        auto it = step_of_.find(c);
        if (it == step_of_.end() || !p_.steps[static_cast<size_t>(it->second)].nhwc) return false;
      }
    }
    return true;
  }

  Program& p_;
  const Graph& g_;
  std::vector<std::vector<NodeId>> consumers_;
  std::map<NodeId, int> step_of_;
};

}  // namespace

bool same_bytes_either_layout(const DimExprs& d) {
  if (d.size() != 4) return d.size() < 4 ? true : false;
  return is_one(d[1]) || (is_one(d[2]) && is_one(d[3]));
}

DimExprs nhwc_dims(const DimExprs& d) {
  DimExprs a(4 - std::min<size_t>(4, d.size()), DimExpr(1));
  a.insert(a.end(), d.begin(), d.end());
  return {a[0], a[2], a[3], a[1]};
}

void choose_layouts(Program& p) {
  Layouts(p).run();
}

std::optional<std::vector<PostOp>> conv_post_ops(const Program& p, const Step& s) {
  if (s.anchor < 0 || p.node(s.anchor).op_type != "Conv") return std::nullopt;
  std::vector<PostOp> out;
  ValueId running = p.node(s.anchor).outputs[0];
  for (size_t i = 0; i < s.chain.size(); ++i) {
    const Node& n = p.node(s.chain[i]);
    const auto& ops = p.operands.at(s.chain[i]);
    // Post-ops make only the final value: no member may be stored on the way.
    if (i + 1 < s.chain.size() &&
        p.values[static_cast<size_t>(n.outputs[0])].place != Place::kLocal)
      return std::nullopt;
    const std::string& op = n.op_type;
    if (op == "Add" && ops.size() == 2 && (ops[0] == running) != (ops[1] == running)) {
      const ValueId other = ops[0] == running ? ops[1] : ops[0];
      const ValueInfo& o = p.values[static_cast<size_t>(other)];
      const DimExprs& want = p.values[static_cast<size_t>(running)].dims;
      if (o.literal || !(o.dims == want)) return std::nullopt;
      if (!o.nhwc && !same_bytes_either_layout(o.dims)) return std::nullopt;
      out.push_back({"dnnl_binary_add", 0.0f, 0.0f, other});
    } else if (ops.empty() || ops[0] != running) {
      return std::nullopt;
    } else if (op == "Relu") {
      out.push_back({"dnnl_eltwise_relu"});
    } else if (op == "LeakyRelu") {
      const auto a = ops::unary_params(n, *ops::find_unary(op));
      if (!a) return std::nullopt;
      out.push_back({"dnnl_eltwise_relu", a->a});
    } else if (op == "Sigmoid") {
      out.push_back({"dnnl_eltwise_logistic"});
    } else if (op == "Tanh") {
      out.push_back({"dnnl_eltwise_tanh"});
    } else if (op == "Clip") {
      float lo = -INFINITY, hi = INFINITY;
      if (p.graph->opset() < 11) {
        const ops::ClipAttrs c = ops::clip_attrs(n);
        lo = c.min;
        hi = c.max;
      } else {
        for (size_t k = 1; k < 3; ++k)
          if (k < n.inputs.size() && n.inputs[k] >= 0) {
            const Tensor* t = p.values[static_cast<size_t>(n.inputs[k])].constant;
            if (!t) return std::nullopt;
            (k == 1 ? lo : hi) = static_cast<float>(tensor_element_as_double(*t, 0));
          }
      }
      out.push_back({"dnnl_eltwise_clip_v2", lo, hi});
    } else {
      return std::nullopt;
    }
    running = n.outputs[0];
  }
  return out;
}

std::optional<std::string> describe_nhwc(const Program& p, const Step& s) {
  if (!s.nhwc) return std::nullopt;
  if (p.blocked) return describe_blocked(p, s);
  std::string k;
  if (s.anchor >= 0 && p.node(s.anchor).op_type == "Conv") {
    if (s.nchw_src_blocked)
      k = "conv.f32.aot.dnnl_nchw_to_nChw16c";
    else if (!(s.scratch_floats.is_const() && s.scratch_floats.value() == 0))
      k = "layout.f32.aot.nchw_to_nhwc+";
    if (!s.nchw_src_blocked) k += "conv.f32.aot.dnnl_nhwc";
    if (!s.chain.empty()) k += s.post_ops ? "+post_ops" : "+fused_eltwise_nhwc";
    if (s.nchw_src_blocked) k += "+reorder.f32.aot.nChw16c_to_nhwc";
    return k;
  }
  k = s.anchor >= 0 ? "pool.f32.aot." + p.node(s.anchor).op_type + "_nhwc" : "loop.f32.aot.nhwc";
  if (!s.chain.empty()) k += s.anchor >= 0 ? "+fused_eltwise" : "+fused_eltwise";
  return k;
}

}  // namespace hone::aot
