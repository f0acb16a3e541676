// Private to the blas backend: the operator lifecycle every fused unit
// follows (STYLE.md rule 10).
//
//   HONE_TRY(std::unique_ptr<Op> op, create_unit(graph, nodes));   // validate, pack weights
//   HONE_TRY(OpPlan p, op->plan(input_dims, {pool, known}));  // shapes -> kernel, workspace
//   p.run(RunArgs{inputs, outputs, workspace, &pool});   // bind pointers, run
//
// An Op is immutable after create and shared by every plan of its block; an
// OpPlan belongs to one input-shape signature. run() may be called from
// several threads at once with different RunArgs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/blas/kernels/eltwise.h"
#include "backends/common/fused_units.h"
#include "backends/common/host_eval.h"
#include "hone/error.h"
#include "hone/graph.h"
#include "hone/tensor.h"
#include "hone/thread_pool.h"

namespace hone::blas {

using dims_t = std::vector<int64_t>;

/// What blas evaluates when it plans a signature (common/host_eval.h): shape
/// arithmetic and the masks, scales and tables exporters compute from dims.
/// support.cpp decides with it, create_unit() makes host units with it.
inline constexpr host_eval::Policy kHostPolicy = host_eval::Policy::kAnyDtype;

/// The input slots a blas kernel reads at run time though they are not f32:
/// a Where's condition (a mask another block made).
inline bool reads_as_data(const Node& n, size_t slot) {
  return n.op_type == "Where" && slot == 0;
}

/// Pointers for one run of one planned op.
struct RunArgs {
  std::vector<const float*> inputs;  // the unit's inputs, in order
  std::vector<float*> outputs;
  float* workspace = nullptr;
  ThreadPool* pool = nullptr;
};

/// What an op's plan() reads besides its inputs' dims: the pool its kernels
/// will run on, and the values known when the plan is built (initializers and
/// the host values of this signature: common/host_eval.h), such as a Reshape
/// target an exporter computed from Shape.
struct PlanEnv {
  ThreadPool& pool;
  const host_eval::Env& known;
};

struct OpPlan {
  /// Host nodes (common/host_eval.h): the values computed when planning, one
  /// per output; such a plan has no run().
  std::vector<std::shared_ptr<const Tensor>> host;
  std::vector<dims_t> outputs;
  size_t workspace_floats = 0;
  std::string kernel;  // self-describing kernel id, e.g. "conv2d.f32.blas.im2col"
  /// Unit inputs whose bytes output 0 may take over: run() is correct when
  /// outputs[0] == inputs[k] (each element read before it is written). The
  /// memory planner takes one only when that input dies here.
  std::vector<int> in_place;
  std::function<void(const RunArgs&)> run;
};

class Op {
 public:
  virtual ~Op() = default;
  /// kUnsupported when these shapes cannot run here (the block then runs on
  /// the reference for this signature); kInvalidArgument for shapes the op rejects.
  [[nodiscard]] virtual Result<OpPlan> plan(const std::vector<dims_t>& inputs,
                                            const PlanEnv& env) const = 0;
};

using PlanFn = std::function<Result<OpPlan>(const std::vector<dims_t>&, const PlanEnv&)>;

/// An op whose whole state is captured by its plan function.
class FnOp final : public Op {
 public:
  explicit FnOp(PlanFn f) : f_(std::move(f)) {}
  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    return f_(in, env);
  }

 private:
  PlanFn f_;
};

/// Element-wise operands of a fused program: operand k is the unit's input
/// `input[k]` (>= 0), a constant the op made (`own[k]`, input -1), or the
/// output of the op it is the epilogue of (input -2, always operand 0).
struct EwOperands {
  std::vector<int> input;
  std::vector<Tensor> own;
  /// Own constants of C values applied along axis 1 whatever the rank
  /// (BatchNormalization); empty means none.
  std::vector<bool> per_channel;
  size_t size() const { return input.size(); }
  bool is_per_channel(size_t k) const { return k < per_channel.size() && per_channel[k]; }
};

using Unit = FusedUnit<Op>;

/// Who reads what inside one block graph (BlockReaders; a node reading one
/// value twice counts twice). `used`: two dense ops can both end at one Add
/// (a residual join); the first unit created takes it.
struct BlockInfo : BlockReaders {
  explicit BlockInfo(const Graph& graph, host_eval::Known known_values = {})
      : BlockReaders(graph, false), known(std::move(known_values)) {}
  /// Block inputs whose values the plan's key carries (common/host_eval.h).
  host_eval::Known known;
  /// The one node reading `v` when `v` is no block output and that node is
  /// in no unit yet; else nullptr.
  const Node* sole_consumer(ValueId v) const;
};

/// Extends an element-wise chain whose current value is `cur` with each
/// sole consumer that is an element-wise op this backend runs, appending
/// instructions to `prog`, operands to `ops`/`unit_inputs` and node ids to
/// `absorbed`. `epilogue`: the chain runs in place on a dense op's output,
/// so operands must not broadcast it larger. Returns the chain's last value.
ValueId absorb_eltwise(const BlockInfo& b, ValueId cur, bool epilogue, kernels::EwProgram* prog,
                       EwOperands* ops, std::vector<ValueId>* unit_inputs,
                       std::vector<NodeId>* absorbed);

/// The instruction for a unary element-wise node, or false when it is none.
bool unary_instr(const Graph& g, const Node& n, kernels::EwInstr* out);
/// The op of a binary element-wise node, or false when it is none.
bool binary_op(const Node& n, kernels::EwOp* out);

/// Creates the unit starting at node `n` (absorbing the followers it fuses).
[[nodiscard]] Result<Unit> create_unit(const BlockInfo& b, const Node& n,
                                       std::vector<NodeId>* absorbed);
// Per family, in ops_dense.cpp, ops_eltwise.cpp and ops_simple.cpp.
[[nodiscard]] Result<Unit> create_dense(const BlockInfo& b, const Node& n,
                                        std::vector<NodeId>* absorbed);
[[nodiscard]] Result<Unit> create_eltwise(const BlockInfo& b, const Node& n,
                                          std::vector<NodeId>* absorbed);
[[nodiscard]] Result<Unit> create_simple(const BlockInfo& b, const Node& n);
/// Host nodes, and the ops that read indices, bounds or shapes known when the
/// plan is built (Gather, Slice, Split, Expand, Where), in ops_index.cpp.
[[nodiscard]] Result<Unit> create_host(const BlockInfo& b, const Node& n);
[[nodiscard]] Result<Unit> create_index(const BlockInfo& b, const Node& n);
/// Pad with a constant, its pads known when the plan is built (ops_pad.cpp).
[[nodiscard]] Result<Unit> create_pad(const BlockInfo& b, const Node& n);

/// The layout of a fused program over output `out`; operand dims come from
/// the unit's inputs, the op's own constants, or `first` (input -2).
[[nodiscard]] Result<kernels::EwLayout> plan_operands(const EwOperands& ops,
                                                      const std::vector<dims_t>& unit_inputs,
                                                      const dims_t& first, const dims_t& out);
/// "[2,3,4]": dims in error messages (ops_simple.cpp).
std::string dims_str(const dims_t& d);

/// Operand pointers for one run; `first` stands for input -2.
std::vector<const float*> bind_operands(const EwOperands& ops, const RunArgs& args,
                                        const float* first);

}  // namespace hone::blas
