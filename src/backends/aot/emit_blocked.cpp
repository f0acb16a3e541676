// Pools over blocked (nChw16c) values: loops over [N][C/16][H][W] whose
// innermost 16 lanes are one vector. See nhwc.h for when a program is blocked.
#include "backends/aot/emitter.h"
#include "backends/aot/nhwc.h"
#include "backends/aot/shape_rules.h"

namespace hone::aot {
namespace {

std::string s(int64_t v) {
  return std::to_string(v);
}

}  // namespace

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
    line("#pragma omp parallel for num_threads(c->nt)" + omp_if("nb * " + s(cb * 16 * ih * iw)));
    open("for (int64_t r = 0; r < nb * " + s(cb) + "; ++r)");
    line("const float* xb = X + r * " + s(ih * iw * 16) + ";");
    line("float acc[16];");
    line(lanes + "acc[l] = " + (is_max ? "xb[l];" : "0.0f;"));
    open("for (int64_t i = 0; i < " + s(ih * iw) + "; ++i)");
    line("const float* xp = xb + i * 16;");
    line(lanes + (is_max ? "acc[l] = xp[l] > acc[l] ? xp[l] : acc[l];" : "acc[l] += xp[l];"));
    close();
    line(lanes + "Y[r * 16 + l] = " +
         (is_max ? std::string("acc[l];") : "acc[l] / (float)" + s(ih * iw) + ";"));
    close();
    return;
  }
  const Window2d w = *window_of(n, x, n.attr_ints("kernel_shape"), n.attr_int("ceil_mode", 0) != 0);
  const bool include_pad = n.attr_int("count_include_pad", 0) != 0;
  line("#pragma omp parallel for num_threads(c->nt)" +
       omp_if("nb * " + s(cb * 16 * w.oh * w.ow * w.kh * w.kw)));
  // r walks (image, channel block, output row); each block's planes are contiguous.
  open("for (int64_t r = 0; r < nb * " + s(cb * w.oh) + "; ++r)");
  line("const int64_t plane = r / " + s(w.oh) + ", oh = r % " + s(w.oh) + ";");
  line("const float* xb = X + plane * " + s(ih * iw * 16) + ";");
  line("const int64_t h0 = oh * " + s(w.sh) + " - " + s(w.pt) + ";");
  open("for (int64_t ow = 0; ow < " + s(w.ow) + "; ++ow)");
  line("const int64_t w0 = ow * " + s(w.sw) + " - " + s(w.pl) + ";");
  line("float* yp = Y + (r * " + s(w.ow) + " + ow) * 16;");
  line("float acc[16];");
  line(lanes + "acc[l] = " + (is_max ? "(-INFINITY);" : "0.0f;"));
  line("int64_t cnt = 0, padded_h = 0, padded_w = 0;");
  open("for (int64_t kh = 0; kh < " + s(w.kh) + "; ++kh)");
  line("const int64_t ih = h0 + kh * " + s(w.dh) + ";");
  line("padded_h += ih >= -" + s(w.pt) + " && ih < " + s(w.ih + w.pb) + ";");
  line("if (ih < 0 || ih >= " + s(ih) + ") continue;");
  open("for (int64_t kw = 0; kw < " + s(w.kw) + "; ++kw)");
  line("const int64_t iw = w0 + kw * " + s(w.dw) + ";");
  line("if (iw < 0 || iw >= " + s(iw) + ") continue;");
  line("const float* xp = xb + (ih * " + s(iw) + " + iw) * 16;");
  line(lanes + (is_max ? "acc[l] = xp[l] > acc[l] ? xp[l] : acc[l];" : "acc[l] += xp[l];"));
  line("++cnt;");
  close();
  close();
  if (is_max) {
    // A window wholly in the padding reads nothing: 0, as the NCHW loop gives.
    line("if (cnt == 0) " + lanes + "acc[l] = 0.0f;");
    line(lanes + "yp[l] = acc[l];");
  } else {
    if (include_pad) {
      open("for (int64_t kw = 0; kw < " + s(w.kw) + "; ++kw)");
      line("const int64_t iw = w0 + kw * " + s(w.dw) + ";");
      line("padded_w += iw >= -" + s(w.pl) + " && iw < " + s(w.iw + w.pr) + ";");
      close();
    }
    line("const float den = (float)" +
         (include_pad ? std::string("(padded_h * padded_w)") : std::string("cnt")) + ";");
    line(lanes + "yp[l] = acc[l] / den;");
  }
  close();
  close();
}

}  // namespace hone::aot
