// LSTM for the aot backend, the lowering half: which LSTM nodes aot claims,
// their output dims, and the weights packed once into the blob (see lstm.h
// for the layout the generated kernel reads).
#include <algorithm>
#include <cctype>

#include "backends/aot/lstm.h"
#include "backends/aot/shape_rules.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

using node_query::is_const;
using node_query::val;

constexpr int64_t kLanes = 16;  // hidden units per tile: one 512-bit vector per gate

std::string lower_case(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

/// The attributes (why_not_lstm has checked them).
ops::RnnAttrs attrs_of(const Node& n) {
  return ops::rnn_attrs(n).value_or(ops::RnnAttrs{});
}

int64_t dirs_of(const Node& n) {
  return attrs_of(n).directions();
}

bool has(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0;
}

/// Every weight-like input (W, R, B, P) that is present is a constant f32 tensor.
bool weights_constant(const Graph& g, const Node& n) {
  for (size_t i : {1, 2, 3, 7})
    if (has(n, i) && !is_const(g, n, i)) return false;
  return true;
}

Result<const float*> const_data(const Program& p, ValueId v, int64_t count, const char* what) {
  const ValueInfo& i = p.values[static_cast<size_t>(v)];
  if (!i.constant || !i.f32 || i.constant->numel() != count)
    return fail(ErrorCode::kInvalidArgument, std::string("LSTM ") + what + " must hold " +
                                                 std::to_string(count) + " f32 values");
  return i.constant->data<float>();
}

/// An initial state whose dims differ from `want` only where one side is a
/// symbol: shape inference leaves a state computed in the graph (ConstantOfShape
/// of a target made from Shape) as symbols of its own, such as
/// [unk__3,unk__1,unk__2] for [2,batch,96]. The kernel reads it with the dims
/// it needs and emit_lstm checks them at run time; each such symbol's bound
/// rises to the bound of the dim it must equal, so the input check lets the
/// right dims through. Two different numbers are an error.
Result<void> accept_state(Program& p, const Node& n, size_t i, const DimExprs& want,
                          const char* what) {
  if (!has(n, i)) return {};
  const DimExprs got = dims_of(p, n.inputs[i]);
  auto mismatch = [&] {
    return fail(ErrorCode::kInvalidArgument, std::string("LSTM ") + what + " must have dims " +
                                                 to_string(want) + ", got " + to_string(got));
  };
  if (got.size() != want.size()) return mismatch();
  for (size_t a = 0; a < got.size(); ++a) {
    if (got[a] == want[a]) continue;
    if (got[a].is_const() && want[a].is_const()) return mismatch();
    for (size_t s = 0; s < p.symbols.size(); ++s)
      if (DimExpr::symbol(p.symbols[s]) == got[a])
        p.symbol_max[s] = std::max(p.symbol_max[s], p.at_bounds(want[a]));
  }
  return {};
}

}  // namespace

std::string why_not_lstm(const Graph& g, const Node& n) {
  if (n.inputs.size() < 3 || !has(n, 0) || !has(n, 1) || !has(n, 2)) return "X, W or R is missing";
  for (size_t i : {0, 1, 2, 3, 5, 6, 7}) {
    const Value* v = val(g, n, i);
    if (v == nullptr) continue;
    if (std::string why = f32_tensor_problem(*v, i); !why.empty()) return why;
  }
  if (has(n, 4)) return "sequence_lens (rows of different lengths) is not supported";
  for (size_t i = 1; i < 3; ++i) {
    const Value* v = val(g, n, i);
    if (!v->shape || v->shape->rank() != 3) return "W and R must have a known rank 3";
    for (size_t a = 0; a < 3; ++a)
      if (!(*v->shape)[a].is_static()) return "W and R must have static dims";
  }
  const auto ra = ops::rnn_attrs(n);
  if (!ra) return ra.error().message();
  const std::vector<std::string>& acts = ra->activations;
  if (!acts.empty()) {
    static const char* const kDefault[] = {"sigmoid", "tanh", "tanh"};
    if (acts.size() != 3 && acts.size() != static_cast<size_t>(3 * dirs_of(n)))
      return "activations lists " + std::to_string(acts.size()) + " names";
    for (size_t i = 0; i < acts.size(); ++i)
      if (lower_case(acts[i]) != kDefault[i % 3])
        return "activation '" + acts[i] + "' (aot runs Sigmoid, Tanh, Tanh only)";
  }
  for (size_t i = 0; i < n.outputs.size() && i < 3; ++i)
    if (n.outputs[i] >= 0) {
      const DType t = g.value(n.outputs[i]).dtype;
      if (t != DType::kF32 && t != DType::kUndefined) return "an output is not f32";
    }
  if (n.outputs.size() > 3) return "more than 3 outputs";
  return {};
}

LstmInfo lstm_info(const Program& p, NodeId id) {
  const Node& n = p.node(id);
  LstmInfo L;
  const auto& ops = p.operands.at(id);
  const DimExprs& w = dims_of(p, n.inputs[1]);
  const DimExprs& x = dims_of(p, n.inputs[0]);
  L.dirs = dirs_of(n);
  const ops::RnnAttrs ra = attrs_of(n);
  L.hidden = ra.hidden_size.value_or(dims_of(p, n.inputs[2])[2].value());
  L.hidden_pad = (L.hidden + kLanes - 1) / kLanes * kLanes;
  L.input = w[2].value();
  L.reverse = ra.direction == ops::RnnDirection::kReverse;
  L.batch_major = ra.layout == 1;
  L.seq = L.batch_major ? x[1] : x[0];
  L.batch = L.batch_major ? x[0] : x[1];
  L.clip = ra.clip.value_or(0.0f);
  L.input_forget = ra.input_forget;
  L.packed = weights_constant(*p.graph, n);
  size_t k = 0;
  L.x = ops[k++];
  L.w = ops[k++];
  L.r = ops[k++];
  if (L.packed || has(n, 3)) L.b = ops[k++];
  if (has(n, 7)) L.p = ops[k++];
  if (has(n, 5)) L.h0 = ops[k++];
  if (has(n, 6)) L.c0 = ops[k++];
  return L;
}

Result<void> infer_lstm(Program& p, NodeId id) {
  const Node& n = p.node(id);
  if (std::string why = why_not_lstm(*p.graph, n); !why.empty())
    return fail(ErrorCode::kUnsupported, "LSTM: " + why);
  for (size_t i : {0, 1, 2, 3, 5, 6, 7})
    if (has(n, i) && !p.values[static_cast<size_t>(n.inputs[i])].f32)
      return fail(ErrorCode::kUnsupported, "LSTM input " + std::to_string(i) + " is not f32");
  const DimExprs x = dims_of(p, n.inputs[0]);
  const DimExprs w = dims_of(p, n.inputs[1]);
  const DimExprs r = dims_of(p, n.inputs[2]);
  if (x.size() != 3 || !x[2].is_const())
    return fail(ErrorCode::kUnsupported,
                "LSTM X must be rank 3 with a static input size, got " + to_string(x));
  const int64_t dirs = dirs_of(n), I = x[2].value();
  const ops::RnnAttrs ra = attrs_of(n);
  const int64_t H = ra.hidden_size.value_or(r[2].value());
  const bool bm = ra.layout == 1;
  const DimExpr seq = bm ? x[1] : x[0], batch = bm ? x[0] : x[1];
  auto expect = [&](size_t i, const DimExprs& want, const char* what) -> Result<void> {
    if (!has(n, i)) return {};
    const DimExprs& got = dims_of(p, n.inputs[i]);
    if (!(got == want))
      return fail(ErrorCode::kInvalidArgument, std::string("LSTM ") + what + " must have dims " +
                                                   to_string(want) + ", got " + to_string(got));
    return {};
  };
  HONE_CHECK_OK(expect(1, {dirs, 4 * H, I}, "W"));
  HONE_CHECK_OK(expect(2, {dirs, 4 * H, H}, "R"));
  HONE_CHECK_OK(expect(3, {dirs, 8 * H}, "B"));
  const DimExprs state = bm ? DimExprs{batch, dirs, H} : DimExprs{dirs, batch, H};
  HONE_CHECK_OK(accept_state(p, n, 5, state, "initial_h"));
  HONE_CHECK_OK(accept_state(p, n, 6, state, "initial_c"));
  HONE_CHECK_OK(expect(7, {dirs, 3 * H}, "P"));

  std::vector<ValueId> ops{n.inputs[0]};
  const int64_t Hp = (H + kLanes - 1) / kLanes * kLanes, T = Hp / kLanes;
  const std::string base =
      p.values[static_cast<size_t>(n.outputs[0] >= 0 ? n.outputs[0] : n.inputs[0])].name;
  if (weights_constant(*p.graph, n)) {
    // W rows per gate padded to Hp (zero rows compute zero gates in the
    // padding lanes, which then stay zero); W and R tiled
    // [dir][tile][k][gate][16], so the kernel runs x · W^T and h · R^T alike.
    HONE_TRY(const float* W, const_data(p, n.inputs[1], dirs * 4 * H * I, "W"));
    HONE_TRY(const float* R, const_data(p, n.inputs[2], dirs * 4 * H * H, "R"));
    Tensor wp = Tensor::zeros(DType::kF32, {dirs, T, I, 4 * kLanes});
    Tensor rp = Tensor::zeros(DType::kF32, {dirs, T, H, 4 * kLanes});
    Tensor bp = Tensor::zeros(DType::kF32, {dirs, 4 * Hp});
    float* wd = wp.data<float>();
    float* rd = rp.data<float>();
    float* bd = bp.data<float>();
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t g = 0; g < 4; ++g)
        for (int64_t u = 0; u < H; ++u) {
          const int64_t row = d * 4 * H + g * H + u;
          for (int64_t k = 0; k < I; ++k)
            wd[(((d * T + u / kLanes) * I + k) * 4 + g) * kLanes + u % kLanes] = W[row * I + k];
          for (int64_t k = 0; k < H; ++k)
            rd[(((d * T + u / kLanes) * H + k) * 4 + g) * kLanes + u % kLanes] = R[row * H + k];
        }
    if (has(n, 3)) {
      HONE_TRY(const float* B, const_data(p, n.inputs[3], dirs * 8 * H, "B"));
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t g = 0; g < 4; ++g)
          for (int64_t u = 0; u < H; ++u)
            bd[d * 4 * Hp + g * Hp + u] =
                B[d * 8 * H + g * H + u] + B[d * 8 * H + 4 * H + g * H + u];
    }
    ops.push_back(add_synthetic(p, base + ":lstm.W", std::move(wp)));
    ops.push_back(add_synthetic(p, base + ":lstm.R", std::move(rp)));
    ops.push_back(add_synthetic(p, base + ":lstm.B", std::move(bp)));
    if (has(n, 7)) {
      HONE_TRY(const float* P, const_data(p, n.inputs[7], dirs * 3 * H, "P"));
      Tensor pp = Tensor::zeros(DType::kF32, {dirs, 3 * Hp});
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t q = 0; q < 3; ++q)
          std::copy_n(P + d * 3 * H + q * H, H, pp.data<float>() + d * 3 * Hp + q * Hp);
      ops.push_back(add_synthetic(p, base + ":lstm.P", std::move(pp)));
    }
  } else {
    for (size_t i : {1, 2, 3, 7})
      if (has(n, i)) ops.push_back(n.inputs[i]);
  }
  for (size_t i : {5, 6})
    if (has(n, i)) ops.push_back(n.inputs[i]);
  p.operands[id] = std::move(ops);

  const DimExprs y = bm ? DimExprs{batch, seq, dirs, H} : DimExprs{seq, dirs, batch, H};
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) {
      p.values[static_cast<size_t>(n.outputs[i])].dims = i == 0 ? y : state;
      p.values[static_cast<size_t>(n.outputs[i])].f32 = true;
    }
  return {};
}

DimExpr lstm_scratch_floats(const Program& p, NodeId id) {
  const LstmInfo L = lstm_info(p, id);
  const int64_t Hp = L.hidden_pad, H = L.hidden, I = L.input;
  // h double buffer [2][batch][Hp], c [batch][Hp], and for batches below 4
  // the projections [seq][batch][tile][gate][16].
  DimExpr n = L.batch * (3 * Hp) + L.seq * (3 * 4 * Hp);
  if (!L.packed) n = n + L.dirs * (4 * Hp * I + Hp * H * 4 + 4 * Hp + 3 * Hp);
  return n;
}

}  // namespace hone::aot
