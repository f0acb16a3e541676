#include "backends/aot/rnn.h"

#include <algorithm>
#include <cctype>

#include "backends/aot/shape_rules.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"

namespace hone::aot {

const RnnKind kLstmKind{"LSTM", 4, 3, {"sigmoid", "tanh", "tanh"}, {1, 2, 3, 7}};
const RnnKind kGruKind{"GRU", 3, 2, {"sigmoid", "tanh"}, {1, 2, 3}};

namespace {

using node_query::val;

std::string rnn_lower_case(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::string why_not_rnn(const Graph& g, const Node& n, const RnnKind& kind) {
  if (n.inputs.size() < 3 || !has_input(n, 0) || !has_input(n, 1) || !has_input(n, 2))
    return "X, W or R is missing";
  std::vector<size_t> data = kind.weight_slots;
  data.insert(data.end(), {0, 5});
  if (kind.outputs > 2) data.push_back(6);  // LSTM's initial_c
  for (size_t i : data) {
    const Value* v = val(g, n, i);
    if (v == nullptr) continue;
    if (std::string why = f32_tensor_problem(*v, i); !why.empty()) return why;
  }
  if (has_input(n, 4)) return "sequence_lens (rows of different lengths) is not supported";
  for (size_t i = 1; i < 3; ++i) {
    const Value* v = val(g, n, i);
    if (!v->shape || v->shape->rank() != 3) return "W and R must have a known rank 3";
    for (size_t a = 0; a < 3; ++a)
      if (!(*v->shape)[a].is_static()) return "W and R must have static dims";
  }
  const auto ra = ops::rnn_attrs(n);
  if (!ra) return ra.error().message();
  const std::vector<std::string>& acts = ra->activations;
  const size_t per_dir = kind.activations.size();
  if (!acts.empty()) {
    if (acts.size() != per_dir && acts.size() != per_dir * static_cast<size_t>(ra->directions()))
      return "activations lists " + std::to_string(acts.size()) + " names";
    for (size_t i = 0; i < acts.size(); ++i)
      if (rnn_lower_case(acts[i]) != kind.activations[i % per_dir])
        return "activation '" + acts[i] + "' (aot runs " + kind.op + "'s defaults only)";
  }
  for (size_t i = 0; i < n.outputs.size() && i < kind.outputs; ++i)
    if (n.outputs[i] >= 0) {
      const DType t = g.value(n.outputs[i]).dtype;
      if (t != DType::kF32 && t != DType::kUndefined) return "an output is not f32";
    }
  if (n.outputs.size() > kind.outputs)
    return "more than " + std::to_string(kind.outputs) + " outputs";
  return {};
}

Result<void> accept_state(Program& p, const Node& n, size_t i, const RnnDims& d, const char* what) {
  if (!has_input(n, i)) return {};
  const DimExprs got = dims_of(p, n.inputs[i]);
  const DimExprs& want = d.state;
  auto mismatch = [&] {
    return fail(ErrorCode::kInvalidArgument, n.op_type + " " + what + " must have dims " +
                                                 to_string(want) + ", got " + to_string(got));
  };
  if (got.size() != want.size()) return mismatch();
  // Shape inference leaves a state computed in the graph (ConstantOfShape of
  // a target made from Shape) as symbols of its own, such as
  // [unk__3,unk__1,unk__2] for [2,batch,96]: the code reads it with the dims
  // it needs and checks them when it runs (emit_rnn_prologue); each such
  // symbol's bound rises to the bound of the dim it must equal, so the input
  // check lets the right dims through. Two different numbers are an error.
  for (size_t a = 0; a < got.size(); ++a) {
    if (got[a] == want[a]) continue;
    if (got[a].is_const() && want[a].is_const()) return mismatch();
    for (size_t s = 0; s < p.symbols.size(); ++s)
      if (DimExpr::symbol(p.symbols[s]) == got[a])
        p.symbol_max[s] = std::max(p.symbol_max[s], p.at_bounds(want[a]));
  }
  return {};
}

Result<RnnDims> rnn_dims(Program& p, const Node& n, const RnnKind& kind) {
  if (std::string why = why_not_rnn(*p.graph, n, kind); !why.empty())
    return fail(ErrorCode::kUnsupported, n.op_type + ": " + why);
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (i != 4 && has_input(n, i) && !p.values[static_cast<size_t>(n.inputs[i])].is_f32())
      return fail(ErrorCode::kUnsupported,
                  n.op_type + " input " + std::to_string(i) + " is not f32");
  const DimExprs& x = dims_of(p, n.inputs[0]);
  if (x.size() != 3 || !x[2].is_const())
    return fail(ErrorCode::kUnsupported,
                n.op_type + " X must be rank 3 with a static input size, got " + to_string(x));
  const RnnDims d = rnn_shape(p, n);
  const int64_t G = kind.gates, H = d.hidden, D = d.dirs;
  auto expect = [&](size_t i, const DimExprs& want, const char* what) -> Result<void> {
    if (!has_input(n, i)) return {};
    const DimExprs& got = dims_of(p, n.inputs[i]);
    if (!(got == want))
      return fail(ErrorCode::kInvalidArgument, n.op_type + " " + what + " must have dims " +
                                                   to_string(want) + ", got " + to_string(got));
    return {};
  };
  HONE_CHECK_OK(expect(1, {D, G * H, d.input}, "W"));
  HONE_CHECK_OK(expect(2, {D, G * H, H}, "R"));
  HONE_CHECK_OK(expect(3, {D, 2 * G * H}, "B"));
  HONE_CHECK_OK(accept_state(p, n, 5, d, "initial_h"));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) {
      p.values[static_cast<size_t>(n.outputs[i])].dims = i == 0 ? d.y : d.state;
      p.values[static_cast<size_t>(n.outputs[i])].dtype = DType::kF32;
    }
  return d;
}

RnnDims rnn_shape(const Program& p, const Node& n) {
  const DimExprs& x = dims_of(p, n.inputs[0]);
  const ops::RnnAttrs ra = ops::rnn_attrs(n).value_or(ops::RnnAttrs{});
  RnnDims d;
  d.dirs = ra.directions();
  d.input = x[2].value();
  d.hidden = ra.hidden_size.value_or(dims_of(p, n.inputs[2])[2].value());
  d.batch_major = ra.layout == 1;
  d.seq = d.batch_major ? x[1] : x[0];
  d.batch = d.batch_major ? x[0] : x[1];
  const int64_t D = d.dirs, H = d.hidden;
  d.state = d.batch_major ? DimExprs{d.batch, D, H} : DimExprs{D, d.batch, H};
  d.y = d.batch_major ? DimExprs{d.batch, d.seq, D, H} : DimExprs{d.seq, D, d.batch, H};
  return d;
}

RnnStrides rnn_strides(const RnnDims& d) {
  const std::string DH = c_int(d.dirs * d.hidden), H = c_int(d.hidden);
  RnnStrides s;
  s.xt = d.batch_major ? "1" : "B";
  s.xb = d.batch_major ? "S" : "1";
  s.yt = d.batch_major ? DH : "B * " + DH;
  s.yb = d.batch_major ? "S * " + DH : H;
  s.yd = d.batch_major ? H : "B * " + H;
  s.sb = d.batch_major ? DH : H;
  s.sd = d.batch_major ? H : "B * " + H;
  return s;
}

void emit_rnn_prologue(Emitter& e, const char* op, const RnnDims& d,
                       const std::vector<std::pair<ValueId, const char*>>& states) {
  e.line("const int64_t S = " + e.dim(d.seq) + ", B = " + e.dim(d.batch) + ";");
  // States whose dims only the run binds (accept_state): checked here.
  for (auto [v, what] : states) {
    if (v < 0 || e.dims(v) == d.state) continue;
    const DimExprs& got = e.dims(v);
    std::string cond, fmt, args;
    for (size_t a = 0; a < d.state.size(); ++a) {
      if (!(got[a] == d.state[a]))
        cond += (cond.empty() ? "" : " || ") + e.dim(got[a]) + " != " + e.dim(d.state[a]);
      fmt += std::string(a ? "," : "") + "%lld";
      args += ", (long long)" + e.dim(got[a]);
    }
    for (size_t a = 0; a < d.state.size(); ++a) args += ", (long long)" + e.dim(d.state[a]);
    e.open("if (" + cond + ")");
    e.line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"" + std::string(op) + " " + what +
           " has dims [" + fmt + "], expected [" + fmt + "]\"" + args + ");");
    e.line("return;");
    e.close();
  }
}

}  // namespace hone::aot
