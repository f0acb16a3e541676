// ConvTranspose for the aot backend (a UNet's or a detector's learned
// upsampling): per batch row and group, one SGEMM makes the columns
// W^T · X ([M/group * kh*kw, ih*iw]), then col2im adds each column into the
// output, which starts from the bias. Static spatial dims, explicit pads (no
// auto_pad, no output_shape); the output extent is ONNX's
// stride * (in - 1) + output_padding + dilation * (k - 1) + 1 - pads, as the
// reference computes it with them (eval/ops_nn_conv.cpp).
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

/// The geometry of a 1-D (height 1) or 2-D ConvTranspose.
struct CtGeom {
  int64_t c = 0, m = 0, g = 1, cg = 0, mg = 0;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t oh = 1, ow = 1;
};

Result<CtGeom> geometry(const Program& p, const Node& n) {
  const DimExprs& x = dims_of(p, n.inputs[0]);
  const DimExprs& w = dims_of(p, n.inputs[1]);
  if ((x.size() != 3 && x.size() != 4) || w.size() != x.size())
    return fail(unsupported("ConvTranspose input " + to_string(x) + " and weights " + to_string(w) +
                            ": aot runs 1-D and 2-D ones"));
  for (size_t d = 1; d < x.size(); ++d)
    if (!x[d].is_const())
      return fail(
          unsupported("ConvTranspose input " + to_string(x) + " must be static from axis 1"));
  if (!all_const(w)) return fail(unsupported("ConvTranspose weights must be static"));
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  if (ca.auto_pad != ops::AutoPad::kNotSet || !ca.output_shape.empty())
    return fail(unsupported("ConvTranspose with auto_pad or output_shape"));
  const size_t r = x.size() - 2;
  auto attr = [&](const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    return v.empty() ? dflt : v[i];
  };
  for (const auto* v : {&ca.strides, &ca.dilations, &ca.output_padding})
    if (!v->empty() && v->size() != r)
      return fail(ErrorCode::kInvalidArgument, "ConvTranspose attribute has the wrong length");
  if (!ca.pads.empty() && ca.pads.size() != 2 * r)
    return fail(ErrorCode::kInvalidArgument, "ConvTranspose pads has the wrong length");
  CtGeom q;
  q.c = x[1].value(), q.g = ca.group, q.cg = q.c / q.g, q.mg = w[1].value(), q.m = q.mg * q.g;
  if (w[0].value() != q.c || q.c % q.g != 0)
    return fail(ErrorCode::kInvalidArgument,
                "ConvTranspose weights " + to_string(w) + " do not fit input " + to_string(x));
  int64_t in[2] = {1, 1}, k[2] = {1, 1}, s[2] = {1, 1}, dl[2] = {1, 1}, pb[2] = {0, 0},
          out[2] = {1, 1};
  for (size_t d = 0; d < r; ++d) {
    const size_t a = 2 - r + d;  // 1-D fills the width
    in[a] = x[d + 2].value(), k[a] = w[d + 2].value(), s[a] = attr(ca.strides, d, 1);
    dl[a] = attr(ca.dilations, d, 1), pb[a] = attr(ca.pads, d, 0);
    const int64_t pe = attr(ca.pads, d + r, 0), op = attr(ca.output_padding, d, 0);
    if (s[a] <= 0 || dl[a] <= 0 || k[a] <= 0)
      return fail(ErrorCode::kInvalidArgument, "ConvTranspose strides, dilations, kernel");
    out[a] = s[a] * (in[a] - 1) + op + dl[a] * (k[a] - 1) + 1 - pb[a] - pe;
    if (out[a] <= 0) return fail(ErrorCode::kInvalidArgument, "ConvTranspose output is empty");
  }
  q.ih = in[0], q.iw = in[1], q.kh = k[0], q.kw = k[1], q.sh = s[0], q.sw = s[1];
  q.dh = dl[0], q.dw = dl[1], q.pt = pb[0], q.pl = pb[1], q.oh = out[0], q.ow = out[1];
  return q;
}

}  // namespace

Result<DimExprs> conv_transpose_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId wv, data_input(p, n, 1));
  if (!p.values[static_cast<size_t>(wv)].constant)
    return fail(unsupported("ConvTranspose weights must be a constant"));
  HONE_TRY(const CtGeom q, geometry(p, n));
  p.operands[id] = {xv, wv};
  if (has_input(n, 2)) {
    HONE_TRY(ValueId bv, data_input(p, n, 2));
    if (!(dims_of(p, bv) == DimExprs{q.m}))
      return fail(ErrorCode::kInvalidArgument,
                  "ConvTranspose bias must have shape [" + std::to_string(q.m) + "]");
    p.operands[id].push_back(bv);
  }
  const DimExprs& x = dims_of(p, xv);
  if (x.size() == 3) return DimExprs{x[0], q.m, q.ow};
  return DimExprs{x[0], q.m, q.oh, q.ow};
}

DimExpr conv_transpose_scratch(const Program& p, NodeId id) {
  const auto q = geometry(p, p.node(id));
  return q ? q->mg * q->kh * q->kw * q->ih * q->iw : 0;
}

void Emitter::emit_conv_transpose(const Node& n, NodeId id, const std::string& y, const Step& st) {
  const auto& ops = p_.operands.at(id);
  const CtGeom q = *geometry(p_, n);
  const int64_t rows = q.mg * q.kh * q.kw, in_plane = q.ih * q.iw, out_plane = q.oh * q.ow;
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* Wt = " + ptr(ops[1]) + ";");
  line("const float* B = " + (ops.size() > 2 ? ptr(ops[2]) : std::string("NULL")) + ";");
  line("float* Y = " + y + ";");
  line("float* col = (float*)(c->A + " + c_int(st.scratch_offset) + ");");
  open("for (int64_t b = 0; b < " + dim(dims(ops[0])[0]) + "; ++b)");
  open("for (int64_t g = 0; g < " + c_int(q.g) + "; ++g)");
  line("const float* xg = X + (b * " + c_int(q.c) + " + g * " + c_int(q.cg) + ") * " +
       c_int(in_plane) + ";");
  line("float* yg = Y + (b * " + c_int(q.m) + " + g * " + c_int(q.mg) + ") * " + c_int(out_plane) +
       ";");
  // col [rows x in_plane] = W_g^T · X_g, W_g being [cg x rows].
  line("SGEMM(1, 0, " + c_int(rows) + ", " + c_int(in_plane) + ", " + c_int(q.cg) +
       ", 1.0f, Wt + g * " + c_int(q.cg * rows) + ", " + c_int(rows) + ", xg, " + c_int(in_plane) +
       ", 0.0f, col, " + c_int(in_plane) + ");");
  // col2im, one output channel per iteration (no two write the same plane).
  begin_parallel("parallel for", worth_threads(c_int(rows * in_plane)));
  open("for (int64_t o = 0; o < " + c_int(q.mg) + "; ++o)");
  line("float* yo = yg + o * " + c_int(out_plane) + ";");
  line("const float bv = B ? B[g * " + c_int(q.mg) + " + o] : 0.0f;");
  line("for (int64_t i = 0; i < " + c_int(out_plane) + "; ++i) yo[i] = bv;");
  open("for (int64_t t = 0; t < " + c_int(q.kh * q.kw) + "; ++t)");
  line("const int64_t kh = t / " + c_int(q.kw) + ", kw = t % " + c_int(q.kw) + ";");
  line("const float* cr = col + (o * " + c_int(q.kh * q.kw) + " + t) * " + c_int(in_plane) + ";");
  open("for (int64_t ih = 0; ih < " + c_int(q.ih) + "; ++ih)");
  line("const int64_t oh = ih * " + c_int(q.sh) + " - " + c_int(q.pt) + " + kh * " + c_int(q.dh) +
       ";");
  line("if (oh < 0 || oh >= " + c_int(q.oh) + ") continue;");
  open("for (int64_t iw = 0; iw < " + c_int(q.iw) + "; ++iw)");
  line("const int64_t ow = iw * " + c_int(q.sw) + " - " + c_int(q.pl) + " + kw * " + c_int(q.dw) +
       ";");
  line("if (ow >= 0 && ow < " + c_int(q.ow) + ") yo[oh * " + c_int(q.ow) + " + ow] += cr[ih * " +
       c_int(q.iw) + " + iw];");
  close();
  close();
  close();
  close();
  end_parallel();
  close();
  close();
}

}  // namespace hone::aot
