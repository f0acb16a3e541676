// Pad with a constant (Program::pads): the output filled with the value, then
// the input's kept part copied into its window, one contiguous run per row.
// Reflect, edge and wrap: each output element read from the input position
// the axis' table (ops::pad_source_offsets, made when lowering) names.
#include "backends/aot/emitter.h"

namespace hone::aot {

void Emitter::emit_pad(NodeId id, const std::string& y) {
  const Program::PadFill& f = p_.pads.at(id);
  if (f.mode != "constant") return emit_pad_by_index(id, y);
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const DimExprs& o = dims(p_.node(id).outputs[0]);
  const DimExprs& w = f.window;
  line("const float* X = " + ptr(xv) + " + " + dim(f.src_base) + ";");
  line("float* Y = " + y + ";");
  const std::string total = dim(product(o));
  begin_parallel("parallel for", worth_threads(total));
  line("for (int64_t i = 0; i < " + total + "; ++i) Y[i] = " + float_literal(f.value) + ";");
  end_parallel();
  if (o.empty()) {
    line("Y[0] = X[0];");
    return;
  }
  const size_t r = o.size();
  std::string xo = "0", yo = dim(f.dst_base);
  for (size_t i = 0; i + 1 < r; ++i) {
    std::string t = "(o / " + dim(product(w, i + 1, r - 1)) + ")";
    if (i > 0) t = "(" + t + " % " + dim(w[i]) + ")";
    xo += " + " + t + " * " + dim(product(x, i + 1, r));
    yo += " + " + t + " * " + dim(product(o, i + 1, r));
  }
  const std::string run = dim(w[r - 1]);
  begin_parallel("parallel for", worth_threads(dim(product(w))));
  open("for (int64_t o = 0; o < " + dim(product(w, 0, r - 1)) + "; ++o)");
  line("if (" + run + " > 0) memcpy(Y + " + yo + ", X + " + xo + ", sizeof(float) * " + run + ");");
  close();
  end_parallel();
}

void Emitter::emit_pad_by_index(NodeId id, const std::string& y) {
  const Program::PadFill& f = p_.pads.at(id);
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const DimExprs& o = dims(p_.node(id).outputs[0]);
  const size_t r = o.size();
  const std::string tag = std::to_string(id);
  for (size_t k = 0; k < r; ++k) {
    if (f.index[k].empty()) continue;
    std::string list;
    for (int64_t v : f.index[k]) list += (list.empty() ? "" : ", ") + std::to_string(v);
    line("static const int64_t pad" + tag + "_" + std::to_string(k) + "[] = {" + list + "};");
  }
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  const std::string total = dim(product(o));
  begin_parallel("parallel for", worth_threads(total));
  open("for (int64_t i = 0; i < " + total + "; ++i)");
  line("int64_t rest = i, from = 0, at = 0;");
  line("(void)rest;");
  line("(void)at;");
  for (size_t k = r; k-- > 0;) {
    line("at = rest % " + dim(o[k]) + ";");
    if (k > 0) line("rest /= " + dim(o[k]) + ";");
    const std::string pos =
        f.index[k].empty() ? "at" : "pad" + tag + "_" + std::to_string(k) + "[at]";
    line("from += " + pos + " * " + dim(product(x, k + 1, r)) + ";");
  }
  line("Y[i] = X[from];");
  close();
  end_parallel();
}

}  // namespace hone::aot
