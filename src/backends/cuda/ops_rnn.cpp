// The cuda backend's LSTM and GRU as PyTorch exports them (layout 0, the
// default activations, no clip, peepholes or sequence_lens; GRU with
// linear_before_reset): per direction, one SGEMM of every step's input by
// W, then per step an SGEMM of the state by R and one kernel applying the
// gates (hone_lstm_step, hone_gru_step in kernels/tensor_ops.cu), which
// writes the step's slice of Y and updates the state in place.
#include <algorithm>

#include "backends/common/node_query.h"
#include "backends/cuda/op.h"
#include "ops/attrs.h"

namespace hone::cuda {
namespace {

/// Input `i` of `n` is given.
bool given(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0;
}

/// Where each unit input sits: the unit's inputs are the node's given ones
/// among X, W, R, B, initial_h, initial_c (sequence_lens and P are refused).
struct RnnLayout {
  int x = 0, w = 1, r = 2, b = -1, h0 = -1, c0 = -1;
};

RnnLayout rnn_layout(const Node& n, bool lstm) {
  RnnLayout l;
  int k = 3;
  if (given(n, 3)) l.b = k++;
  if (given(n, 5)) l.h0 = k++;
  if (lstm && given(n, 6)) l.c0 = k++;
  return l;
}

Result<OpPlan> plan_rnn(const Node& n, const std::vector<dims_t>& in, const RnnLayout& l,
                        const std::vector<int>& outs) {
  const bool lstm = n.op_type == "LSTM";
  HONE_TRY(const ops::RnnAttrs a, ops::rnn_attrs(n));
  const dims_t &x = in[l.x], &w = in[l.w], &r = in[l.r];
  const int64_t gates = lstm ? 4 : 3, dirs = a.directions();
  if (x.size() != 3 || w.size() != 3 || r.size() != 3)
    return fail(ErrorCode::kInvalidArgument, n.op_type + " X, W and R must have rank 3");
  const int64_t steps = x[0], batch = x[1], isz = x[2];
  const int64_t hidden = r[2];
  if (w[0] != dirs || r[0] != dirs || w[1] != gates * hidden || r[1] != gates * hidden ||
      w[2] != isz || (a.hidden_size && *a.hidden_size != hidden))
    return fail(ErrorCode::kInvalidArgument, n.op_type + " weights " + shape_to_string(w) + ", " +
                                                 shape_to_string(r) + " do not fit X " +
                                                 shape_to_string(x));
  auto expect = [&](int at, const dims_t& want, const char* what) -> Result<void> {
    if (at >= 0 && in[static_cast<size_t>(at)] != want)
      return fail(ErrorCode::kInvalidArgument, n.op_type + " " + what + " is " +
                                                   shape_to_string(in[static_cast<size_t>(at)]) +
                                                   ", expected " + shape_to_string(want));
    return {};
  };
  HONE_CHECK_OK(expect(l.b, {dirs, 2 * gates * hidden}, "B"));
  HONE_CHECK_OK(expect(l.h0, {dirs, batch, hidden}, "initial_h"));
  HONE_CHECK_OK(expect(l.c0, {dirs, batch, hidden}, "initial_c"));
  if (!fits_int({steps * batch, gates * hidden, isz, hidden}))
    return fail(ErrorCode::kUnsupported, n.op_type + " too large for cuBLAS's 32-bit sizes");
  const dims_t state = {dirs, batch, hidden};
  OpPlan p;
  for (int o : outs) p.outputs.push_back(o == 0 ? dims_t{steps, dirs, batch, hidden} : state);
  p.kernel = std::string(lstm ? "lstm" : "gru") + ".f32.cuda.sgemm+steps";
  // Workspace: every step's X·Wᵀ, one step's H·Rᵀ, and the state where no
  // output holds it.
  const size_t gh = static_cast<size_t>(batch * gates * hidden),
               bh = static_cast<size_t>(batch * hidden);
  const size_t xw_bytes = round256(static_cast<size_t>(steps) * gh * sizeof(float));
  const size_t hr_bytes = round256(gh * sizeof(float)), st_bytes = round256(bh * sizeof(float));
  p.workspace_bytes = xw_bytes + hr_bytes + 2 * st_bytes;
  const int y_at = static_cast<int>(std::find(outs.begin(), outs.end(), 0) - outs.begin());
  const int yh_at = static_cast<int>(std::find(outs.begin(), outs.end(), 1) - outs.begin());
  const int yc_at = static_cast<int>(std::find(outs.begin(), outs.end(), 2) - outs.begin());
  const int n_outs = static_cast<int>(outs.size());
  const bool reverse = a.direction == ops::RnnDirection::kReverse;
  p.run = [=](const ExecCtx& c, const Bind& bd) -> Result<void> {
    const CUdeviceptr xw = bd.workspace, hr = xw + xw_bytes, hs = hr + hr_bytes, cs = hs + st_bytes;
    const CUdeviceptr y = y_at < n_outs ? bd.out[static_cast<size_t>(y_at)] : 0;
    HONE_TRY(CUfunction step, c.fixed.function(lstm ? "hone_lstm_step" : "hone_gru_step"));
    HONE_TRY(CUfunction fill, c.fixed.function("hone_fill"));
    const auto f4 = [](int64_t v) { return static_cast<CUdeviceptr>(v) * sizeof(float); };
    for (int64_t d = 0; d < dirs; ++d) {
      // The state of direction d: in Y_h / Y_c where they are outputs, else the workspace.
      const CUdeviceptr h =
          yh_at < n_outs ? bd.out[static_cast<size_t>(yh_at)] + f4(d * batch * hidden) : hs;
      const CUdeviceptr cell =
          lstm && yc_at < n_outs ? bd.out[static_cast<size_t>(yc_at)] + f4(d * batch * hidden) : cs;
      HONE_CHECK_OK(gemm_rm(
          c, false, true, steps * batch, gates * hidden, isz, 1.0f, bd.in[static_cast<size_t>(l.x)],
          0, bd.in[static_cast<size_t>(l.w)] + f4(d * gates * hidden * isz), 0, 0.0f, xw, 0, 1, 0));
      const dims_t flat = {batch * hidden}, one = {1};
      long long count = batch * hidden;
      float zero = 0.0f;
      if (l.h0 >= 0) {
        HONE_CHECK_OK(strided_copy(c, bd.in[static_cast<size_t>(l.h0)] + f4(d * batch * hidden), h,
                                   flat, one, one));
      } else {
        CUdeviceptr t = h;
        HONE_CHECK_OK(launch_1d(c.d, fill, c.stream, count, {&t, &zero, &count}));
      }
      if (lstm) {
        if (l.c0 >= 0) {
          HONE_CHECK_OK(strided_copy(c, bd.in[static_cast<size_t>(l.c0)] + f4(d * batch * hidden),
                                     cell, flat, one, one));
        } else {
          CUdeviceptr t = cell;
          HONE_CHECK_OK(launch_1d(c.d, fill, c.stream, count, {&t, &zero, &count}));
        }
      }
      const bool backward = reverse || d == 1;
      CUdeviceptr bias =
          l.b >= 0 ? bd.in[static_cast<size_t>(l.b)] + f4(d * 2 * gates * hidden) : 0;
      for (int64_t k = 0; k < steps; ++k) {
        const int64_t t = backward ? steps - 1 - k : k;
        HONE_CHECK_OK(gemm_rm(c, false, true, batch, gates * hidden, hidden, 1.0f, h, 0,
                              bd.in[static_cast<size_t>(l.r)] + f4(d * gates * hidden * hidden), 0,
                              0.0f, hr, 0, 1, 0));
        CUdeviceptr xt = xw + f4(t * batch * gates * hidden), hrp = hr, hp = h, cp = cell;
        CUdeviceptr yt = y ? y + f4((t * dirs + d) * batch * hidden) : 0;
        long long bb = batch, hh = hidden;
        if (lstm)
          HONE_CHECK_OK(
              launch_1d(c.d, step, c.stream, count, {&xt, &hrp, &bias, &hp, &cp, &yt, &bb, &hh}));
        else
          HONE_CHECK_OK(
              launch_1d(c.d, step, c.stream, count, {&xt, &hrp, &bias, &hp, &yt, &bb, &hh}));
      }
    }
    return {};
  };
  return p;
}

}  // namespace

std::string rnn_why_not(const Graph& g, const Node& n) {
  const bool lstm = n.op_type == "LSTM";
  Result<ops::RnnAttrs> a = ops::rnn_attrs(n);
  if (!a) return a.error().message();
  if (a->layout != 0) return "layout 1 (cuda runs the sequence-first layout)";
  if (a->clip) return "clip (cuda runs unclipped cells)";
  if (lstm && a->input_forget) return "input_forget";
  if (!lstm && n.op_type != "GRU") return "no cuda kernel for " + n.op_type;
  if (!lstm && !a->linear_before_reset)
    return "linear_before_reset 0 (cuda runs PyTorch's GRU, linear_before_reset 1)";
  const std::vector<std::string> def = lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                            : std::vector<std::string>{"Sigmoid", "Tanh"};
  if (!a->activations.empty()) {
    std::vector<std::string> want;
    for (int64_t d = 0; d < a->directions(); ++d) want.insert(want.end(), def.begin(), def.end());
    if (a->activations != want && a->activations != def)
      return "activations other than the defaults";
  }
  if (n.inputs.size() < 3 || !given(n, 0) || !given(n, 1) || !given(n, 2))
    return "X, W or R is missing";
  if (given(n, 4)) return "sequence_lens (cuda runs every sequence to its end)";
  if (lstm && given(n, 7)) return "peepholes (P)";
  for (ValueId v : n.inputs)
    if (v >= 0 && known_dtype(g, v) != DType::kF32 && known_dtype(g, v) != DType::kUndefined)
      return "an input is " + std::string(dtype_name(known_dtype(g, v))) + "; cuda runs f32";
  if (n.outputs.empty()) return "no output";
  return {};
}

Result<Unit> create_rnn(const BlockInfo&, const Node& n) {
  const bool lstm = n.op_type == "LSTM";
  Unit u;
  u.label = n.describe();
  for (size_t i : {0, 1, 2, 3, 5, 6}) {
    if (i == 6 && !lstm) break;
    if (given(n, i)) u.inputs.push_back(n.inputs[i]);
  }
  std::vector<int> outs;
  for (size_t o = 0; o < n.outputs.size() && o < (lstm ? 3u : 2u); ++o)
    if (n.outputs[o] >= 0) {
      u.outputs.push_back(n.outputs[o]);
      outs.push_back(static_cast<int>(o));
    }
  const RnnLayout l = rnn_layout(n, lstm);
  const Node node = n;
  u.op = std::make_unique<FnOp>([node, l, outs](const std::vector<dims_t>& in, const PlanEnv&) {
    return plan_rnn(node, in, l, outs);
  });
  return u;
}

}  // namespace hone::cuda
