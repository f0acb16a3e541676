// 3-D convolution (a video model's (1,k,k) and (k,1,1) factorized convs):
// im2col of the [C/group * kd*kh*kw, od*oh*ow] columns, then one SGEMM per
// batch row and group, as 2-D convs run (emit_ops.cpp), with the depth axis
// added. Spatial dims are static here (window_of refuses 3-D run-time ones).
#include "backends/aot/emitter.h"
#include "ops/attrs.h"

namespace hone::aot {

void Emitter::emit_conv3d(const Node& n, NodeId id, const std::string& y, const Step& st) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const DimExprs& w = dims(ops[1]);
  const Window2d win = *window_of(n, x, {w[2].value(), w[3].value(), w[4].value()}, false);
  const int64_t g = ops::conv_group(n), m = w[0].value(), cg = w[1].value();
  const int64_t c = cg * g, mg = m / g, taps = win.kd * win.kh * win.kw, ck = cg * taps;
  const int64_t in_vol = win.id * win.ih * win.iw, out_vol = win.od * win.oh * win.ow;
  const bool pointwise = st.scratch_floats.is_const() && st.scratch_floats.value() == 0;
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* Wt = " + ptr(ops[1]) + ";");
  line("const float* B = " + (ops.size() > 2 ? ptr(ops[2]) : std::string("NULL")) + ";");
  line("float* Y = " + y + ";");
  if (!pointwise) line("float* col = (float*)(c->A + " + c_int(st.scratch_offset) + ");");
  open("for (int64_t b = 0; b < " + dim(x[0]) + "; ++b)");
  open("for (int64_t g = 0; g < " + c_int(g) + "; ++g)");
  line("const float* xg = X + (b * " + c_int(c) + " + g * " + c_int(cg) + ") * " + c_int(in_vol) +
       ";");
  line("float* yg = Y + (b * " + c_int(m) + " + g * " + c_int(mg) + ") * " + c_int(out_vol) + ";");
  if (!pointwise) {
    line("/* im2col: [" + c_int(ck) + " x " + c_int(out_vol) + "] */");
    begin_parallel("parallel for", worth_threads(c_int(ck * out_vol)));
    open("for (int64_t r = 0; r < " + c_int(ck) + "; ++r)");
    line("const int64_t ci = r / " + c_int(taps) + ", kd = (r / " + c_int(win.kh * win.kw) +
         ") % " + c_int(win.kd) + ", kh = (r / " + c_int(win.kw) + ") % " + c_int(win.kh) +
         ", kw = r % " + c_int(win.kw) + ";");
    line("float* dst = col + r * " + c_int(out_vol) + ";");
    open("for (int64_t od = 0; od < " + c_int(win.od) + "; ++od)");
    line("const int64_t id = od * " + c_int(win.sd) + " - " + c_int(win.pf) + " + kd * " +
         c_int(win.dd) + ";");
    open("for (int64_t oh = 0; oh < " + c_int(win.oh) + "; ++oh)");
    line("const int64_t ih = oh * " + c_int(win.sh) + " - " + c_int(win.pt) + " + kh * " +
         c_int(win.dh) + ";");
    line("float* row = dst + (od * " + c_int(win.oh) + " + oh) * " + c_int(win.ow) + ";");
    open("if (id < 0 || id >= " + c_int(win.id) + " || ih < 0 || ih >= " + c_int(win.ih) + ")");
    line("memset(row, 0, " + c_int(win.ow * 4) + ");");
    line("continue;");
    close();
    line("const float* src = xg + ((ci * " + c_int(win.id) + " + id) * " + c_int(win.ih) +
         " + ih) * " + c_int(win.iw) + ";");
    open("for (int64_t ow = 0; ow < " + c_int(win.ow) + "; ++ow)");
    line("const int64_t iw = ow * " + c_int(win.sw) + " - " + c_int(win.pl) + " + kw * " +
         c_int(win.dw) + ";");
    line("row[ow] = (iw >= 0 && iw < " + c_int(win.iw) + ") ? src[iw] : 0.0f;");
    close();
    close();
    close();
    close();
    end_parallel();
  }
  open("if (B)");
  line("for (int64_t o = 0; o < " + c_int(mg) + "; ++o)");
  line("  for (int64_t i = 0; i < " + c_int(out_vol) + "; ++i) yg[o * " + c_int(out_vol) +
       " + i] = B[g * " + c_int(mg) + " + o];");
  close();
  line("SGEMM(0, 0, " + c_int(mg) + ", " + c_int(out_vol) + ", " + c_int(ck) + ", 1.0f, Wt + g * " +
       c_int(mg * ck) + ", " + c_int(ck) + ", " + (pointwise ? "xg" : "col") + ", " +
       c_int(out_vol) + ", B ? 1.0f : 0.0f, yg, " + c_int(out_vol) + ");");
  close();
  close();
}

}  // namespace hone::aot
