// What the aot backend accepts, node by node, with the reason for every
// refusal. Shape-dependent limits (symbolic spatial dims, broadcasts aot
// cannot prove) are checked again when the block is lowered.
#include <set>

#include "backends/aot/aot_backend.h"
#include "backends/aot/eltwise.h"
#include "backends/aot/host_block.h"
#include "backends/aot/lstm.h"
#include "backends/aot/program.h"
#include "backends/aot/rnn.h"
#include "backends/aot/typed_values.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/run_length.h"
#include "ops/shape_fn_tensor.h"
#include "ops/slice.h"
#include "ops/sym_int.h"

namespace hone::aot {

std::string f32_tensor_problem(const Value& v, size_t i) {
  if (v.kind != ValueKind::kTensor) return "input " + std::to_string(i) + " is not a tensor";
  // kUndefined: a builder-made intermediate; lowering checks the real types.
  if (v.dtype != DType::kF32 && v.dtype != DType::kUndefined)
    return "input " + std::to_string(i) + " is " + std::string(dtype_name(v.dtype)) +
           "; aot runs f32 only";
  return "";
}

namespace {

using node_query::is_const;
using node_query::rank_of;
using node_query::val;

/// Inputs that carry shapes or axes (constant integers) rather than data.
size_t data_inputs(const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op.rfind("Reduce", 0) == 0 ||
      op == "Clip" || op == "Slice" || op == "Expand" || op == "Split" || op == "Pad" ||
      op == "Resize" || op == "TopK" || op == "CumSum" || op == "OneHot")
    return 1;
  if (op == "NonMaxSuppression") return 2;  // boxes and scores; the rest constants
  return n.inputs.size();
}

/// A Reshape or Expand whose shape is computed from dims (a host value, known
/// per signature only): aot takes its output dims from shape inference, so
/// each must be a number, a symbol of its input's dims ([batch, 2, 4, seq,
/// 16] from [batch, 2, 1, seq, 16]), or an expression of those and of the
/// model inputs' symbols, which the block binds where it reads the model's
/// inputs (Whisper's [L, batch, 128] from [(L*batch), 128], L a conv length
/// of seq; copy_rules.cpp's inferred_dims reads them; a block binding none
/// of a dim's symbols runs on the reference, logged).
/// (inferred_dims_problem: the dims part, which a Slice of computed bounds
/// shares.)
std::string inferred_dims_problem(const Graph& g, const Node& n) {
  const Value* x = val(g, n, 0);
  const Value& y = g.value(n.outputs[0]);
  if (x == nullptr || !x->shape || !y.shape) return "the shape it makes is not known";
  std::set<std::string> known;
  for (const Dim& e : x->shape->dims())
    if (e.is_symbolic()) known.insert(e.symbol_name());
  for (ValueId v : g.inputs())
    if (const auto& shape = g.value(v).shape)
      for (const Dim& e : shape->dims())
        if (e.is_symbolic() && !ops::is_derived(e)) known.insert(e.symbol_name());
  for (const Dim& d : y.shape->dims()) {
    if (d.is_static()) continue;
    const auto e = dim_expr_of(d, [&](const std::string& name) -> std::optional<DimExpr> {
      if (known.count(name)) return DimExpr::symbol(name);
      return std::nullopt;
    });
    if (!e)
      return "its dim " + d.to_string() + " is none of its input's, nor an expression of the " +
             "model inputs' symbols";
  }
  return "";
}

std::string computed_shape_problem(const Graph& g, const Node& n) {
  if (!host_eval::host_value(g, n.inputs[1], kHostPolicy))
    return "input 1 (shape) must be a constant or computed from dims";
  return inferred_dims_problem(g, n);
}

/// What aot's strided copy cannot do for this Slice or Gather (shape_rules.cpp
/// says the same when lowering): every sliced or gathered axis has a static
/// dim, bounds are constants (checked with the other operands). A Gather by
/// one constant index is a copy; by any other indices aot reads them when the
/// code runs (gather.cpp).
std::string copy_problem(const Graph& g, const Node& n) {
  const Value* x = val(g, n, 0);
  if (x == nullptr || !x->shape) return "the input's rank is unknown";
  const auto r = static_cast<int64_t>(x->shape->rank());
  auto static_axis = [&](int64_t axis, std::string* why) {
    const auto a = ops::try_normalize_axis(axis, r);
    if (!a) return *why = "axis " + std::to_string(axis) + " is out of range", false;
    if (!(*x->shape)[static_cast<size_t>(*a)].is_static())
      return *why = "axis " + std::to_string(axis) + " has a symbolic dim (aot slices static ones)",
             false;
    return true;
  };
  std::string why;
  if (n.op_type == "Split") return static_axis(ops::axis_attr(n), &why) ? "" : why;
  if (n.op_type == "Gather") {
    const Value* idx = val(g, n, 1);
    if (idx == nullptr) return "no indices";
    // Any other indices, or one along a symbolic dim, are read when the code
    // runs (gather.cpp).
    return ops::try_normalize_axis(ops::axis_attr(n), r) ? "" : "the axis is out of range";
  }
  if (g.opset() < 10) return "Slice before opset 10 (bounds as attributes)";
  // A length it finds when it runs (ops/run_length.h): any starts and ends,
  // constant axes and steps (slice_bounds.cpp).
  if (ops::slice_length_at_run_time(g, n))
    return (val(g, n, 3) && !is_const(g, n, 3)) || (val(g, n, 4) && !is_const(g, n, 4))
               ? "a Slice of a run-time length takes constant axes and steps"
               : "";
  if (!is_const(g, n, 1) || !is_const(g, n, 2)) return "";  // the constant check below names it
  std::vector<int64_t> axes;
  if (is_const(g, n, 3)) {
    const Tensor& t = *g.value(n.inputs[3]).initializer;
    for (int64_t k = 0; k < t.numel(); ++k) axes.push_back(tensor_element_as_int64(t, k));
  } else if (!val(g, n, 3)) {
    for (int64_t k = 0; k < g.value(n.inputs[1]).initializer->numel(); ++k) axes.push_back(k);
  }
  // A symbolic axis takes bounds counted from either end (ops::runtime_slice).
  auto ints = [&](size_t i) {
    std::vector<int64_t> v;
    if (is_const(g, n, i))
      for (int64_t k = 0; k < g.value(n.inputs[i]).initializer->numel(); ++k)
        v.push_back(tensor_element_as_int64(*g.value(n.inputs[i]).initializer, k));
    return v;
  };
  const std::vector<int64_t> starts = ints(1), ends = ints(2), steps = ints(4);
  for (size_t k = 0; k < axes.size(); ++k)
    if (!static_axis(axes[k], &why) &&
        !(k < starts.size() && k < ends.size() &&
          ops::runtime_slice(starts[k], ends[k], k < steps.size() ? steps[k] : 1)))
      return why + " but its bounds are not counted from its ends with step 1";
  return "";
}

std::string why_not(const Graph& g, const Node& n, int depth = 0);

/// A data input of unknown rank that a node aot refuses makes, or that is
/// computed from dims: it would be an input of the block or of its code,
/// which aot cannot lower without a rank, and the whole block would run on
/// the reference (a chain of such nodes is looked at a few levels deep).
std::string unranked_input_problem(const Graph& g, const Node& n, int depth) {
  if (depth >= 4) return "";
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = val(g, n, i);
    if (v == nullptr || v->shape || v->initializer || v->producer < 0 || !reads_data_slot(n, i))
      continue;
    // A value computed from dims becomes an input of the code (host_block.h).
    if (host_eval::host_value(g, n.inputs[i], kHostPolicy))
      return "input " + std::to_string(i) + " is computed from dims and its rank is unknown";
    if (!why_not(g, g.node(v->producer), depth + 1).empty())
      return "input " + std::to_string(i) + " has no known rank and is made by a node aot " +
             "leaves to the reference";
  }
  return "";
}

std::string why_not(const Graph& g, const Node& n, int depth) {
  static const std::set<std::string> kAnchors = {"Split",
                                                 "Expand",
                                                 "Slice",
                                                 "Gather",
                                                 "GatherND",
                                                 "Conv",
                                                 "Gemm",
                                                 "MatMul",
                                                 "MaxPool",
                                                 "AveragePool",
                                                 "GlobalAveragePool",
                                                 "GlobalMaxPool",
                                                 "Softmax",
                                                 "LogSoftmax",
                                                 "LayerNormalization",
                                                 "InstanceNormalization",
                                                 "Resize",
                                                 "ConvTranspose",
                                                 "ReduceMean",
                                                 "ReduceSum",
                                                 "ReduceMax",
                                                 "ReduceMin",
                                                 "ReduceL1",
                                                 "ReduceL2",
                                                 "ReduceSumSquare",
                                                 "Transpose",
                                                 "Concat",
                                                 "Pad",
                                                 "TopK",
                                                 "ArgMax",
                                                 "ArgMin",
                                                 "CumSum",
                                                 "GatherElements",
                                                 "ScatterElements",
                                                 "ScatterND",
                                                 "OneHot",
                                                 "NonZero",
                                                 "GridSample",
                                                 "RoiAlign",
                                                 "NonMaxSuppression"};
  const std::string& op = n.op_type;
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return "domain '" + n.domain + "' is not ONNX's default";
  // Shape arithmetic, masks and tables computed from dims are evaluated for
  // each signature when the block runs (host_block.h).
  if (host_eval::host_node(g, n, kHostPolicy)) return {};
  if (op == "LSTM") return why_not_lstm(g, n);
  if (op == "GRU") return why_not_gru(g, n);
  if (!is_elementwise_op(op) && !is_view_op(op) && !kAnchors.count(op))
    return "aot has no code generator for " + op;
  if (std::string why = types_problem(g, n, data_inputs(n)); !why.empty()) return why;
  if (std::string why = unranked_input_problem(g, n, depth); !why.empty()) return why;
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (n.outputs[i] < 0 || g.value(n.outputs[i]).name.empty()) continue;
    if (op == "TopK" || op == "Split") continue;  // TopK's i64 indices; Split's parts
    return "output " + std::to_string(i) + " (training or index outputs) is not supported";
  }
  for (size_t i = data_inputs(n); i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !is_const(g, n, i)) {
      // Resize's sizes computed from dims: lowering takes the output dims shape inference gave.
      if (op == "Resize" && i == 3 && host_eval::host_value(g, n.inputs[i], kHostPolicy)) continue;
      // A Slice of a run-time length reads its starts and ends when it runs.
      if (op == "Slice" && (i == 1 || i == 2) && ops::slice_length_at_run_time(g, n)) continue;
      // Slice's starts and ends computed from dims: its output dims from shape
      // inference, its starts read when the code runs (slice_bounds.cpp).
      if (op == "Slice" && (i == 1 || i == 2) &&
          host_eval::host_value(g, n.inputs[i], kHostPolicy)) {
        if (std::string why = inferred_dims_problem(g, n); !why.empty()) return why;
        continue;
      }
      // TopK's K read when the code runs: its length a symbol the run sets (topk.cpp).
      if (op == "TopK" && i == 1) continue;
      if ((op == "Reshape" || op == "Expand") && i == 1) {
        if (std::string why = computed_shape_problem(g, n); !why.empty()) return why;
        continue;
      }
      return "input " + std::to_string(i) + " (shape, axes or bounds) must be a constant";
    }
  if (op == "BatchNormalization") {
    const auto ba = ops::batch_norm_attrs(n);
    if (!ba) return ba.error().message();
    if (ba->training_mode) return "training_mode=1";
    if (!ba->spatial) return "spatial=0";
    for (size_t i = 1; i < 5; ++i)
      if (!is_const(g, n, i)) return "scale, bias, mean and var must be constants";
  }
  if (op == "LayerNormalization") {
    const auto na = ops::norm_attrs(n);
    if (!na) return na.error().message();
    if (na->stash_type != 1) return "stash_type other than f32";
    if (!is_const(g, n, 1) || (val(g, n, 2) && !is_const(g, n, 2)))
      return "scale and bias must be constants";
  }
  if (op == "InstanceNormalization" && (!is_const(g, n, 1) || !is_const(g, n, 2)))
    return "scale and B must be constants";
  if (op == "ConvTranspose") {
    if (!is_const(g, n, 1) || (val(g, n, 2) && !is_const(g, n, 2)))
      return "W and B must be constants";
    const auto ca = ops::conv_attrs(n);
    if (!ca) return ca.error().message();
    if (ca->auto_pad != ops::AutoPad::kNotSet || !ca->output_shape.empty())
      return "auto_pad or output_shape (aot takes explicit pads)";
    if (const int64_t r = rank_of(val(g, n, 0)); r >= 0 && r != 3 && r != 4)
      return "rank " + std::to_string(r) + ": aot runs 1-D and 2-D ConvTranspose";
  }
  if (op == "Pad") {
    const auto pa = ops::pad_attrs(n);
    if (!pa) return pa.error().message();
  }
  if (op == "TopK" && g.opset() < 10) return "TopK before opset 10 (K as an attribute)";
  if (op == "Slice" || op == "Gather" || op == "Split") {
    if (std::string why = copy_problem(g, n); !why.empty()) return why;
  }
  if (op == "GatherND") {
    // With shapes known here, the shared rule (the tuple length must be a
    // number); lowering applies it again to the dims it works out.
    const Value *x = val(g, n, 0), *idx = val(g, n, 1);
    if (x == nullptr || idx == nullptr) return "no data or no indices";
    if (x->shape && idx->shape)
      if (auto r = ops::gather_nd_shape<Dim>(n.attr_int("batch_dims", 0), x->shape->dims(),
                                             idx->shape->dims());
          !r)
        return r.error().message();
  }
  if (op == "ScatterND") {
    // The updates have GatherND's output dims at batch_dims 0 (the same rule).
    const Value *x = val(g, n, 0), *idx = val(g, n, 1), *upd = val(g, n, 2);
    if (x == nullptr || idx == nullptr || upd == nullptr) return "no data, indices or updates";
    if (auto r = ops::scatter_reduction(n); !r) return r.error().message();
    if (x->shape && idx->shape)
      if (auto r = ops::gather_nd_shape<Dim>(0, x->shape->dims(), idx->shape->dims()); !r)
        return r.error().message();
  }
  if (op == "Conv" || op == "MaxPool" || op == "AveragePool") {
    const int64_t r = std::max(rank_of(val(g, n, 0)), op == "Conv" ? rank_of(val(g, n, 1)) : -1);
    if (r >= 0 && r != 3 && r != 4 && r != 5)
      return "rank " + std::to_string(r) + ": aot runs 1-D, 2-D and 3-D windows";
    if (op != "Conv" && !n.has_attr("kernel_shape")) return "kernel_shape is missing";
  }
  if (op == "Gemm")
    for (size_t i = 0; i < 2; ++i)
      if (rank_of(val(g, n, i)) >= 0 && rank_of(val(g, n, i)) != 2) return "A and B must be 2-D";
  if (op == "MatMul" && (rank_of(val(g, n, 0)) == 0 || rank_of(val(g, n, 1)) == 0))
    return "a scalar operand";
  if (const EltwiseOp* e = find_eltwise(op); e && e->refuse)
    if (std::string why = e->refuse(n); !why.empty()) return why;
  return {};
}

}  // namespace

bool reads_data_slot(const Node& n, size_t slot) {
  // A Slice's starts: read when the code runs where computed from dims, and
  // its ends too where its length is known only then (slice_bounds.cpp); so
  // is a TopK's K that is no constant (topk.cpp).
  return slot < data_inputs(n) || (n.op_type == "Slice" && (slot == 1 || slot == 2)) ||
         (n.op_type == "TopK" && slot == 1);
}

NodeSupport supports_node(const Graph& g, const Node& node) {
  return node_query::support_from(why_not(g, node));
}

}  // namespace hone::aot
