// RoiAlign in aot's code (the R-CNN box head's MultiScaleRoIAlign): each
// roi's bins and sampling points come from ops/roi_align_points.h, the C the
// reference samples with (emit_c() carries it where a step needs it); per bin
// the points are visited once, every channel's sum (or max) kept in double as
// the reference keeps it. The number of rois may be known only at run time
// (a NonZero's or TopK's count); batch indices are checked before any is read.
#include <string>

#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/roi_align.h"
#include "ops/shape_fn_nn.h"

namespace hone::aot {

bool uses_roi_align(const Program& p) {
  for (const Step& st : p.steps)
    if (st.anchor >= 0 && p.node(st.anchor).op_type == "RoiAlign") return true;
  return false;
}

Result<DimExprs> roi_align_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId rv, data_input(p, n, 1));
  if (!has_input(n, 2)) return fail(ErrorCode::kInvalidArgument, "RoiAlign has no batch_indices");
  const ValueId bv = n.inputs[2];  // i64 or i32, not data_input's f32 (typed_values.cpp)
  if (const DType t = p.values[static_cast<size_t>(bv)].dtype; t != DType::kI64 && t != DType::kI32)
    return fail(unsupported("RoiAlign batch_indices are " + std::string(dtype_name(t)) +
                            "; aot reads i64 or i32"));
  HONE_TRY(const ops::RoiAlignAttrs a, ops::roi_align_attrs(n, p.graph->opset()));
  const DimExprs &x = dims_of(p, xv), &rois = dims_of(p, rv);
  if (rois.size() == 2 && !(rois[1].is_const() && rois[1].value() == 4))
    return fail(ErrorCode::kInvalidArgument,
                "RoiAlign rois " + to_string(rois) + " must be [num_rois, 4]");
  const DimExprs& batch = dims_of(p, bv);
  // Their counts may be two symbols of one run-time count: compared where numbers.
  if (batch.size() != 1 || rois.size() != 2 ||
      (batch[0].is_const() && rois[0].is_const() && batch[0].value() != rois[0].value()))
    return fail(ErrorCode::kInvalidArgument, "RoiAlign batch_indices " + to_string(batch) +
                                                 " must be [num_rois] for rois " + to_string(rois));
  p.operands[id] = {xv, rv, bv};
  return refused(ops::roi_align_shape(x, rois, a.out_h, a.out_w));
}

void Emitter::emit_roi_align(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const ops::RoiAlignAttrs a =
      ops::roi_align_attrs(n, p_.graph->opset()).value_or(ops::RoiAlignAttrs{});
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* R = " + ptr(ops[1]) + ";");
  line("const " + ctype(ops[2]) + "* B = " + ptr(ops[2]) + ";");
  line("float* Y = " + y + ";");
  // Named before the loops: their locals would shadow the dims array `d`.
  line("const int64_t N = " + dim(x[0]) + ", C = " + dim(x[1]) + ", H = " + dim(x[2]) +
       ", W = " + dim(x[3]) + ", num = " + dim(dims(ops[1])[0]) + ";");
  open("for (int64_t r = 0; r < num; ++r)");
  open("if (B[r] < 0 || B[r] >= N)");
  line(
      "*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"RoiAlign batch index %lld of roi "
      "%lld is outside [0, %lld)\", (long long)B[r], (long long)r, (long long)N);");
  line("return;");
  close();
  close();
  const std::string oh = c_int(a.out_h), ow = c_int(a.out_w);
  begin_parallel("parallel for", worth_threads("num * C * " + c_int(a.out_h * a.out_w * 4)));
  open("for (int64_t r = 0; r < num; ++r)");
  line("const double roi[4] = {R[r * 4], R[r * 4 + 1], R[r * 4 + 2], R[r * 4 + 3]};");
  line("const hone_roi_bins b = hone_roi_bins_of(roi, " + float_literal(a.spatial_scale) + ", " +
       (a.half_pixel ? "1" : "0") + ", " + oh + ", " + ow + ", " + c_int(a.sampling) + ");");
  line("const float* xb = X + (int64_t)B[r] * C * H * W;");
  line("float* yr = Y + r * C * " + c_int(a.out_h * a.out_w) + ";");
  line("double acc[C];");
  open("for (int64_t bin = 0; bin < " + c_int(a.out_h * a.out_w) + "; ++bin)");
  line("const int64_t ph = bin / " + ow + ", pw = bin % " + ow + ";");
  line("for (int64_t ch = 0; ch < C; ++ch) acc[ch] = 0.0;");
  line("int first = 1;");
  open("for (int64_t iy = 0; iy < b.gh; ++iy)");
  open("for (int64_t ix = 0; ix < b.gw; ++ix)");
  line("const hone_roi_point q = hone_roi_sample(&b, ph, pw, iy, ix, H, W);");
  open("for (int64_t ch = 0; ch < C; ++ch)");
  line("const float* pl = xb + ch * H * W;");
  line(
      "const double v = hone_roi_point_value(&q, pl[q.y0 * W + q.x0], pl[q.y0 * W + q.x1], "
      "pl[q.y1 * W + q.x0], pl[q.y1 * W + q.x1], " +
      std::string(a.max_mode ? "1" : "0") + ");");
  line(std::string("acc[ch] = hone_roi_fold(acc[ch], v, first, ") + (a.max_mode ? "1" : "0") +
       ");");
  close();
  line("first = 0;");
  close();
  close();
  line(std::string("for (int64_t ch = 0; ch < C; ++ch) yr[ch * ") + c_int(a.out_h * a.out_w) +
       " + bin] = (float)" + (a.max_mode ? "acc[ch];" : "(acc[ch] / b.count);"));
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
