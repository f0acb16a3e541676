// Windows over a dim known only at run time (an audio model's time axis):
// their output extent, (in + pads - window) / stride + 1, holds only where the
// input covers the window, which the generated code checks before the loops.
#include <tuple>

#include "backends/aot/emitter.h"

namespace hone::aot {

void Emitter::window_check(const Node& n, const Window2d& w) {
  if (!w.dynamic) return;
  for (const auto& [in, window, pads] : {std::tuple{w.ih_e, (w.kh - 1) * w.dh + 1, w.pt + w.pb},
                                         std::tuple{w.iw_e, (w.kw - 1) * w.dw + 1, w.pl + w.pr}}) {
    const int64_t need = window - pads;
    if (in.is_const() || need <= 0) continue;  // a run-time dim may be 0 (empty)
    open("if (" + dim(in) + " < " + c_int(need) + ")");
    line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"" + n.op_type +
         ": a spatial dim of %lld is smaller than its window (" + c_int(need) +
         " with the padding)\", (long long)" + dim(in) + ");");
    line("return;");
    close();
  }
}

Emitter::WindowExtents Emitter::window_extents(const Window2d& w) {
  WindowExtents e;
  e.dynamic = w.dynamic;
  if (!w.dynamic) {
    e.ih = c_int(w.ih), e.iw = c_int(w.iw), e.oh = c_int(w.oh), e.ow = c_int(w.ow);
    e.in_plane = c_int(w.ih * w.iw), e.out_plane = c_int(w.oh * w.ow);
    e.out_plane_n = w.oh * w.ow, e.ow_n = w.ow;
    return e;
  }
  // Named once: the loops below declare locals (d, a row pointer) that would
  // shadow the dims array an expression reads.
  line("const int64_t IH = " + dim(w.ih_e) + ", IW = " + dim(w.iw_e) + ", OH = " + dim(w.oh_e) +
       ", OW = " + dim(w.ow_e) + ";");
  line("(void)IH, (void)OH;");
  e.ih = "IH", e.iw = "IW", e.oh = "OH", e.ow = "OW";
  e.in_plane = "(IH * IW)", e.out_plane = "(OH * OW)";
  return e;
}

std::string Emitter::WindowExtents::out_plane_times(int64_t k) const {
  return dynamic ? out_plane + " * " + c_int(k) : c_int(out_plane_n * k);
}

std::string Emitter::WindowExtents::ow_times(int64_t k) const {
  return dynamic ? ow + " * " + c_int(k) : c_int(ow_n * k);
}

}  // namespace hone::aot
