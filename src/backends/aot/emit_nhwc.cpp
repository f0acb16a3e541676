// Channels-last steps: convs through oneDNN's convolution primitive (C API,
// one primitive per batch size seen, created on first use), pools as loops
// vectorized over channels. See nhwc.h for which steps run here.
#include <cmath>

#include "backends/aot/emitter.h"
#include "backends/aot/nhwc.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"

namespace hone::aot {
bool uses_dnnl_conv(const Program& p) {
  for (const Step& st : p.steps)
    if (st.nhwc && st.anchor >= 0 && p.node(st.anchor).op_type == "Conv") return true;
  return false;
}

void Emitter::emit_anchor_nhwc(const Step& st, NodeId id, const std::string& y) {
  const Node& n = p_.node(id);
  if (n.op_type == "Conv") return emit_conv_dnnl(n, id, y, st);
  if (p_.blocked) return emit_pool_blocked(n, id, y);
  return emit_pool_nhwc(n, id, y);
}

void Emitter::emit_conv_dnnl(const Node& n, NodeId id, const std::string& y, const Step& st) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const DimExprs& w = dims(ops[1]);
  const Window2d win = *window_of(n, x, {w[2].value(), w[3].value()}, false);
  const int64_t g = ops::conv_group(n), c = x[1].value(), m = w[0].value();
  const int slot = static_cast<int>(&st - p_.steps.data());
  std::vector<PostOp> post;
  if (st.post_ops) post = *conv_post_ops(p_, st);
  std::string desc = "static const dn_conv_desc k = {\"";
  for (char ch : n.name) desc += (ch == '"' || ch == '\\' || ch < 0x20) ? '_' : ch;
  desc += "\", " + c_int(c) + ", " + c_int(win.ih) + ", " + c_int(win.iw) + ", " + c_int(m) + ", " +
          c_int(win.kh) + ", " + c_int(win.kw) + ", " + c_int(win.oh) + ", " + c_int(win.ow) +
          ", " + c_int(win.sh) + ", " + c_int(win.sw) + ", " + c_int(win.dh) + ", " +
          c_int(win.dw) + ", " + c_int(win.pt) + ", " + c_int(win.pl) + ", " + c_int(win.pb) +
          ", " + c_int(win.pr) + ", " + c_int(g) + ", " + (ops.size() > 2 ? "1" : "0") + ", " +
          c_int(static_cast<int64_t>(post.size())) + ", {";
  for (const PostOp& po : post)
    desc += "{" + std::string(po.src1 != kNoValue ? "1" : "0") + ", " + po.alg + ", " +
            float_literal(po.alpha) + ", " + float_literal(po.beta) + "}, ";
  desc +=
      "}, " + std::string(st.nchw_src_blocked ? "1" : "0") + ", " + (p_.blocked ? "1" : "0") + "};";
  line(desc);
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* Wt = " + ptr(ops[1]) + ";");
  line("const float* B = " + (ops.size() > 2 ? ptr(ops[2]) : std::string("NULL")) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t nb = " + dim(x[0]) + ";");
  line(std::string("float* tmp = ") +
       (st.nchw_src_blocked && !p_.blocked ? "(float*)(c->A + " + c_int(st.scratch_offset) + ")"
                                           : "NULL") +
       ";");
  if (!st.nchw_src_blocked && !(st.scratch_floats.is_const() && st.scratch_floats.value() == 0)) {
    // An NCHW input (a graph input, or a producer kept NCHW): one channels-last copy.
    const int64_t hw = win.ih * win.iw;
    line("float* xc = (float*)(c->A + " + c_int(st.scratch_offset) + ");");
    begin_parallel("parallel for", worth_threads("nb * " + c_int(c * hw)));
    open("for (int64_t b = 0; b < nb; ++b)");
    line("const float* xs = X + b * " + c_int(c * hw) + ";");
    line("float* xd = xc + b * " + c_int(c * hw) + ";");
    if (p_.blocked) {  // into nChw16c: [C/16][H*W][16]
      line("for (int64_t cb = 0; cb < " + c_int(c / 16) + "; ++cb)");
      line("  for (int64_t i = 0; i < " + c_int(hw) + "; ++i)");
      line("    for (int64_t l = 0; l < 16; ++l) xd[(cb * " + c_int(hw) +
           " + i) * 16 + l] = xs[(cb * 16 + l) * " + c_int(hw) + " + i];");
    } else {
      line("for (int64_t i = 0; i < " + c_int(hw) + "; ++i)");
      line("  for (int64_t ch = 0; ch < " + c_int(c) + "; ++ch) xd[i * " + c_int(c) +
           " + ch] = xs[ch * " + c_int(hw) + " + i];");
    }
    close();
    end_parallel();
    line("X = xc;");
  }
  std::string srcs;
  for (const PostOp& po : post)
    if (po.src1 != kNoValue) srcs += ptr(po.src1) + ", ";
  line("const float* const post_src[] = {" + srcs + "NULL};");
  line("if (dn_conv_run(c, " + c_int(slot) +
       ", &k, nb, X, Wt, B, Y, tmp, post_src) != 0) { *c->status = last_status; return; }");
}

void Emitter::emit_pool_nhwc(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const int64_t c = x[1].value(), ih = x[2].value(), iw = x[3].value();
  const bool is_max = n.op_type.find("Max") != std::string::npos;
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t nb = " + dim(x[0]) + ";");
  if (n.op_type.rfind("Global", 0) == 0) {
    begin_parallel("parallel for", worth_threads("nb * " + c_int(c * ih * iw)));
    open("for (int64_t b = 0; b < nb; ++b)");
    line("const float* xb = X + b * " + c_int(c * ih * iw) + ";");
    line("float* yb = Y + b * " + c_int(c) + ";");
    line("float acc[" + c_int(c) + "];");
    line("for (int64_t ch = 0; ch < " + c_int(c) +
         "; ++ch) acc[ch] = " + (is_max ? "xb[ch]" : "0.0f") + ";");
    open("for (int64_t i = 0; i < " + c_int(ih * iw) + "; ++i)");
    line("const float* xp = xb + i * " + c_int(c) + ";");
    line(std::string("for (int64_t ch = 0; ch < ") + c_int(c) + "; ++ch) " +
         (is_max ? "acc[ch] = xp[ch] > acc[ch] ? xp[ch] : acc[ch];" : "acc[ch] += xp[ch];"));
    close();
    line("for (int64_t ch = 0; ch < " + c_int(c) + "; ++ch) yb[ch] = " +
         (is_max ? std::string("acc[ch];") : "acc[ch] / (float)" + c_int(ih * iw) + ";"));
    close();
    end_parallel();
    return;
  }
  const ops::PoolAttrs pa = ops::pool_attrs(n).value_or(ops::PoolAttrs{});
  const Window2d w = *window_of(n, x, pa.kernel_shape, pa.ceil_mode);
  const bool include_pad = pa.count_include_pad;
  begin_parallel("parallel for", worth_threads("nb * " + c_int(w.oh * w.ow * w.kh * w.kw * c)));
  open("for (int64_t r = 0; r < nb * " + c_int(w.oh) + "; ++r)");
  line("const int64_t b = r / " + c_int(w.oh) + ", oh = r % " + c_int(w.oh) + ";");
  tap_range("h", "oh", w.sh, w.pt, w.dh, w.kh, ih, w.pb);
  open("for (int64_t ow = 0; ow < " + c_int(w.ow) + "; ++ow)");
  tap_range("w", "ow", w.sw, w.pl, w.dw, w.kw, iw, w.pr);
  line("float* yp = Y + (r * " + c_int(w.ow) + " + ow) * " + c_int(c) + ";");
  line("for (int64_t ch = 0; ch < " + c_int(c) +
       "; ++ch) yp[ch] = " + (is_max ? "(-INFINITY);" : "0.0f;"));
  open("for (int64_t kh = hk0; kh < hk1; ++kh)");
  open("for (int64_t kw = wk0; kw < wk1; ++kw)");
  line("const float* xp = X + ((b * " + c_int(ih) + " + h0 + kh * " + c_int(w.dh) + ") * " +
       c_int(iw) + " + w0 + kw * " + c_int(w.dw) + ") * " + c_int(c) + ";");
  line(std::string("for (int64_t ch = 0; ch < ") + c_int(c) + "; ++ch) " +
       (is_max ? "yp[ch] = xp[ch] > yp[ch] ? xp[ch] : yp[ch];" : "yp[ch] += xp[ch];"));
  close();
  close();
  line("const int64_t cnt = (hk1 - hk0) * (wk1 - wk0);");
  if (is_max) {
    // A window wholly in the padding reads nothing: 0, as the NCHW loop gives.
    line("if (cnt == 0) for (int64_t ch = 0; ch < " + c_int(c) + "; ++ch) yp[ch] = 0.0f;");
  } else {
    line("const float den = (float)" + std::string(include_pad ? "(hp * wp)" : "cnt") + ";");
    line("for (int64_t ch = 0; ch < " + c_int(c) + "; ++ch) yp[ch] /= den;");
  }
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
