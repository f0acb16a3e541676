// NonZero in aot's code (ops/nonzero.h): its output [rank, count] has a
// length known only once the code has run. The length is a symbol of the
// block, set by the run (Program::symbol_set_by_run) and at most the input's
// element count at the block's bounds, which sizes the output buffer; the
// code counts, then writes the coordinates of each non-zero element in
// row-major order, [rank, count] packed at the buffer's start, and sets the
// symbol; the caller reads the output's real dims after the run
// (hone_aot_ran_output_shape). The partition ends the block after NonZero,
// so no code of this block reads the length; the blocks after it bind it
// from their input's dims, with bounds derived from the model inputs'
// (passes/dim_bounds.h), and it may be 0 there.
#include <algorithm>
#include <string>

#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "backends/aot/toolchain.h"
#include "ops/nonzero.h"
#include "ops/run_length.h"

namespace hone::aot {

Result<DimExprs> nonzero_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const Graph& g = *p.graph;
  const ValueId y = n.outputs[0];
  if (const std::string why = ops::run_length_block_end_why_not(g, n, "NonZero"); !why.empty())
    return fail(unsupported(why));
  const std::string s = ops::nonzero_length(g.value(y).name).symbol_name();
  if (std::find(p.symbols.begin(), p.symbols.end(), s) != p.symbols.end())
    return fail(ErrorCode::kInternal, "NonZero's length '" + s + "' is already a symbol");
  const DimExprs& x = dims_of(p, xv);
  const int64_t most = p.at_bounds(product(x));
  p.symbols.push_back(s);
  p.symbol_max.push_back(most);
  p.symbol_unnamed.push_back(false);
  p.symbol_set_by_run.push_back(true);
  p.operands[id] = {xv};
  return DimExprs{DimExpr(static_cast<int64_t>(x.size())), DimExpr::symbol(s)};
}

void Emitter::emit_nonzero(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  // Set by this step: the length's symbol in d, written through ctx_t's d_set.
  const std::string s = ops::nonzero_length(p_.graph->value(n.outputs[0]).name).symbol_name();
  const auto at = std::find(p_.symbols.begin(), p_.symbols.end(), s) - p_.symbols.begin();
  const std::string set = "c->d_set[" + std::to_string(at) + "]";
  line("const " + ctype(xv) + "* X = " + ptr(xv) + ";");
  line("int64_t* Y = " + y + ";");
  line("const int64_t n = " + numel(xv) + ";");
  line("int64_t count = 0;");
  line("for (int64_t i = 0; i < n; ++i) count += X[i] != 0;");
  line("int64_t j = 0;");
  open("for (int64_t i = 0; i < n; ++i)");
  line("if (X[i] == 0) continue;");
  line("int64_t at = i;");
  line("(void)at;");
  for (size_t a = x.size(); a-- > 0;) {
    const std::string len = "(int64_t)(" + dim(x[a]) + ")";
    line("Y[" + std::to_string(a) + " * count + j] = at % " + len + ";");
    if (a > 0) line("at /= " + len + ";");
  }
  line("++j;");
  close();
  line(set + " = count;");
}

Result<void> take_ran_dims(const Abi& abi, void* model, std::vector<Tensor>& outs) {
  for (size_t k = 0; k < outs.size(); ++k) {
    std::vector<int64_t> dims(outs[k].shape().size() + 1);
    if (const int status = abi.ran_output_shape(model, static_cast<int>(k), dims.data()))
      return fail(
          status == HONE_AOT_OUT_OF_MEMORY ? ErrorCode::kOutOfMemory : ErrorCode::kInvalidArgument,
          abi.last_error());
    dims.pop_back();
    HONE_TRY(outs[k], ops::nonzero_unpacked(outs[k], std::move(dims)));
  }
  return {};
}

}  // namespace hone::aot
