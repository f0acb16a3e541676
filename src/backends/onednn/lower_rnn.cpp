// ONNX LSTM, GRU and RNN as oneDNN's recurrent primitives (lstm_forward,
// gru_forward / lbr_gru_forward, vanilla_rnn_forward).
//
// What differs between the two conventions, and where it is handled:
// - gate order: ONNX LSTM is [i o f c], oneDNN's is [i f c o]; GRU [z r h] and
//   oneDNN's [u r o] agree. Weights are permuted into oneDNN's plain ldigo
//   layout here, then packed into the layout the primitive asks for.
// - bias: ONNX keeps Wb and Rb apart; oneDNN adds one bias per gate, so the
//   two are summed, except for the GRU with linear_before_reset, whose Rh
//   bias sits inside r * (...) and gets oneDNN's extra fourth bias gate.
// - peepholes: ONNX P is [i o f], oneDNN's [i f o].
// - directions: bidirectional runs as bidirectional_concat, whose output
//   [T, N, 2H] is reordered to ONNX's Y [T, 2, N, H].
// - sequence_lens: oneDNN runs whole sequences only, so a constant
//   sequence_lens equal to the sequence length is accepted; anything else
//   leaves the block to the reference for that shape.
// support.cpp refuses what oneDNN cannot compute at all (custom
// activations, clip, input_forget, layout 1, non-constant weights).
#include <array>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "backends/onednn/plan.h"
#include "backends/onednn/timing.h"
#include "core/log.h"
#include "ops/attrs.h"

namespace hone::onednn {
namespace {

using dnnl::memory;

/// The recurrent problem of one node for one set of input shapes.
struct Rnn {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  int64_t onnx_gates = 1;    // gates in W/R/B as ONNX stores them
  std::vector<int> gate_of;  // oneDNN gate g reads ONNX gate gate_of[g]
  dnnl::rnn_direction direction = dnnl::rnn_direction::unidirectional_left2right;
};

/// W or R [D, G*H, K] (ONNX) as oneDNN's plain ldigo {1, D, K, G, H}.
Tensor to_ldigo(const Tensor& w, const Rnn& r, int64_t k) {
  const int64_t G = static_cast<int64_t>(r.gate_of.size()), H = r.hidden;
  Tensor out = Tensor::zeros(DType::kF32, {1, r.dirs, k, G, H});
  const float* src = w.data<float>();
  float* dst = out.data<float>();
  for (int64_t d = 0; d < r.dirs; ++d)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t from = r.gate_of[static_cast<size_t>(g)];
      for (int64_t o = 0; o < H; ++o) {
        const float* row = src + (d * r.onnx_gates * H + from * H + o) * k;
        for (int64_t i = 0; i < k; ++i) dst[((d * k + i) * G + g) * H + o] = row[i];
      }
    }
  return out;
}

/// ONNX B [D, 2*G*H] (Wb then Rb) as oneDNN's {1, D, G', H}; with
/// `lbr_gru`, G' = 4 and the candidate gate keeps Wb and Rb apart.
Tensor to_bias(const Tensor* b, const Rnn& r, bool lbr_gru) {
  const int64_t G = static_cast<int64_t>(r.gate_of.size()), H = r.hidden;
  const int64_t out_gates = lbr_gru ? 4 : G;
  Tensor out = Tensor::zeros(DType::kF32, {1, r.dirs, out_gates, H});
  if (b == nullptr) return out;
  const float* src = b->data<float>();
  float* dst = out.data<float>();
  const int64_t gh = r.onnx_gates * H;
  for (int64_t d = 0; d < r.dirs; ++d) {
    const float* wb = src + d * 2 * gh;
    const float* rb = wb + gh;
    for (int64_t g = 0; g < G; ++g) {
      const int64_t from = r.gate_of[static_cast<size_t>(g)];
      const bool split = lbr_gru && g == 2;
      for (int64_t o = 0; o < H; ++o)
        dst[(d * out_gates + g) * H + o] = wb[from * H + o] + (split ? 0.0f : rb[from * H + o]);
    }
    if (lbr_gru)
      for (int64_t o = 0; o < H; ++o) dst[(d * out_gates + 3) * H + o] = rb[2 * H + o];
  }
  return out;
}

/// ONNX P [D, 3H] ([i o f]) as oneDNN's {1, D, 3, H} ([i f o]).
Tensor to_peephole(const Tensor& p, const Rnn& r) {
  static constexpr std::array<int, 3> kFrom = {0, 2, 1};
  const int64_t H = r.hidden;
  Tensor out = Tensor::zeros(DType::kF32, {1, r.dirs, 3, H});
  for (int64_t d = 0; d < r.dirs; ++d)
    for (int64_t g = 0; g < 3; ++g)
      for (int64_t o = 0; o < H; ++o)
        out.data<float>()[(d * 3 + g) * H + o] =
            p.data<float>()[d * 3 * H + kFrom[static_cast<size_t>(g)] * H + o];
  return out;
}

bool present(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0;
}

ValueId output_or_none(const Node& n, size_t i) {
  return i < n.outputs.size() ? n.outputs[i] : kNoValue;
}

/// A [D, N, H] state (initial_h/c) in the layout the primitive wants.
BufferRef state_in(PlanBuilder& b, ValueId v, const Rnn& r, const md_t& want) {
  BufferRef plain = b.plain(v);
  return b.reorder_to(BufferRef{plain.buffer, plain_md({1, r.dirs, r.batch, r.hidden})}, want);
}

/// Binds a [1, D, N, H] result to the ONNX state output `v` ([D, N, H]).
void state_out(PlanBuilder& b, ValueId v, const Rnn& r, const BufferRef& ref) {
  if (v < 0) return;
  const dims_t dims{r.dirs, r.batch, r.hidden};
  BufferRef plain = b.reorder_to(ref, plain_md({1, r.dirs, r.batch, r.hidden}));
  b.set(v, PValue{dims, {plain.buffer, plain_md(dims)}});
}

/// Every buffer `pd` reads or writes, as time_primitive takes them.
std::vector<std::pair<int, md_t>> rnn_args(const dnnl::rnn_primitive_desc_base& pd) {
  std::vector<std::pair<int, md_t>> args;
  const std::pair<int, md_t> all[] = {{DNNL_ARG_SRC_LAYER, pd.src_layer_desc()},
                                      {DNNL_ARG_SRC_ITER, pd.src_iter_desc()},
                                      {DNNL_ARG_SRC_ITER_C, pd.src_iter_c_desc()},
                                      {DNNL_ARG_WEIGHTS_LAYER, pd.weights_layer_desc()},
                                      {DNNL_ARG_WEIGHTS_ITER, pd.weights_iter_desc()},
                                      {DNNL_ARG_WEIGHTS_PEEPHOLE, pd.weights_peephole_desc()},
                                      {DNNL_ARG_BIAS, pd.bias_desc()},
                                      {DNNL_ARG_DST_LAYER, pd.dst_layer_desc()},
                                      {DNNL_ARG_DST_ITER, pd.dst_iter_desc()},
                                      {DNNL_ARG_DST_ITER_C, pd.dst_iter_c_desc()},
                                      {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}};
  for (const auto& a : all)
    if (a.second.get_size() > 0) args.push_back(a);
  return args;
}

Result<Rnn> read_rnn(PlanBuilder& b, const Node& n) {
  Rnn r;
  const std::string& op = n.op_type;
  r.onnx_gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  r.gate_of = op == "LSTM"  ? std::vector<int>{0, 2, 3, 1}
              : op == "GRU" ? std::vector<int>{0, 1, 2}
                            : std::vector<int>{0};
  const dims_t x = b.value(n.inputs[0]).dims;
  const Tensor* w = b.constant(n.inputs[1]);
  const Tensor* rw = b.constant(n.inputs[2]);
  if (w == nullptr || rw == nullptr)
    return fail(ErrorCode::kUnsupported, op + ": W and R must be constants");
  if (x.size() != 3 || w->rank() != 3 || rw->rank() != 3)
    return fail(ErrorCode::kInvalidArgument, op + ": X " + shape_to_string(x) + ", W " +
                                                 shape_to_string(w->shape()) + " and R " +
                                                 shape_to_string(rw->shape()) + " must be rank 3");
  r.seq = x[0];
  r.batch = x[1];
  r.input = x[2];
  HONE_TRY(const ops::RnnAttrs ra, ops::rnn_attrs(n));
  r.dirs = ra.directions();
  if (ra.direction == ops::RnnDirection::kReverse)
    r.direction = dnnl::rnn_direction::unidirectional_right2left;
  if (ra.direction == ops::RnnDirection::kBidirectional)
    r.direction = dnnl::rnn_direction::bidirectional_concat;
  r.hidden = rw->dim(2);
  const int64_t gh = r.onnx_gates * r.hidden;
  if (w->shape() != dims_t{r.dirs, gh, r.input} || rw->shape() != dims_t{r.dirs, gh, r.hidden})
    return fail(ErrorCode::kInvalidArgument,
                op + ": W " + shape_to_string(w->shape()) + " and R " +
                    shape_to_string(rw->shape()) + " do not fit X " + shape_to_string(x) + ", " +
                    std::to_string(r.dirs) + " direction(s) and hidden size " +
                    std::to_string(r.hidden));
  if (ra.hidden_size.value_or(r.hidden) != r.hidden)
    return fail(ErrorCode::kInvalidArgument, op + ": hidden_size disagrees with R");
  if (present(n, 3)) {
    const Tensor* bias = b.constant(n.inputs[3]);
    if (bias == nullptr) return fail(ErrorCode::kUnsupported, op + ": B must be a constant");
    if (bias->shape() != dims_t{r.dirs, 2 * gh})
      return fail(ErrorCode::kInvalidArgument, op + ": B " + shape_to_string(bias->shape()) +
                                                   " should be " +
                                                   shape_to_string({r.dirs, 2 * gh}));
  }
  if (present(n, 4)) {
    const Tensor* lens = b.constant(n.inputs[4]);
    if (lens == nullptr || (lens->dtype() != DType::kI32 && lens->dtype() != DType::kI64))
      return fail(ErrorCode::kUnsupported,
                  op + ": sequence_lens must be a constant integer tensor");
    for (int64_t i = 0; i < lens->numel(); ++i) {
      const int64_t len =
          lens->dtype() == DType::kI32 ? lens->data<int32_t>()[i] : lens->data<int64_t>()[i];
      if (len != r.seq)
        return fail(ErrorCode::kUnsupported,
                    op + ": sequence_lens[" + std::to_string(i) + "] = " + std::to_string(len) +
                        " differs from the sequence length " + std::to_string(r.seq) +
                        "; oneDNN runs whole sequences only");
    }
  }
  const dims_t state{r.dirs, r.batch, r.hidden};
  for (size_t i : {size_t{5}, size_t{6}})
    if (present(n, i) && (i == 5 || op == "LSTM") && b.value(n.inputs[i]).dims != state)
      return fail(ErrorCode::kInvalidArgument, op + ": " + (i == 5 ? "initial_h " : "initial_c ") +
                                                   shape_to_string(b.value(n.inputs[i]).dims) +
                                                   " should be " + shape_to_string(state));
  return r;
}

}  // namespace

Result<void> lower_rnn(PlanBuilder& b, const Node& n) {
  HONE_TRY(Rnn r, read_rnn(b, n));
  const std::string& op = n.op_type;
  const int64_t G = static_cast<int64_t>(r.gate_of.size()), H = r.hidden, D = r.dirs;
  const bool lstm = op == "LSTM", gru = op == "GRU";
  HONE_TRY(const ops::RnnAttrs ra, ops::rnn_attrs(n));
  const bool lbr = gru && ra.linear_before_reset;
  const bool peephole = lstm && present(n, 7);
  if (peephole) {
    const Tensor* p = b.constant(n.inputs[7]);
    if (p == nullptr || p->shape() != dims_t{D, 3 * H})
      return fail(ErrorCode::kUnsupported,
                  "LSTM: P must be a constant of shape " + shape_to_string({D, 3 * H}));
  }

  const md_t src_layer = plain_md({r.seq, r.batch, r.input});
  const md_t state = plain_md({1, D, r.batch, H});
  const md_t dst_layer = plain_md({r.seq, r.batch, D * H});
  const md_t wl_any = any_md({1, D, r.input, G, H}), wi_any = any_md({1, D, H, G, H});
  const md_t bias_md = plain_md({1, D, lbr ? 4 : G, H});
  const md_t peep_md = peephole ? plain_md({1, D, 3, H}) : md_t();
  const bool has_h0 = present(n, 5), has_c0 = lstm && present(n, 6);
  // oneDNN takes initial states as a pair: both given, or neither (zeros).
  const md_t h0_md = has_h0 || has_c0 ? state : md_t();
  const md_t c0_md = lstm && (has_h0 || has_c0) ? state : md_t();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);

  // One primitive for the given weight layouts.
  const auto make = [&](const md_t& wl, const md_t& wi) {
    dnnl::primitive prim;
    dnnl::rnn_primitive_desc_base pd;
    if (lstm) {
      dnnl::lstm_forward::primitive_desc p(
          dnnl::lstm_forward::desc(kInfer, r.direction, src_layer, h0_md, c0_md, wl, wi, peep_md,
                                   bias_md, dst_layer, state, state),
          attr, cpu_engine());
      prim = dnnl::lstm_forward(p);
      pd = p;
    } else if (lbr) {
      dnnl::lbr_gru_forward::primitive_desc p(
          dnnl::lbr_gru_forward::desc(kInfer, r.direction, src_layer, h0_md, wl, wi, bias_md,
                                      dst_layer, state),
          attr, cpu_engine());
      prim = dnnl::lbr_gru_forward(p);
      pd = p;
    } else if (gru) {
      dnnl::gru_forward::primitive_desc p(
          dnnl::gru_forward::desc(kInfer, r.direction, src_layer, h0_md, wl, wi, bias_md, dst_layer,
                                  state),
          attr, cpu_engine());
      prim = dnnl::gru_forward(p);
      pd = p;
    } else {
      // support.cpp admits Tanh, Relu or Sigmoid, the same in every direction.
      const std::vector<std::string>& acts = ra.activations;
      std::string act = acts.empty() ? "tanh" : acts[0];
      for (char& c : act) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const dnnl::algorithm alg = act == "relu"      ? dnnl::algorithm::eltwise_relu
                                  : act == "sigmoid" ? dnnl::algorithm::eltwise_logistic
                                                     : dnnl::algorithm::eltwise_tanh;
      dnnl::vanilla_rnn_forward::primitive_desc p(
          dnnl::vanilla_rnn_forward::desc(kInfer, alg, r.direction, src_layer, h0_md, wl, wi,
                                          bias_md, dst_layer, state),
          attr, cpu_engine());
      prim = dnnl::vanilla_rnn_forward(p);
      pd = p;
    }
    return std::pair{prim, pd};
  };
  auto [prim, pd] = make(wl_any, wi_any);
  // oneDNN 2.6 runs an RNN on weights in its own layout ("any") with its
  // brgemm kernels, which multiply each step's input by the layer weights
  // apart (a matrix-vector product per step at batch 1), and on plain ldigo
  // weights with its gemm kernels, which multiply every step's input at once.
  // The second wins at batch 1 (lstm_tagger b1_s128's two layers, 1 thread:
  // 0.42 vs 0.64 ms and 0.49 vs 1.12 ms); at batch 32 they tie. So when
  // oneDNN offers both, both are timed and the faster kept.
  // The choice is the backend's timed_choices "rnn-layout" entry when it
  // holds one that can run here.
  bool has_plain = false;
  try {
    auto [alt, alt_pd] = make(plain_md(wl_any.dims()), plain_md(wi_any.dims()));
    has_plain = true;
    if (std::string(alt_pd.impl_info_str()) != pd.impl_info_str()) {
      const std::string pick = b.choose(n, "rnn-layout", {"any", "ldigo"}, [&] {
        const double t_any = time_primitive(prim, rnn_args(pd));
        const double t_plain = time_primitive(alt, rnn_args(alt_pd));
        HONE_LOG_DEBUG("onednn: {} '{}': {} on its weight layout {:.3f} ms, {} on ldigo {:.3f} ms",
                       n.op_type, n.name, pd.impl_info_str(), t_any, alt_pd.impl_info_str(),
                       t_plain);
        return std::vector<double>{t_any, t_plain};
      });
      if (pick == "ldigo") {
        prim = alt;
        pd = alt_pd;
      }
    }
  } catch (const dnnl::error&) {
    // No primitive on plain weights: keep oneDNN's pick.
  }
  // A recorded ldigo this machine has no primitive for is warned about.
  if (!has_plain) (void)b.choose(n, "rnn-layout", {"any"}, {});

  std::vector<std::pair<int, BufferRef>> args;
  args.push_back({DNNL_ARG_SRC_LAYER, b.ensure(n.inputs[0], pd.src_layer_desc())});
  const Tensor* w = b.constant(n.inputs[1]);
  const Tensor* rw = b.constant(n.inputs[2]);
  const Tensor wl_plain = to_ldigo(*w, r, r.input), wi_plain = to_ldigo(*rw, r, H);
  args.push_back({DNNL_ARG_WEIGHTS_LAYER,
                  b.pack(wl_plain, plain_md(wl_plain.shape()), pd.weights_layer_desc())});
  args.push_back({DNNL_ARG_WEIGHTS_ITER,
                  b.pack(wi_plain, plain_md(wi_plain.shape()), pd.weights_iter_desc())});
  args.push_back(
      {DNNL_ARG_BIAS,
       {b.new_constant(to_bias(present(n, 3) ? b.constant(n.inputs[3]) : nullptr, r, lbr)),
        bias_md}});
  if (peephole)
    args.push_back({DNNL_ARG_WEIGHTS_PEEPHOLE,
                    {b.new_constant(to_peephole(*b.constant(n.inputs[7]), r)), peep_md}});
  if (has_h0 || has_c0) {
    // The missing one of the pair is zeros, as ONNX says.
    auto zeros = [&] {
      return BufferRef{b.new_constant(Tensor::zeros(DType::kF32, state.dims())), state};
    };
    args.push_back(
        {DNNL_ARG_SRC_ITER, has_h0 ? state_in(b, n.inputs[5], r, pd.src_iter_desc()) : zeros()});
    if (lstm)
      args.push_back({DNNL_ARG_SRC_ITER_C,
                      has_c0 ? state_in(b, n.inputs[6], r, pd.src_iter_c_desc()) : zeros()});
  }
  const BufferRef y{b.new_temp(pd.dst_layer_desc()), pd.dst_layer_desc()};
  const BufferRef yh{b.new_temp(pd.dst_iter_desc()), pd.dst_iter_desc()};
  args.push_back({DNNL_ARG_DST_LAYER, y});
  args.push_back({DNNL_ARG_DST_ITER, yh});
  BufferRef yc;
  if (lstm) {
    yc = BufferRef{b.new_temp(pd.dst_iter_c_desc()), pd.dst_iter_c_desc()};
    args.push_back({DNNL_ARG_DST_ITER_C, yc});
  }
  std::string kind = lstm ? "lstm" : gru ? (lbr ? "lbr_gru" : "gru") : "rnn";
  b.add_step(kind, prim, pd, std::move(args));

  if (const ValueId yv = output_or_none(n, 0); yv >= 0) {
    // dst_layer [T, N, D*H] holds directions side by side; ONNX Y is [T, D, N, H].
    const dims_t ydims{r.seq, D, r.batch, H};
    const BufferRef plain = b.reorder_to(y, dst_layer);
    if (D == 1) {
      b.set(yv, PValue{ydims, {plain.buffer, plain_md(ydims)}});
    } else {
      const md_t view(ydims, memory::data_type::f32, {r.batch * D * H, H, D * H, 1});
      const BufferRef out = b.reorder_to(BufferRef{plain.buffer, view}, plain_md(ydims));
      b.set(yv, PValue{ydims, out});
    }
  }
  state_out(b, output_or_none(n, 1), r, yh);
  if (lstm) state_out(b, output_or_none(n, 2), r, yc);
  return {};
}

}  // namespace hone::onednn
