// Private to the aot backend: a block lowered for code generation. lower()
// infers every value's dims as expressions over the block's symbolic dims,
// groups nodes into fused steps (an optional anchor op such as Conv or
// Softmax, then a chain of element-wise ops run in one loop), lays the
// weights out in one blob and plans one arena by liveness, with buffer sizes
// taken at the dims' upper bounds. emit_c() turns the result into C source.
//
//   HONE_TRY(Program p, lower(block, {.bounds = {{"batch", 64}}}));
//   std::string src = emit_c(p, {.cpu_features = {"avx2", "fma"}});
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/aot/dim_expr.h"
#include "hone/graph.h"

namespace hone::aot {

/// Where a value lives while the generated run() executes.
enum class Place : uint8_t {
  kNone,    // not computed (an anchor's result written straight into its chain's buffer)
  kInput,   // the caller's input buffer `index`
  kOutput,  // the caller's output buffer `index`
  kWeight,  // the weights blob at float offset `offset`
  kArena,   // the arena at byte offset `offset`
  kLocal,   // a register inside a fused loop
  kView,    // the storage of `view_of` (Reshape, Flatten, ...)
};

struct ValueInfo {
  std::string name;
  DimExprs dims;
  /// f32, or i64, i32 or bool: token ids, masks, indices (typed_values.h).
  DType dtype = DType::kF32;
  const Tensor* constant = nullptr;  // initializers; also synthetic weights
  std::optional<float> literal;      // f32 scalars inlined into the code
  Place place = Place::kNone;
  int64_t index = 0;   // input or output index
  int64_t offset = 0;  // weight float offset or arena byte offset
  ValueId view_of = kNoValue;
  int def_step = -1;
  bool nhwc = false;  // a 4-D value stored channels-last, or nChw16c if Program::blocked (nhwc.cpp)

  bool is_f32() const { return dtype == DType::kF32; }
};

struct Step {
  std::string label;           // "Conv+Relu", shown in the kernel plan and the source
  NodeId anchor = -1;          // the non-element-wise node, or -1
  std::vector<NodeId> chain;   // element-wise nodes after it, in order
  ValueId result = kNoValue;   // the last value the step makes
  DimExpr scratch_floats = 0;  // workspace (im2col), in floats
  int64_t scratch_offset = 0;  // its arena byte offset
  bool nhwc = false;           // 4-D activations channels-last or blocked (nhwc.cpp)
  bool post_ops = false;       // the chain runs as oneDNN post-ops of the conv anchor
  /// A channels-last conv whose input is NCHW with few channels (a graph's
  /// image): oneDNN reads it as is into nChw16c scratch, then reorders to NHWC
  /// (in a blocked program straight into its nChw16c result).
  bool nchw_src_blocked = false;
};

struct LowerOptions {
  /// Upper bound per symbolic dim; a symbol without one gets default_max.
  std::map<std::string, int64_t> bounds;
  int64_t default_max = 64;
};

struct Program {
  const Graph* graph = nullptr;
  std::vector<ValueInfo> values;  // by ValueId; synthetic weights after the graph's
  /// Operands each node reads in the generated code (BatchNormalization reads
  /// its folded scale and shift, scalars become literals but stay listed).
  std::map<NodeId, std::vector<ValueId>> operands;
  /// Slice, Gather by one constant index and Expand: each is a copy of its input read
  /// from element `base` with `strides` (input elements per step of each
  /// output axis; negative for a reversed Slice, 0 where Expand repeats),
  /// set by shape_rules.cpp.
  struct Copy {
    DimExpr base;
    DimExprs strides;
    DimExprs part_base;  // Split: the base of each output (strides shared)
    /// Slice whose bounds are host values (computed from dims): the sliced
    /// axes, and their starts where constants (empty: operand 1, read when the
    /// code runs); the extents are the output dims shape inference gave, which
    /// the code checks fit (slice_bounds.cpp). `base` is then 0.
    std::vector<size_t> run_time_axes;
    std::vector<int64_t> const_starts;
  };
  std::map<NodeId, Copy> copies;
  /// Pad with a constant: the output filled with `value`, then the input's
  /// kept part (`window`, from element `src_base` of the input) copied to
  /// element `dst_base` of the output; set by copy_rules.cpp.
  /// In reflect, edge or wrap mode (`mode`), each output element is read
  /// from the input instead: per axis, `index` lists the input position each
  /// output position reads (ops::pad_source_offsets; empty: an axis not
  /// padded, read where it is written).
  struct PadFill {
    DimExprs window;
    DimExpr src_base, dst_base;
    float value = 0.0f;
    std::string mode = "constant";
    std::vector<std::vector<int64_t>> index;
  };
  std::map<NodeId, PadFill> pads;
  std::vector<std::string> symbols;  // in first-seen order over the inputs
  std::vector<int64_t> symbol_max;
  /// Per symbol: a dim the graph leaves unnamed at the block's edge, named
  /// VALUE:AXIS here, whose bound default_max only assumes.
  std::vector<bool> symbol_unnamed;
  /// Per symbol: a length a step finds when it runs (NonZero's count,
  /// nonzero.cpp), at most its symbol_max until then; the caller reads the
  /// dims it made after the run (hone_aot_ran_output_shape).
  std::vector<bool> symbol_set_by_run;
  /// What the code assumes of its dims, checked when it runs, before any
  /// step (emit.cpp): `dim` == `value` where `exact` (a derived dim at the
  /// block's edge read as an expression of the symbols, edge_dims.h), else
  /// `dim` >= `value` (a Slice of a run-time dim: it is at least as long as
  /// what the slice cuts off). `what` names the dim in the error.
  struct DimCheck {
    DimExpr dim, value;
    bool exact = true;
    std::string what;
  };
  std::vector<DimCheck> dim_checks;
  std::vector<Step> steps;
  std::vector<float> weights;  // the blob's payload
  int64_t arena_bytes = 0;
  /// The channels-last steps (Step::nhwc) store nChw16c instead of NHWC (nhwc.h).
  bool blocked = false;
  std::deque<Tensor> synthetic;  // folded constants (a deque: ValueInfo points into it)

  const Node& node(NodeId n) const { return graph->node(n); }
  std::string sym_c(const std::string& s) const;  // "d[0]"
  std::string c(const DimExpr& e) const {
    return e.to_c([this](const std::string& s) { return sym_c(s); });
  }
  int64_t at_bounds(const DimExpr& e) const;
};

/// The node families lower() knows.
bool is_elementwise_op(const std::string& op);
bool is_view_op(const std::string& op);
/// Input `slot` of `n` is data the generated code reads, not a shape, axes or
/// bounds operand (support.cpp); a Slice's starts are read, where computed
/// from dims (slice_bounds.cpp).
bool reads_data_slot(const Node& n, size_t slot);
/// Why graph value `v`, input `i` of a node, cannot be an aot operand (not a
/// tensor, or not f32), or "" when it can (support.cpp).
std::string f32_tensor_problem(const Value& v, size_t i);

[[nodiscard]] Result<Program> lower(const Graph& block, const LowerOptions& options);

struct EmitOptions {
  std::vector<std::string> cpu_features;  // checked at create ("avx2")
  std::string banner;                     // first comment line
};
std::string emit_c(const Program& p, const EmitOptions& options);

/// One line per step for describe_kernels(): "Conv+Relu [conv2d.f32.aot.im2col_sgemm]".
std::vector<std::string> describe_steps(const Program& p);

}  // namespace hone::aot
