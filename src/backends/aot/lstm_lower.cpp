// LSTM for the aot backend, the lowering half: which LSTM nodes aot claims,
// their output dims, and the weights packed once into the blob (see lstm.h
// for the layout the generated kernel reads).
#include <algorithm>

#include "backends/aot/lstm.h"
#include "backends/aot/rnn.h"
#include "backends/aot/shape_rules.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

using node_query::is_const;

constexpr int64_t kLanes = 16;  // hidden units per tile: one 512-bit vector per gate

/// The attributes (why_not_lstm has checked them).
ops::RnnAttrs attrs_of(const Node& n) {
  return ops::rnn_attrs(n).value_or(ops::RnnAttrs{});
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
  if (!i.constant || !i.is_f32() || i.constant->numel() != count)
    return fail(ErrorCode::kInvalidArgument, std::string("LSTM ") + what + " must hold " +
                                                 std::to_string(count) + " f32 values");
  return i.constant->data<float>();
}

}  // namespace

std::string why_not_lstm(const Graph& g, const Node& n) {
  return why_not_rnn(g, n, kLstmKind);
}

LstmInfo lstm_info(const Program& p, NodeId id) {
  const Node& n = p.node(id);
  LstmInfo L;
  const auto& ops = p.operands.at(id);
  const RnnDims d = rnn_shape(p, n);
  const ops::RnnAttrs ra = attrs_of(n);
  L.dirs = d.dirs;
  L.hidden = d.hidden;
  L.hidden_pad = (L.hidden + kLanes - 1) / kLanes * kLanes;
  L.input = d.input;
  L.reverse = ra.direction == ops::RnnDirection::kReverse;
  L.batch_major = d.batch_major;
  L.seq = d.seq;
  L.batch = d.batch;
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
  HONE_TRY(const RnnDims d, rnn_dims(p, n, kLstmKind));
  HONE_CHECK_OK(accept_state(p, n, 6, d, "initial_c"));
  const int64_t dirs = d.dirs, I = d.input, H = d.hidden;
  if (has(n, 7) && !(dims_of(p, n.inputs[7]) == DimExprs{dirs, 3 * H}))
    return fail(ErrorCode::kInvalidArgument, "LSTM P must have dims " +
                                                 to_string(DimExprs{dirs, 3 * H}) + ", got " +
                                                 to_string(dims_of(p, n.inputs[7])));

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
