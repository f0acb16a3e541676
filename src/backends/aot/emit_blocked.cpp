// Pools over blocked (nChw16c) values: loops over [N][C/16][H][W] whose
// innermost 16 lanes are one vector. See nhwc.h for when a program is blocked.
#include "backends/aot/emitter.h"
#include "backends/aot/nhwc.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"

namespace hone::aot {
// The taps of a pool window inside the image, as ranges [k0, k1) computed up
// front (and p: the taps over the padded image, for count_include_pad): GCC 12
// at -O3 with AVX-512 miscompiles a vectorized window sum whose tap loops
// skip out-of-image taps with `continue` (a standalone harness showed wrong
// sums at -O3 -mavx512f, right ones at -O2 or -fno-tree-loop-vectorize).
void Emitter::tap_range(const std::string& a, const std::string& o, int64_t stride, int64_t pad,
                        int64_t dil, int64_t k, int64_t in, int64_t pad_end) {
  line("const int64_t " + a + "0 = " + o + " * " + c_int(stride) + " - " + c_int(pad) + ";");
  line("const int64_t " + a + "k0 = " + a + "0 < 0 ? (-" + a + "0 + " + c_int(dil - 1) + ") / " +
       c_int(dil) + " : 0;");
  line("int64_t " + a + "k1 = (" + c_int(in) + " - " + a + "0 + " + c_int(dil - 1) + ") / " +
       c_int(dil) + ";");
  line(a + "k1 = " + a + "k1 > " + c_int(k) + " ? " + c_int(k) + " : " + a + "k1 < " + a + "k0 ? " +
       a + "k0 : " + a + "k1;");
  // Taps over the padded image: the window never starts before it.
  line("int64_t " + a + "p = (" + c_int(in + pad_end) + " - " + a + "0 + " + c_int(dil - 1) +
       ") / " + c_int(dil) + ";");
  line(a + "p = " + a + "p > " + c_int(k) + " ? " + c_int(k) + " : " + a + "p < 0 ? 0 : " + a +
       "p;");
}

void Emitter::emit_pool_blocked(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  // blocked_fits() admitted only C % 16 == 0 here.
  const int64_t cb = x[1].value() / 16, ih = x[2].value(), iw = x[3].value();
  const bool is_max = n.op_type.find("Max") != std::string::npos;
  const std::string lanes = "for (int64_t l = 0; l < 16; ++l) ";
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t nb = " + dim(x[0]) + ";");
  if (n.op_type.rfind("Global", 0) == 0) {
    // The result [N, C, 1, 1] is the same bytes in NCHW and nChw16c.
    begin_parallel("parallel for", worth_threads("nb * " + c_int(cb * 16 * ih * iw)));
    open("for (int64_t r = 0; r < nb * " + c_int(cb) + "; ++r)");
    line("const float* xb = X + r * " + c_int(ih * iw * 16) + ";");
    line("float acc[16];");
    line(lanes + "acc[l] = " + (is_max ? "xb[l];" : "0.0f;"));
    open("for (int64_t i = 0; i < " + c_int(ih * iw) + "; ++i)");
    line("const float* xp = xb + i * 16;");
    line(lanes + (is_max ? "acc[l] = xp[l] > acc[l] ? xp[l] : acc[l];" : "acc[l] += xp[l];"));
    close();
    line(lanes + "Y[r * 16 + l] = " +
         (is_max ? std::string("acc[l];") : "acc[l] / (float)" + c_int(ih * iw) + ";"));
    close();
    end_parallel();
    return;
  }
  const ops::PoolAttrs pa = ops::pool_attrs(n).value_or(ops::PoolAttrs{});
  const Window2d w = *window_of(n, x, pa.kernel_shape, pa.ceil_mode);
  const bool include_pad = pa.count_include_pad;
  begin_parallel("parallel for",
                 worth_threads("nb * " + c_int(cb * 16 * w.oh * w.ow * w.kh * w.kw)));
  // r walks (image, channel block, output row); each block's planes are contiguous.
  open("for (int64_t r = 0; r < nb * " + c_int(cb * w.oh) + "; ++r)");
  line("const int64_t plane = r / " + c_int(w.oh) + ", oh = r % " + c_int(w.oh) + ";");
  line("const float* xb = X + plane * " + c_int(ih * iw * 16) + ";");
  tap_range("h", "oh", w.sh, w.pt, w.dh, w.kh, ih, w.pb);
  open("for (int64_t ow = 0; ow < " + c_int(w.ow) + "; ++ow)");
  tap_range("w", "ow", w.sw, w.pl, w.dw, w.kw, iw, w.pr);
  line("float* yp = Y + (r * " + c_int(w.ow) + " + ow) * 16;");
  line("float acc[16];");
  line(lanes + "acc[l] = " + (is_max ? "(-INFINITY);" : "0.0f;"));
  open("for (int64_t kh = hk0; kh < hk1; ++kh)");
  line("const float* xr = xb + (h0 + kh * " + c_int(w.dh) + ") * " + c_int(iw * 16) + ";");
  open("for (int64_t kw = wk0; kw < wk1; ++kw)");
  line("const float* xp = xr + (w0 + kw * " + c_int(w.dw) + ") * 16;");
  line(lanes + (is_max ? "acc[l] = xp[l] > acc[l] ? xp[l] : acc[l];" : "acc[l] += xp[l];"));
  close();
  close();
  line("const int64_t cnt = (hk1 - hk0) * (wk1 - wk0);");
  if (is_max) {
    // A window wholly in the padding reads nothing: 0, as the NCHW loop gives.
    line(lanes + "yp[l] = cnt == 0 ? 0.0f : acc[l];");
  } else {
    line("const float den = (float)" + std::string(include_pad ? "(hp * wp)" : "cnt") + ";");
    line(lanes + "yp[l] = acc[l] / den;");
  }
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
