// Resize of the spatial axes: the taps of each axis (ops/resize.h, the
// reference's table) as static arrays of the step; each output element sums
// its row taps times its column taps (one of each for nearest, an exact copy).
#include <algorithm>

#include "backends/aot/emitter.h"

namespace hone::aot {
namespace {

/// "static const T name[] = {a, b, ...};"
template <class F>
std::string table(const std::string& type, const std::string& name, size_t count, F at) {
  std::string s = "static const " + type + " " + name + "[] = {";
  for (size_t i = 0; i < count; ++i) s += (i ? ", " : "") + at(i);
  return s + "};";
}

}  // namespace

void Emitter::emit_resize(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const DimExprs& o = dims(n.outputs[0]);
  const std::vector<ops::AxisTaps> taps = *resize_taps(p_, n, x, o);
  // 1-D: a height of 1 with one tap of weight 1.
  ops::AxisTaps rows;
  rows.taps = {{0, 1.0}};
  rows.begin = {0, 1};
  const ops::AxisTaps& th = taps.size() == 2 ? taps[0] : rows;
  const ops::AxisTaps& tw = taps.back();
  const int64_t ih = x.size() == 4 ? x[2].value() : 1, iw = x.back().value();
  const int64_t oh = o.size() == 4 ? o[2].value() : 1, ow = o.back().value();
  // One tap of weight 1 per output index on both axes (nearest): a gather.
  auto one_tap = [](const ops::AxisTaps& a) {
    return a.taps.size() + 1 == a.begin.size() &&
           std::all_of(a.taps.begin(), a.taps.end(),
                       [](const ops::ResizeTap& t) { return t.weight == 1.0; });
  };
  const bool nearest = one_tap(th) && one_tap(tw);
  for (const auto& [a, nm] : {std::pair{&th, "h"}, std::pair{&tw, "w"}}) {
    const std::string s(nm);
    if (!nearest)
      line(table("int32_t", s + "b", a->begin.size(),
                 [&](size_t i) { return std::to_string(a->begin[i]); }));
    line(table("int32_t", s + "i", a->taps.size(),
               [&](size_t i) { return std::to_string(a->taps[i].index); }));
    if (!nearest)
      line(table("float", s + "w", a->taps.size(),
                 [&](size_t i) { return float_literal(static_cast<float>(a->taps[i].weight)); }));
  }
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  const std::string planes = dim(x[0] * x[1]);
  begin_parallel("parallel for", worth_threads(planes + " * " + c_int(oh * ow * 4)));
  open("for (int64_t pl = 0; pl < " + planes + "; ++pl)");
  line("const float* xp = X + pl * " + c_int(ih * iw) + ";");
  line("float* yp = Y + pl * " + c_int(oh * ow) + ";");
  open("for (int64_t oy = 0; oy < " + c_int(oh) + "; ++oy)");
  if (nearest) {
    line("const float* xr = xp + (int64_t)hi[oy] * " + c_int(iw) + ";");
    line("for (int64_t ox = 0; ox < " + c_int(ow) + "; ++ox) yp[oy * " + c_int(ow) +
         " + ox] = xr[wi[ox]];");
  } else {
    open("for (int64_t ox = 0; ox < " + c_int(ow) + "; ++ox)");
    line("float acc = 0.0f;");
    line("for (int32_t a = hb[oy]; a < hb[oy + 1]; ++a)");
    line("  for (int32_t b = wb[ox]; b < wb[ox + 1]; ++b)");
    line("    acc += hw[a] * ww[b] * xp[(int64_t)hi[a] * " + c_int(iw) + " + wi[b]];");
    line("yp[oy * " + c_int(ow) + " + ox] = acc;");
    close();
  }
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
