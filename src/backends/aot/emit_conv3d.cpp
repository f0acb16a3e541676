// 3-D windows. Convolution (a video model's (1,k,k) and (k,1,1) factorized
// convs): im2col of the [C/group * kd*kh*kw, od*oh*ow] columns, then one SGEMM
// per batch row and group, as 2-D convs run (emit_ops.cpp), with the depth
// axis added. Pooling (MViT's MaxPool3d on the skip path): a direct loop per
// output element over the taps in bounds, as emit_pool's 2-D one. Spatial dims
// are static here (window_of refuses 3-D run-time ones).
#include <tuple>

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

void Emitter::emit_pool3d(const Node& n, const Window2d& w, bool include_pad,
                          const std::string& planes) {
  const bool is_max = n.op_type == "MaxPool";
  const int64_t in_vol = w.id * w.ih * w.iw, out_vol = w.od * w.oh * w.ow;
  begin_parallel("parallel for",
                 worth_threads(planes + " * " + c_int(out_vol * w.kd * w.kh * w.kw)));
  open("for (int64_t pl = 0; pl < " + planes + "; ++pl)");
  line("const float* xp = X + pl * " + c_int(in_vol) + ";");
  line("float* yp = Y + pl * " + c_int(out_vol) + ";");
  open("for (int64_t o = 0; o < " + c_int(out_vol) + "; ++o)");
  line("const int64_t d0 = o / " + c_int(w.oh * w.ow) + " * " + c_int(w.sd) + " - " + c_int(w.pf) +
       ";");
  line("const int64_t h0 = o / " + c_int(w.ow) + " % " + c_int(w.oh) + " * " + c_int(w.sh) + " - " +
       c_int(w.pt) + ";");
  line("const int64_t w0 = o % " + c_int(w.ow) + " * " + c_int(w.sw) + " - " + c_int(w.pl) + ";");
  line("float acc = 0.0f;");
  line("int64_t cnt = 0;");
  open("for (int64_t kd = 0; kd < " + c_int(w.kd) + "; ++kd)");
  line("const int64_t id = d0 + kd * " + c_int(w.dd) + ";");
  line("if (id < 0 || id >= " + c_int(w.id) + ") continue;");
  open("for (int64_t kh = 0; kh < " + c_int(w.kh) + "; ++kh)");
  line("const int64_t ih = h0 + kh * " + c_int(w.dh) + ";");
  line("if (ih < 0 || ih >= " + c_int(w.ih) + ") continue;");
  open("for (int64_t kw = 0; kw < " + c_int(w.kw) + "; ++kw)");
  line("const int64_t iw = w0 + kw * " + c_int(w.dw) + ";");
  line("if (iw < 0 || iw >= " + c_int(w.iw) + ") continue;");
  line("const float v = xp[(id * " + c_int(w.ih) + " + ih) * " + c_int(w.iw) + " + iw];");
  line(is_max ? "if (cnt == 0 || v > acc) acc = v;" : "acc += v;");
  line("++cnt;");
  close();
  close();
  close();
  if (is_max) {
    line("yp[o] = acc;");
  } else if (!include_pad) {
    line("yp[o] = acc / (float)cnt;");
  } else {
    // The taps inside the padded input, per axis (ceil_mode's last window
    // may reach past the end padding).
    line("int64_t pd = 0, ph = 0, pw = 0;");
    for (const auto& [v, at, k, dil, pad, in, pad_end] :
         {std::tuple{"pd", "d0", w.kd, w.dd, w.pf, w.id, w.pk},
          std::tuple{"ph", "h0", w.kh, w.dh, w.pt, w.ih, w.pb},
          std::tuple{"pw", "w0", w.kw, w.dw, w.pl, w.iw, w.pr}})
      line(std::string("for (int64_t k = 0; k < ") + c_int(k) + "; ++k) " + v + " += " + at +
           " + k * " + c_int(dil) + " >= -" + c_int(pad) + " && " + at + " + k * " + c_int(dil) +
           " < " + c_int(in + pad_end) + ";");
    line("yp[o] = acc / (float)(pd * ph * pw);");
  }
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
