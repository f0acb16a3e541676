// LSTM for the aot backend, the code generation half. Per direction, the
// time loop runs hone_lstm_tile over tiles of 16 hidden units: it starts its
// accumulators from the summed biases, adds x_t · W^T (batches below 4: a
// projection made by SGEMMs up front) and h · R^T with W and
// R packed [tile][k][gate][16] (four vectors per k, the same for every batch
// row), and does the gate math in registers, writing c in place and h
// to the next step's buffer and to Y. With several threads the tiles of one
// step are split between them, with one barrier per step.
#include "backends/aot/lstm.h"
#include "backends/aot/rnn.h"

namespace hone::aot {
bool uses_lstm(const Program& p) {
  for (const Step& st : p.steps)
    if (st.anchor >= 0 && p.node(st.anchor).op_type == "LSTM") return true;
  return false;
}

void emit_lstm(Emitter& e, const Node& n, NodeId id, const std::string& y, const Step& st) {
  const LstmInfo L = lstm_info(e.program(), id);
  const int64_t H = L.hidden, Hp = L.hidden_pad, I = L.input, D = L.dirs, T = Hp / 16;
  auto out_ptr = [&](size_t k) {
    return k < n.outputs.size() && n.outputs[k] >= 0 ? e.ptr(n.outputs[k]) : std::string("NULL");
  };
  const std::string yh = out_ptr(1), yc = out_ptr(2);
  e.line("/* LSTM hidden " + c_int(H) + " (tiles of 16: " + c_int(T) + "), input " + c_int(I) +
         ", " + c_int(D) + " direction(s), " + (L.batch_major ? "layout 1" : "layout 0") +
         (L.packed ? ", weights packed at lowering" : ", weights packed here") + " */");
  const RnnDims dims = rnn_shape(e.program(), n);
  emit_rnn_prologue(e, "LSTM", dims, {{L.h0, "initial_h"}, {L.c0, "initial_c"}});
  e.line("const float* X = " + e.ptr(L.x) + ";");
  e.line("float* Y = " + y + ";");
  e.line("float* Yh = " + yh + ";");
  e.line("float* Yc = " + yc + ";");
  e.line("const float* H0 = " + (L.h0 >= 0 ? e.ptr(L.h0) : std::string("NULL")) + ";");
  e.line("const float* C0 = " + (L.c0 >= 0 ? e.ptr(L.c0) : std::string("NULL")) + ";");
  e.line("(void)Y, (void)Yh, (void)Yc, (void)H0, (void)C0;");
  e.line("float* ws = (float*)(c->A + " + c_int(st.scratch_offset) + ");");
  const int64_t pack = L.packed ? 0 : D * (4 * Hp * I + Hp * H * 4 + 4 * Hp + 3 * Hp);
  if (L.packed) {
    e.line("const float* Wp = " + e.ptr(L.w) + ";");
    e.line("const float* Rp = " + e.ptr(L.r) + ";");
    e.line("const float* Bp = " + e.ptr(L.b) + ";");
    e.line("const float* Pp = " + (L.p >= 0 ? e.ptr(L.p) : std::string("NULL")) + ";");
  } else {
    // The same layout lstm_lower.cpp packs constant weights into.
    e.line("float* Wp = ws;");
    e.line("float* Rp = Wp + " + c_int(D * 4 * Hp * I) + ";");
    e.line("float* Bp = Rp + " + c_int(D * Hp * H * 4) + ";");
    e.line("float* Pp = Bp + " + c_int(D * 4 * Hp) + ";");
    e.line("const float* Wr = " + e.ptr(L.w) + ";");
    e.line("const float* Rr = " + e.ptr(L.r) + ";");
    e.line("const float* Br = " + (L.b >= 0 ? e.ptr(L.b) : std::string("NULL")) + ";");
    e.line("const float* Pr = " + (L.p >= 0 ? e.ptr(L.p) : std::string("NULL")) + ";");
    e.line("memset(ws, 0, sizeof(float) * " + c_int(pack) + ");");
    e.open("for (int64_t d = 0; d < " + c_int(D) + "; ++d)");
    e.open("for (int64_t g = 0; g < 4; ++g)");
    e.open("for (int64_t u = 0; u < " + c_int(H) + "; ++u)");
    e.line("const int64_t row = d * " + c_int(4 * H) + " + g * " + c_int(H) + " + u;");
    e.line("for (int64_t k = 0; k < " + c_int(I) + "; ++k) Wp[(((d * " + c_int(T) +
           " + u / 16) * " + c_int(I) + " + k) * 4 + g) * 16 + u % 16] = Wr[row * " + c_int(I) +
           " + k];");
    e.line("for (int64_t k = 0; k < " + c_int(H) + "; ++k) Rp[(((d * " + c_int(T) +
           " + u / 16) * " + c_int(H) + " + k) * 4 + g) * 16 + u % 16] = Rr[row * " + c_int(H) +
           " + k];");
    e.line("if (Br) Bp[d * " + c_int(4 * Hp) + " + g * " + c_int(Hp) + " + u] = Br[d * " +
           c_int(8 * H) + " + g * " + c_int(H) + " + u] + Br[d * " + c_int(8 * H) + " + " +
           c_int(4 * H) + " + g * " + c_int(H) + " + u];");
    e.line("if (Pr && g < 3) Pp[d * " + c_int(3 * Hp) + " + g * " + c_int(Hp) + " + u] = Pr[d * " +
           c_int(3 * H) + " + g * " + c_int(H) + " + u];");
    e.close();
    e.close();
    e.close();
    if (L.p < 0) e.line("Pp = NULL;");
  }
  e.line("float* hb = ws + " + c_int(pack) + ";");
  e.line("float* cb = hb + 2 * B * " + c_int(Hp) + ";");
  // Row strides of X, Y and the states, by layout.
  const RnnStrides rs = rnn_strides(dims);
  const std::string &pt = rs.xt, &pb = rs.xb, &yt = rs.yt, &yb = rs.yb, &yd = rs.yd;
  const std::string &sb = rs.sb, &sd = rs.sd;
  e.open("for (int64_t d = 0; d < " + c_int(D) + "; ++d)");
  e.line("const int rev = " + std::string(L.reverse ? "1" : "d == 1") + ";");
  e.line("const float* Rd = Rp + d * " + c_int(Hp * H * 4) + ";");
  e.line("const float* Bd = Bp + d * " + c_int(4 * Hp) + ";");
  e.line("const float* Pd = Pp ? Pp + d * " + c_int(3 * Hp) + " : NULL;");
  e.line("(void)rev, (void)Pd;");
  e.line("const float* Wd = Wp + d * " + c_int(Hp * I * 4) + ";");
  e.line("const int usep = B < 4;");
  e.line("float* proj = cb + B * " + c_int(Hp) + ";");
  e.line("if (usep)");
  e.line("  for (int64_t j = 0; j < " + c_int(T) + "; ++j)");
  e.line("    SGEMM(0, 0, S * B, 64, " + c_int(I) + ", 1.0f, X, " + c_int(I) + ", Wd + j * " +
         c_int(I * 64) + ", 64, 0.0f, proj + j * 64, " + c_int(4 * Hp) + ");");
  e.line("memset(hb, 0, sizeof(float) * 3 * B * " + c_int(Hp) + ");");
  e.open("for (int64_t b = 0; b < B; ++b)");
  e.line("if (H0) memcpy(hb + b * " + c_int(Hp) + ", H0 + d * " + sd + " + b * " + sb +
         ", sizeof(float) * " + c_int(H) + ");");
  e.line("if (C0) memcpy(cb + b * " + c_int(Hp) + ", C0 + d * " + sd + " + b * " + sb +
         ", sizeof(float) * " + c_int(H) + ");");
  e.close();
  const std::string peep = L.p >= 0 ? "Pd + j * 16" : "NULL";
  const std::string clip = float_literal(L.clip);
  const std::string yarg = y == "NULL"
                               ? std::string("NULL")
                               : "Y + t * " + yt + " + d * " + yd + " + b0 * " + yb + " + j * 16";
  e.line("#define HONE_LSTM_TILE(MB, KS) hone_lstm_tile(MB, KS, " + c_int(H) + ", rt, hp + b0 * " +
         c_int(Hp) + ", " + c_int(Hp) + ", hn + b0 * " + c_int(Hp) + " + j * 16, cb + b0 * " +
         c_int(Hp) + " + j * 16, usep ? 0 : " + c_int(I) + ", wt, X + (t * " + pt + " + b0 * " +
         pb + ") * " + c_int(I) + ", " + pb + " * " + c_int(I) +
         ", Bd + j * 16, usep ? proj + (t * " + pt + " + b0 * " + pb + ") * " + c_int(4 * Hp) +
         " + j * 64 : NULL, " + pb + " * " + c_int(4 * Hp) + ", " + c_int(Hp) + ", " + yarg + ", " +
         yb + ", nv, " + peep + ", " + clip + ", " + (L.input_forget ? "1" : "0") + ")");
  e.begin_parallel("parallel", "c->nt > 1");
  e.open("for (int64_t st = 0; st < S; ++st)");
  e.line("const int64_t t = rev ? S - 1 - st : st;");
  e.line("const float* hp = hb + (st & 1) * B * " + c_int(Hp) + ";");
  e.line("float* hn = hb + ((st + 1) & 1) * B * " + c_int(Hp) + ";");
  e.line("#pragma omp for schedule(static)");
  e.open("for (int64_t j = 0; j < " + c_int(T) + "; ++j)");
  e.line("const float* rt = Rd + j * " + c_int(H * 64) + ";");
  e.line("const float* wt = Wd + j * " + c_int(I * 64) + ";");
  e.line("const int nv = " + c_int(H) + " - j * 16 < 16 ? (int)(" + c_int(H) + " - j * 16) : 16;");
  e.line("int64_t b0 = 0;");
  e.line("for (; b0 + 4 <= B; b0 += 4) HONE_LSTM_TILE(4, 1);");
  e.line("switch (B - b0) {");
  e.line("  case 3: HONE_LSTM_TILE(3, 1); break;");
  e.line("  case 2: HONE_LSTM_TILE(2, 2); break;");
  e.line("  case 1: HONE_LSTM_TILE(1, 4); break;");
  e.line("  default: break;");
  e.line("}");
  e.close();
  e.close();
  e.end_parallel();
  e.line("#undef HONE_LSTM_TILE");
  e.line("const float* hl = hb + (S & 1) * B * " + c_int(Hp) + ";");
  e.open("for (int64_t b = 0; b < B; ++b)");
  e.line("if (Yh) memcpy(Yh + d * " + sd + " + b * " + sb + ", hl + b * " + c_int(Hp) +
         ", sizeof(float) * " + c_int(H) + ");");
  e.line("if (Yc) memcpy(Yc + d * " + sd + " + b * " + sb + ", cb + b * " + c_int(Hp) +
         ", sizeof(float) * " + c_int(H) + ");");
  e.close();
  e.close();
}

}  // namespace hone::aot
