// GridSample in aot's code (RAFT's correlation lookup): per output point the
// taps come from hone_grid_taps, ops/grid_sample_taps.h, the C the reference
// samples with (emit_c() carries it where a step needs it), summed in double
// over every channel of the point. Spatial dims may be known only at run time:
// the taps read them as C values.
#include <string>

#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/grid_sample.h"
#include "ops/shape_fn_nn.h"

namespace hone::aot {

bool uses_grid_sample(const Program& p) {
  for (const Step& st : p.steps)
    if (st.anchor >= 0 && p.node(st.anchor).op_type == "GridSample") return true;
  return false;
}

Result<DimExprs> grid_sample_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId gv, data_input(p, n, 1));
  HONE_TRY(ops::GridSampleAttrs a, ops::grid_sample_attrs(n, p.graph->opset()));
  (void)a;
  const DimExprs& x = dims_of(p, xv);
  if (x.size() > 5)
    return fail(unsupported("GridSample over " + std::to_string(x.size() - 2) +
                            " spatial dims (aot samples 1 to 3)"));
  p.operands[id] = {xv, gv};
  return refused(ops::grid_sample_shape(x, dims_of(p, gv)));
}

void Emitter::emit_grid_sample(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const ops::GridSampleAttrs a =
      ops::grid_sample_attrs(n, p_.graph->opset()).value_or(ops::GridSampleAttrs{});
  const size_t r = x.size() - 2;
  int64_t most = 1;  // taps a point has at most: 4 a dim (cubic)
  for (size_t k = 0; k < r; ++k) most *= 4;
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* G = " + ptr(ops[1]) + ";");
  line("float* Y = " + y + ";");
  // Named before the loops: their locals would shadow the dims array `d`.
  std::string spatial;
  for (size_t k = 0; k < r; ++k) spatial += (k ? ", " : "") + dim(x[k + 2]);
  line("const int64_t gs_dims[" + std::to_string(r) + "] = {" + spatial + "};");
  line("const int64_t C = " + dim(x[1]) + ", in_plane = " + dim(product(x, 2, x.size())) +
       ", out_plane = " + dim(product(dims(n.outputs[0]), 2, r + 2)) + ", points = " + dim(x[0]) +
       " * out_plane;");
  begin_parallel("parallel for", worth_threads("points * C * " + c_int(most)));
  open("for (int64_t p = 0; p < points; ++p)");
  line("const int64_t bn = p / out_plane, o = p % out_plane;");
  line("double g[" + std::to_string(r) + "];");
  line("int64_t off[" + c_int(most) + "];");
  line("double w[" + c_int(most) + "];");
  line("for (int k = 0; k < " + std::to_string(r) + "; ++k) g[k] = (double)G[p * " +
       std::to_string(r) + " + k];");
  line("const int nt = hone_grid_taps(g, " + std::to_string(r) + ", gs_dims, " +
       std::to_string(static_cast<int>(a.mode)) + ", " +
       std::to_string(static_cast<int>(a.padding)) + ", " + (a.align_corners ? "1" : "0") +
       ", off, w);");
  open("for (int64_t ch = 0; ch < C; ++ch)");
  line("const float* plane = X + (bn * C + ch) * in_plane;");
  line("double acc = 0.0;");
  line("for (int k = 0; k < nt; ++k) if (off[k] >= 0) acc += w[k] * (double)plane[off[k]];");
  line("Y[(bn * C + ch) * out_plane + o] = (float)acc;");
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
