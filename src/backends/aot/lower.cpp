// lower(): dims of every value, fused steps, weights blob and arena plan.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "backends/aot/edge_dims.h"
#include "backends/aot/gemm_fold.h"
#include "backends/aot/nhwc.h"
#include "backends/aot/program.h"
#include "backends/aot/shape_rules.h"
#include "backends/aot/typed_values.h"
#include "backends/common/arena_layout.h"

namespace hone::aot {
namespace {

/// Byte alignment of every arena buffer and (in floats) of every weight.
constexpr int64_t kAlign = 64;

int64_t align_up(int64_t n, int64_t a) {
  return (n + a - 1) / a * a;
}

/// Consumers of every value: node ids, in node order.
std::vector<std::vector<NodeId>> consumers_of(const Graph& g) {
  std::vector<std::vector<NodeId>> c(g.values().size());
  for (size_t i = 0; i < g.nodes().size(); ++i)
    for (ValueId v : g.nodes()[i].inputs)
      if (v >= 0) c[static_cast<size_t>(v)].push_back(static_cast<NodeId>(i));
  return c;
}

/// The block's inputs: f32 tensors of known rank, each dim a number or a
/// symbol bound at run time (its bound from `opts`).
Result<void> bind_inputs(Program& p, const Graph& g, const LowerOptions& opts) {
  std::set<std::string> seen;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ValueId v = g.inputs()[i];
    const Value& val = g.value(v);
    ValueInfo& info = p.values[static_cast<size_t>(v)];
    if (!aot_dtype(val.dtype) || val.kind != ValueKind::kTensor)
      return fail(ErrorCode::kUnsupported, "input '" + val.name + "' is " +
                                               std::string(dtype_name(val.dtype)) +
                                               "; aot runs f32, i64, i32 and bool tensors");
    if (!val.shape)
      return fail(ErrorCode::kUnsupported,
                  "input '" + val.name + "' has no known rank; aot needs ranked inputs");
    info.place = Place::kInput;
    info.index = static_cast<int64_t>(i);
    info.dtype = val.dtype;
    for (size_t a = 0; a < val.shape->rank(); ++a) {
      const Dim& d = (*val.shape)[a];
      if (d.is_static()) {
        info.dims.push_back(d.value());
        continue;
      }
      // An unnamed dim gets a name of its own, so it still binds at run time.
      const std::string name =
          d.is_symbolic() ? d.symbol_name() : val.name + ":" + std::to_string(a);
      info.dims.push_back(DimExpr::symbol(name));
      if (seen.insert(name).second) {
        p.symbols.push_back(name);
        auto it = opts.bounds.find(name);
        p.symbol_max.push_back(it != opts.bounds.end() ? it->second : opts.default_max);
        p.symbol_unnamed.push_back(!d.is_symbolic());
        p.symbol_set_by_run.push_back(false);
      }
    }
  }
  return {};
}

/// The block's initializers, as weights placed when code first points at them.
Result<void> bind_constants(Program& p, const Graph& g) {
  for (size_t i = 0; i < g.values().size(); ++i) {
    const Value& val = g.values()[i];
    if (!val.initializer) continue;
    ValueInfo& info = p.values[i];
    info.constant = &*val.initializer;
    if (val.initializer->dtype() == DType::kBool) {
      // A Where's constant condition: the generated code reads floats, 0 or 1.
      Tensor f = Tensor::zeros(DType::kF32, val.initializer->shape());
      for (int64_t k = 0; k < f.numel(); ++k)
        f.data<float>()[k] = val.initializer->data<uint8_t>()[k] != 0 ? 1.0f : 0.0f;
      p.synthetic.push_back(std::move(f));
      info.constant = &p.synthetic.back();
    }
    info.dtype = info.constant->dtype();
    for (int64_t d : val.initializer->shape()) info.dims.push_back(d);
    info.place = Place::kWeight;
    info.offset = -1;  // assigned when code first points at it
  }
  return {};
}

class Lowering {
 public:
  Lowering(const Graph& g, const LowerOptions& o) : g_(g), opts_(o), consumers_(consumers_of(g)) {
    p_.graph = &g;
    p_.values.resize(g.values().size());
    for (size_t i = 0; i < g.values().size(); ++i) p_.values[i].name = g.values()[i].name;
  }

  Result<Program> run() {
    HONE_CHECK_OK(bind_inputs(p_, g_, opts_));
    read_derived_dims(p_, g_);
    HONE_CHECK_OK(bind_constants(p_, g_));
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
      const NodeId id = static_cast<NodeId>(i);
      const Node& n = g_.node(id);
      HONE_CHECK_OK_CTX(infer_node(p_, id), "while lowering node " + n.describe());
      group(id);
    }
    place_values();
    choose_layouts(p_);
    HONE_CHECK_OK(place_arena());
    return std::move(p_);
  }

 private:
  /// Adds `id` to the last step as an epilogue, or starts a step.
  void group(NodeId id) {
    const Node& n = g_.node(id);
    if (is_view_op(n.op_type)) return;
    // Transposes around MatMuls become strides of the GEMM (gemm_fold.h).
    if (folds_into_matmul_operand(p_, consumers_, id)) {
      strided_views_.insert(id);
      return;
    }
    if (!p_.steps.empty() && folds_into_matmul_result(p_, consumers_, p_.steps.back(), id)) {
      Step& s = p_.steps.back();
      s.chain.push_back(id);
      s.result = n.outputs[0];
      s.label += "+Transpose";
      return;
    }
    ValueId out = n.outputs[0];
    // LSTM may omit Y and return only Y_h or Y_c: the step's result is its first output.
    for (size_t k = 1; out < 0 && k < n.outputs.size(); ++k) out = n.outputs[k];
    if (is_elementwise_op(n.op_type) && !p_.steps.empty() && !is_lstm(p_.steps.back().anchor) &&
        same_dtype_as_anchor(p_.steps.back(), out)) {
      Step& s = p_.steps.back();
      const ValueId r = s.result;
      const auto& ops = p_.operands[id];
      const bool reads_result = std::find(ops.begin(), ops.end(), r) != ops.end();
      const bool same_dims =
          p_.values[static_cast<size_t>(r)].dims == p_.values[static_cast<size_t>(out)].dims;
      // An anchor's result is not stored when a chain follows it, so it may
      // feed nothing but the chain's first node.
      const bool anchor_only =
          !s.chain.empty() ||
          (consumers_[static_cast<size_t>(r)].size() == 1 && !is_graph_output(r));
      // The anchor and every chain member must stay addressable by one loop
      // index, which a broadcast of the running value would break.
      if (reads_result && same_dims && anchor_only && no_broadcast_of_locals(s, id)) {
        s.chain.push_back(id);
        s.result = out;
        s.label += "+" + n.op_type;
        return;
      }
    }
    Step s;
    if (is_elementwise_op(n.op_type))
      s.chain.push_back(id);
    else
      s.anchor = id;
    s.result = out;
    s.label = n.op_type;
    s.scratch_floats = scratch_floats(p_, id);
    p_.steps.push_back(std::move(s));
  }

  /// LSTM, GRU, Split and TopK write several outputs with their own strides,
  /// so no chain follows them.
  bool is_lstm(NodeId id) const {
    if (id < 0) return false;
    const std::string& op = g_.node(id).op_type;
    return op == "LSTM" || op == "GRU" || op == "Split" || op == "TopK";
  }

  /// A chain after an anchor runs in the anchor's buffer, so a Cast to
  /// another type starts a step of its own.
  bool same_dtype_as_anchor(const Step& s, ValueId out) const {
    return s.anchor < 0 || p_.values[static_cast<size_t>(g_.node(s.anchor).outputs[0])].dtype ==
                               p_.values[static_cast<size_t>(out)].dtype;
  }

  /// Y, Y_h and Y_c of an LSTM step: a buffer for each one used, none for the rest.
  void place_lstm_outputs(const Node& n, size_t si) {
    for (ValueId v : n.outputs) {
      if (v < 0) continue;
      ValueInfo& info = p_.values[static_cast<size_t>(v)];
      info.def_step = static_cast<int>(si);
      if (info.place == Place::kOutput) continue;
      const bool used = !consumers_[static_cast<size_t>(v)].empty() || is_graph_output(v);
      info.place = used ? Place::kArena : Place::kNone;
    }
  }

  /// Values made inside step `s` and read by `id` must have `id`'s output dims.
  bool no_broadcast_of_locals(const Step& s, NodeId id) const {
    const DimExprs& out = p_.values[static_cast<size_t>(g_.node(id).outputs[0])].dims;
    for (ValueId v : p_.operands.at(id)) {
      bool made_here = false;
      for (NodeId m : s.chain) made_here |= g_.node(m).outputs[0] == v;
      if (s.anchor >= 0) made_here |= g_.node(s.anchor).outputs[0] == v;
      if (made_here && !(p_.values[static_cast<size_t>(v)].dims == out)) return false;
    }
    return true;
  }

  bool is_graph_output(ValueId v) const {
    return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
  }

  void place_values() {
    for (size_t k = 0; k < g_.outputs().size(); ++k) {
      ValueInfo& info = p_.values[static_cast<size_t>(g_.outputs()[k])];
      const Value& val = g_.value(g_.outputs()[k]);
      // The first mention of a value made by a step writes the caller's
      // buffer directly; inputs, weights, views and repeats are copied at the end.
      if (val.producer >= 0 && !is_view_op(g_.node(val.producer).op_type) &&
          info.place == Place::kNone) {
        info.place = Place::kOutput;
        info.index = static_cast<int64_t>(k);
      }
    }
    for (size_t si = 0; si < p_.steps.size(); ++si) {
      const Step& s = p_.steps[si];
      std::set<NodeId> members(s.chain.begin(), s.chain.end());
      auto place = [&](ValueId v, bool anchor_with_chain) {
        ValueInfo& info = p_.values[static_cast<size_t>(v)];
        info.def_step = static_cast<int>(si);
        if (info.place == Place::kOutput) return;
        if (anchor_with_chain) return;  // kNone: written into the result's buffer
        bool local = v != s.result;
        for (NodeId c : consumers_[static_cast<size_t>(v)]) local &= members.count(c) != 0;
        info.place = local ? Place::kLocal : Place::kArena;
      };
      if (is_lstm(s.anchor))
        place_lstm_outputs(g_.node(s.anchor), si);
      else if (s.anchor >= 0)
        place(g_.node(s.anchor).outputs[0], !s.chain.empty());
      for (NodeId m : s.chain) place(g_.node(m).outputs[0], false);
    }
    for (const Node& n : g_.nodes())
      if (is_view_op(n.op_type) &&
          p_.values[static_cast<size_t>(n.outputs[0])].place == Place::kNone) {
        ValueInfo& info = p_.values[static_cast<size_t>(n.outputs[0])];
        info.place = Place::kView;
        info.view_of = n.inputs[0];
      }
    // The MatMuls reading these know the strides; the storage is the input's.
    for (NodeId t : strided_views_) {
      ValueInfo& info = p_.values[static_cast<size_t>(g_.node(t).outputs[0])];
      info.place = Place::kView;
      info.view_of = g_.node(t).inputs[0];
    }
    // Every weight the code points at (literals are inlined instead).
    for (const Step& s : p_.steps) {
      std::vector<NodeId> nodes = s.chain;
      if (s.anchor >= 0) nodes.insert(nodes.begin(), s.anchor);
      for (NodeId id : nodes)
        for (ValueId v : p_.operands[id])
          if (id == s.anchor || !p_.values[static_cast<size_t>(v)].literal) use_weight(root(v));
    }
    for (ValueId v : g_.outputs()) use_weight(root(v));
  }

  ValueId root(ValueId v) const {
    while (p_.values[static_cast<size_t>(v)].place == Place::kView)
      v = p_.values[static_cast<size_t>(v)].view_of;
    return v;
  }

  void use_weight(ValueId v) {
    ValueInfo& info = p_.values[static_cast<size_t>(v)];
    if (info.place != Place::kWeight || info.offset >= 0) return;
    const Tensor& t = *info.constant;
    info.offset = static_cast<int64_t>(p_.weights.size());
    // Integer constants (Gather's indices) keep their bytes, read through their C type.
    const auto bytes = static_cast<int64_t>(t.nbytes());
    p_.weights.resize(static_cast<size_t>(align_up(info.offset + (bytes + 3) / 4, kAlign / 4)),
                      0.0f);
    std::memcpy(p_.weights.data() + info.offset, t.raw(), static_cast<size_t>(bytes));
  }

  /// Arena offsets from the shared liveness planner (backends/common/arena_layout.h):
  /// an arena value lives from the step that writes it to the last step that
  /// reads it (through views, its root), and graph outputs that are copied out
  /// at the end live until one last step that stands for that copy.
  Result<void> place_arena() {
    ArenaProblem mp;
    mp.alignment = static_cast<size_t>(kAlign);
    std::vector<int> slot(p_.values.size(), -1);  // ValueInfo → ArenaProblem value
    for (size_t i = 0; i < p_.values.size(); ++i)
      if (p_.values[i].place == Place::kArena) {
        slot[i] = static_cast<int>(mp.values.size());
        mp.values.push_back(
            {static_cast<size_t>(std::max<int64_t>(1, p_.at_bounds(product(p_.values[i].dims))) *
                                 static_cast<int64_t>(dtype_size(p_.values[i].dtype)))});
      }
    mp.steps.resize(p_.steps.size() + 1);
    auto read = [&](size_t si, ValueId v) {
      const size_t r = static_cast<size_t>(root(v));
      const int m = slot[r];
      if (m < 0 || p_.values[r].def_step < 0 || p_.values[r].def_step >= static_cast<int>(si))
        return;
      auto& reads = mp.steps[si].reads;
      if (std::find(reads.begin(), reads.end(), m) == reads.end()) reads.push_back(m);
    };
    for (size_t i = 0; i < p_.values.size(); ++i)
      if (slot[i] >= 0 && p_.values[i].def_step >= 0)
        mp.steps[static_cast<size_t>(p_.values[i].def_step)].writes.push_back(slot[i]);
    for (size_t si = 0; si < p_.steps.size(); ++si) {
      Step& s = p_.steps[si];
      std::vector<NodeId> nodes = s.chain;
      if (s.anchor >= 0) nodes.insert(nodes.begin(), s.anchor);
      for (NodeId id : nodes)
        for (ValueId v : p_.operands[id]) read(si, v);
      if (!(s.scratch_floats.is_const() && s.scratch_floats.value() == 0))
        mp.steps[si].scratch_bytes = static_cast<size_t>(p_.at_bounds(s.scratch_floats) * 4);
    }
    for (ValueId v : g_.outputs()) read(p_.steps.size(), v);
    HONE_TRY(ArenaLayout plan, lay_out(mp));
    for (size_t i = 0; i < p_.values.size(); ++i)
      if (slot[i] >= 0 && plan.offsets[static_cast<size_t>(slot[i])] != ArenaLayout::kNotPlaced)
        p_.values[i].offset = static_cast<int64_t>(plan.offsets[static_cast<size_t>(slot[i])]);
    for (size_t si = 0; si < p_.steps.size(); ++si)
      if (plan.scratch_offsets[si] != ArenaLayout::kNotPlaced)
        p_.steps[si].scratch_offset = static_cast<int64_t>(plan.scratch_offsets[si]);
    p_.arena_bytes = static_cast<int64_t>(plan.arena_bytes);
    return {};
  }

  const Graph& g_;
  const LowerOptions& opts_;
  std::vector<std::vector<NodeId>> consumers_;
  std::set<NodeId> strided_views_;  // Transposes MatMuls read through strides
  Program p_;
};

}  // namespace

std::string Program::sym_c(const std::string& s) const {
  for (size_t i = 0; i < symbols.size(); ++i)
    if (symbols[i] == s) return "d[" + std::to_string(i) + "]";
  return "0";
}

int64_t Program::at_bounds(const DimExpr& e) const {
  std::map<std::string, int64_t> b;
  for (size_t i = 0; i < symbols.size(); ++i) b[symbols[i]] = symbol_max[i];
  return e.eval(b);
}

Result<Program> lower(const Graph& block, const LowerOptions& options) {
  return Lowering(block, options).run();
}

}  // namespace hone::aot
