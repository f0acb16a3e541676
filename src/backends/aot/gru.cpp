// GRU for the aot backend, through what it shares with LSTM (rnn.h): per
// direction, x_t · W^T for every step by one SGEMM up front, then per step
// h · R^T by an SGEMM and the gate math in one loop over batch rows and
// hidden units (with linear_before_reset = 0, the reset gate scales h before
// a second SGEMM for the candidate). Gates z, r, h as ONNX orders them;
// activations the defaults, Sigmoid and Tanh.
#include "backends/aot/rnn.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

std::string gru_sigmoid(const std::string& x) {
  return "(1.0f / (1.0f + expf(-(" + x + "))))";
}

}  // namespace

std::string why_not_gru(const Graph& g, const Node& n) {
  if (std::string why = why_not_rnn(g, n, kGruKind); !why.empty()) return why;
  if (ops::rnn_attrs(n)->clip) return "clip (aot's GRU does not clip its gates)";
  return {};
}

Result<void> infer_gru(Program& p, NodeId id) {
  const Node& n = p.node(id);
  if (std::string why = why_not_gru(*p.graph, n); !why.empty())
    return fail(ErrorCode::kUnsupported, "GRU: " + why);
  HONE_CHECK_OK(rnn_dims(p, n, kGruKind));
  std::vector<ValueId> ops{n.inputs[0], n.inputs[1], n.inputs[2]};
  for (size_t i : {3, 5})
    if (has_input(n, i)) ops.push_back(n.inputs[i]);
  p.operands[id] = std::move(ops);
  return {};
}

DimExpr gru_scratch_floats(const Program& p, NodeId id) {
  const RnnDims d = rnn_shape(p, p.node(id));
  // Projections [seq * batch][3H], h · R^T [batch][3H], h [2][batch][H], r h [batch][H].
  return d.seq * d.batch * (3 * d.hidden) + d.batch * (6 * d.hidden);
}

void emit_gru(Emitter& e, const Node& n, NodeId id, const Step& st) {
  const RnnDims d = rnn_shape(e.program(), n);
  const ops::RnnAttrs ra = ops::rnn_attrs(n).value_or(ops::RnnAttrs{});
  const bool lbr = ra.linear_before_reset;
  const auto& ops = e.program().operands.at(id);
  const ValueId b = has_input(n, 3) ? ops[3] : kNoValue;
  const ValueId h0 = has_input(n, 5) ? ops[has_input(n, 3) ? 4 : 3] : kNoValue;
  const int64_t H = d.hidden, I = d.input, D = d.dirs;
  const std::string h = c_int(H), h2 = c_int(2 * H), h3 = c_int(3 * H);
  auto out = [&](size_t k) {
    return k < n.outputs.size() && n.outputs[k] >= 0 ? e.ptr(n.outputs[k]) : std::string("NULL");
  };
  e.line("/* GRU hidden " + h + ", input " + c_int(I) + ", " + c_int(D) + " direction(s), " +
         (d.batch_major ? "layout 1" : "layout 0") + ", linear_before_reset " + (lbr ? "1" : "0") +
         " */");
  emit_rnn_prologue(e, "GRU", d, {{h0, "initial_h"}});
  e.line("const float* X = " + e.ptr(ops[0]) + ";");
  e.line("const float* W = " + e.ptr(ops[1]) + ";");
  e.line("const float* R = " + e.ptr(ops[2]) + ";");
  e.line("const float* Bw = " + (b >= 0 ? e.ptr(b) : std::string("NULL")) + ";");
  e.line("const float* H0 = " + (h0 >= 0 ? e.ptr(h0) : std::string("NULL")) + ";");
  e.line("float* Y = " + out(0) + ";");
  e.line("float* Yh = " + out(1) + ";");
  e.line("float* proj = (float*)(c->A + " + c_int(st.scratch_offset) + ");");
  e.line("float* gh = proj + S * B * " + h3 + ";");
  e.line("float* hb = gh + B * " + h3 + ";");
  e.line("float* rh = hb + 2 * B * " + h + ";");
  e.line("(void)rh, (void)Y, (void)Yh;");
  const RnnStrides rs = rnn_strides(d);
  e.open("for (int64_t d = 0; d < " + c_int(D) + "; ++d)");
  e.line("const int rev = " +
         std::string(ra.direction == ops::RnnDirection::kReverse ? "1" : "d == 1") + ";");
  e.line("const float* Rd = R + d * " + c_int(3 * H * H) + ";");
  e.line("const float* wb = Bw ? Bw + d * " + c_int(6 * H) + " : NULL;");
  e.line("const float* rb = Bw ? wb + " + h3 + " : NULL;");
  e.line("SGEMM(0, 1, S * B, " + h3 + ", " + c_int(I) + ", 1.0f, X, " + c_int(I) + ", W + d * " +
         c_int(3 * H * I) + ", " + c_int(I) + ", 0.0f, proj, " + h3 + ");");
  e.open("for (int64_t b = 0; b < B; ++b)");
  e.line("if (H0) memcpy(hb + b * " + h + ", H0 + d * " + rs.sd + " + b * " + rs.sb +
         ", sizeof(float) * " + h + ");");
  e.line("else memset(hb + b * " + h + ", 0, sizeof(float) * " + h + ");");
  e.close();
  e.open("for (int64_t s = 0; s < S; ++s)");
  e.line("const int64_t t = rev ? S - 1 - s : s;");
  e.line("const float* hp = hb + (s & 1) * B * " + h + ";");
  e.line("float* hn = hb + ((s + 1) & 1) * B * " + h + ";");
  e.line("SGEMM(0, 1, B, " + (lbr ? h3 : h2) + ", " + h + ", 1.0f, hp, " + h + ", Rd, " + h +
         ", 0.0f, gh, " + h3 + ");");
  // One element of the step: the gates of hidden unit u of batch row b.
  auto element = [&](bool candidate) {
    e.line("const int64_t b = i / " + h + ", u = i % " + h + ";");
    e.line("const float* pr = proj + (t * " + rs.xt + " + b * " + rs.xb + ") * " + h3 + ";");
    e.line("float* g = gh + b * " + h3 + ";");
    if (!candidate) {
      e.line("const float z = " + gru_sigmoid("pr[u] + g[u] + (wb ? wb[u] + rb[u] : 0.0f)") + ";");
      e.line("const float r = " +
             gru_sigmoid("pr[" + h + " + u] + g[" + h + " + u] + (wb ? wb[" + h + " + u] + rb[" +
                         h + " + u] : 0.0f)") +
             ";");
      if (!lbr) {  // the candidate waits for (r h) · Rh^T
        e.line("rh[i] = r * hp[i];");
        e.line("g[u] = z;");
        return;
      }
      e.line("const float hh = tanhf(pr[" + h2 + " + u] + (wb ? wb[" + h2 +
             " + u] : 0.0f) + r * (g[" + h2 + " + u] + (rb ? rb[" + h2 + " + u] : 0.0f)));");
    } else {
      e.line("const float z = g[u];");
      e.line("const float hh = tanhf(pr[" + h2 + " + u] + g[" + h2 + " + u] + (wb ? wb[" + h2 +
             " + u] + rb[" + h2 + " + u] : 0.0f));");
    }
    e.line("const float hv = (1.0f - z) * hh + z * hp[i];");
    e.line("hn[i] = hv;");
    e.line("if (Y) Y[t * " + rs.yt + " + d * " + rs.yd + " + b * " + rs.yb + " + u] = hv;");
  };
  auto loop = [&](bool candidate) {
    e.begin_parallel("parallel for", Emitter::worth_threads("B * " + c_int(H * 64)));
    e.open("for (int64_t i = 0; i < B * " + h + "; ++i)");
    element(candidate);
    e.close();
    e.end_parallel();
  };
  loop(false);
  if (!lbr) {
    e.line("SGEMM(0, 1, B, " + h + ", " + h + ", 1.0f, rh, " + h + ", Rd + " + c_int(2 * H * H) +
           ", " + h + ", 0.0f, gh + " + h2 + ", " + h3 + ");");
    loop(true);
  }
  e.close();
  e.line("const float* hl = hb + (S & 1) * B * " + h + ";");
  e.line("if (Yh) for (int64_t b = 0; b < B; ++b) memcpy(Yh + d * " + rs.sd + " + b * " + rs.sb +
         ", hl + b * " + h + ", sizeof(float) * " + h + ");");
  e.close();
}

}  // namespace hone::aot
