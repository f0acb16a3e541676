// Private to the cuda backend: the operator lifecycle every unit follows
// (STYLE.md rule 10), on the device.
//
//   HONE_TRY(Unit u, create_unit(info, node, &absorbed));   // validate, generate chain source
//   HONE_TRY(OpPlan p, u.op->plan(input_dims, env));        // shapes -> kernel, workspace
//   HONE_CHECK_OK(p.run(ctx, Bind{ins, outs, workspace}));  // launch on ctx.stream
//
// An Op is immutable after its block's module is compiled and is shared by
// every plan of its block; run() only enqueues work on the given stream, so
// several threads may run one plan at once with different streams and buffers.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/fused_units.h"
#include "backends/common/host_eval.h"
#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/run_errors.h"
#include "hone/graph.h"
#include "ops/broadcast.h"
#include "ops/nonzero.h"

namespace hone::cuda {

using dims_t = std::vector<int64_t>;

/// What a step runs with: one stream, its cuBLAS handle, the shared kernels.
struct ExecCtx {
  const Driver& d;
  const Module& fixed;
  CUstream stream;
  cublasHandle_t blas;
  cudnnHandle_t dnn = nullptr;  // null when convolutions do not use cuDNN
  /// The stream's run error word (run_errors.h), which kernels that can meet
  /// a bad index set with run_error_code(kind, Bind::step); 0: none (a
  /// kernel timed alone), and those kernels then set nothing.
  CUdeviceptr errors = 0;
};

/// Device pointers for one run of one planned op.
struct Bind {
  std::vector<CUdeviceptr> in;  // the unit's inputs, in order
  /// Per input: its bf16/f16 copy made at build (a constant matrix-product
  /// operand under precision=bf16/fp16), or 0; may be shorter than `in`.
  std::vector<CUdeviceptr> half;
  std::vector<CUdeviceptr> out;
  CUdeviceptr workspace = 0;
  size_t step = 0;  // the step's index in its Program (run_errors.h)
};

/// How a value is stored in a Program's arena (storage.h). kHalf only under
/// precision=bf16/fp16 with activations=half: bf16/f16 elements
/// (MathSettings::half), rank-4 tensors channels-last [N, H, W, C] (their
/// dims stay [N, C, H, W]), any other rank row-major.
enum class Storage : uint8_t { kF32, kHalf };

/// What planning knows beyond a unit's input dims: any block value's dims,
/// and the contents of constants and of values evaluated on the host
/// (common/host_eval.h), such as a Reshape's computed target shape.
using PlanEnv = host_eval::Env;

struct OpPlan {
  std::vector<dims_t> outputs;
  size_t workspace_bytes = 0;
  std::string kernel;  // self-describing kernel id, e.g. "conv2d.f32.cuda.im2col+sgemm"
  /// Per output: the input it is a view of (same bytes, new dims; no launch),
  /// or -1 for its own buffer. Empty: every output has its own buffer.
  std::vector<int> alias;
  /// Per aliased output: where the view starts in its input, in elements
  /// (a Gather of one index along the outermost axis, a Slice of it). Empty: 0.
  std::vector<int64_t> alias_offset;
  /// Per output: its value, computed on the host now (a host node: Shape and
  /// what is computed from it); such outputs take no device memory unless a
  /// device op reads them, and then are uploaded once per plan. Empty: none.
  std::vector<std::shared_ptr<const Tensor>> host;
  /// Per output: its dtype on the device (ArgMax's i64, a comparison's bool
  /// bytes). Empty, or shorter than outputs: f32.
  std::vector<DType> dtypes;
  /// Enqueues the work; null for ops that are only views.
  std::function<Result<void>(const ExecCtx&, const Bind&)> run;
  /// Per input: the storage run() reads it in (Op::plan_half); empty: kF32
  /// (or the slot's own dtype) for every input.
  std::vector<Storage> reads;
  /// Per output: the storage run() writes; empty, or shorter: kF32.
  std::vector<Storage> writes;
  /// Under half activations, a plan() that reads f32 by choice: why (a unit
  /// kept in fp32, "kept in fp32 (fp32_nodes)"), named on the conversions of
  /// its half inputs. Empty: the op has no half kernel.
  std::string f32_because;
  /// NonZero, NonMaxSuppression: output `counted->output` holds i64 packed at
  /// its start and their length as its last element, known only once it has
  /// run; the block must end with it, and its run hands it out as
  /// counted->dims with the length at counted->axis (ops/nonzero.h,
  /// Program::counted_outputs). Empty: no such output.
  std::optional<ops::CountedOutput> counted;
  /// The outputs are known by their dims only: a view or Transpose that an
  /// attention unit reads through in place (its strides), kept so that Shape
  /// nodes can read its dims. No memory; a device op reading one is an error.
  bool dims_only = false;
};

class Op {
 public:
  virtual ~Op() = default;
  /// kUnsupported when these shapes cannot run here (the block then runs on
  /// the reference for this signature); kInvalidArgument for shapes the op rejects.
  [[nodiscard]] virtual Result<OpPlan> plan(const std::vector<dims_t>& inputs,
                                            const PlanEnv& env) const = 0;
  /// Under half-precision activations: a plan reading its inputs in the
  /// storages OpPlan::reads names and writing OpPlan::writes, given what
  /// each input's slot holds now (`have`); the Program converts an input
  /// whose slot holds another storage. kUnsupported (the default) when the
  /// op has no such plan for these inputs: plan() runs on f32 copies.
  [[nodiscard]] virtual Result<OpPlan> plan_half(const std::vector<dims_t>& inputs,
                                                 const std::vector<Storage>& have,
                                                 const PlanEnv& env) const {
    (void)inputs, (void)have, (void)env;
    return fail(ErrorCode::kUnsupported, "no half-precision kernel");
  }
};

/// The planner behind an Op that holds little state.
using Planner = std::function<Result<OpPlan>(const std::vector<dims_t>&, const PlanEnv&)>;
/// Its Op::plan_half, when it has one.
using HalfPlanner = std::function<Result<OpPlan>(const std::vector<dims_t>&,
                                                 const std::vector<Storage>&, const PlanEnv&)>;
class FnOp final : public Op {
 public:
  explicit FnOp(Planner p, HalfPlanner h = nullptr) : plan_(std::move(p)), half_(std::move(h)) {}
  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    return plan_(in, env);
  }
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override {
    if (!half_) return Op::plan_half(in, have, env);
    return half_(in, have, env);
  }

 private:
  Planner plan_;
  HalfPlanner half_;
};

/// A plan whose one output views input 0 (no launch) from element `offset` on.
OpPlan view(dims_t out, const char* kernel, int64_t offset = 0);

/// NVRTC source shared by a block's element-wise chains; compiled into one
/// module after every unit is created, then looked up by name at plan time.
struct ChainModule {
  std::string source;
  std::unique_ptr<Module> module;
  int next_id = 0;
};

using Unit = FusedUnit<Op>;  // label e.g. "'act1' (Relu) +Add+Sigmoid"

/// An attention block the cuda backend runs as one unit (ops_attention.cpp):
/// find_attention()'s match plus the scalar Muls on Q and Kᵀ, the Transpose
/// making Kᵀ, the views and Transposes that split the heads, and the Transpose
/// merging them, when only the match reads them.
struct AttentionSpec {
  std::vector<NodeId> members;  // every node the unit replaces
  ValueId q = -1, k = -1, v = -1, mask = -1;
  bool k_transposed = true;           // k holds Kᵀ [..., D, Sk]; false: K [..., Sk, D]
  double scale = 1.0;                 // the constant factor of the scores
  std::vector<ValueId> scale_values;  // one-value factors known at plan time
  NodeId av = -1;                     // MatMul(P, V)
  /// Views and Transposes between q, k, v and the products (forward order),
  /// read through by the fused kernels' strides.
  /// Chain nodes run as dims-only units (DimsOnly), not absorbed: Shape nodes
  /// may read their outputs' dims. Chains may share nodes (a Transpose of the
  /// packed QKV feeding the Gathers of q, k and v).
  std::vector<NodeId> q_chain, k_chain, v_chain;
  NodeId out_transpose = -1;  // a Transpose of av's output, written through; -1: none
  /// A Reshape or Flatten of out_transpose's output (merging the heads), the
  /// unit's output then: the contiguous transposed output seen with its dims
  /// (a rank-2 or rank-3 value, which half-precision activations keep
  /// row-major, where the rank-4 one would be channels-last); -1: none.
  NodeId out_reshape = -1;
  /// Whether `id` is in one of the chains.
  bool in_chain(NodeId id) const;
};

/// Who reads what inside one block graph (BlockReaders; a node reading one
/// value twice counts once), and the units found in it.
struct BlockInfo : BlockReaders {
  std::shared_ptr<ChainModule> chains;
  BuildSettings settings;
  std::vector<AttentionSpec> attention;  // find_attention_units()
  std::vector<int> attention_of;         // per node: its attention unit, or -1
  bool inside_attention = false;         // creating an attention unit's members
  explicit BlockInfo(const Graph& graph) : BlockReaders(graph, true) {}
  NodeId node_id(const Node& n) const { return static_cast<NodeId>(&n - g.nodes().data()); }
  /// The one node reading `v` when `v` is no block output and that node is
  /// in no unit yet; else -1.
  NodeId sole_consumer(ValueId v) const;
  /// Node `id`'s place in the block's topological order, the one
  /// place_units() follows (a unit runs at its last node's place).
  size_t position(NodeId id);
  /// The nodes reading value `v`, each once, in node order.
  const std::vector<NodeId>& readers(ValueId v);

 private:
  std::vector<size_t> position_;              // filled on first use
  std::vector<std::vector<NodeId>> readers_;  // per value; filled on first use
};

/// The operands of an element-wise kernel reading `in` broadcast to `out`
/// (at most kMaxOperands of them, of any rank), device pointers unset:
/// size-1 dims dropped, and neighbouring dims that every operand reads
/// contiguously or not at all merged into one; unsupported when more than
/// kMaxRank dims remain (MViT's rank-8 relative-position sums merge to 4).
[[nodiscard]] Result<EwArgs> ew_args(const std::vector<dims_t>& in, const dims_t& out);
/// A kernel over operands `in` broadcast to each other (ranks up to
/// kMaxRank), one `out_dtype` element per output element:
/// fn(y, EwArgs, n[, code][, extra]), `code` passed when not -1 and `extra`
/// when given (ops_tensor.cpp: hone_compare, hone_logic, hone_where_bytes;
/// ops_select.cpp: hone_int_binary).
[[nodiscard]] Result<OpPlan> plan_broadcast(const std::vector<dims_t>& in, const char* fn, int code,
                                            DType out_dtype, std::string kernel,
                                            std::optional<int> extra = std::nullopt);
/// The CUDA expression of an element-wise node over operand expressions
/// `args`, or "" when this backend has none for it (or its attributes).
std::string eltwise_expr(const Graph& g, const Node& n, const std::vector<std::string>& args);
/// Inputs of an element-wise node that its expression reads (Clip's bounds are baked in).
size_t eltwise_arity(const Node& n);

/// Strides under which dims `to` view, in row-major order, the elements that
/// (`dims`, element strides `st`) describe; nothing when no strides can (a
/// merge across a gap). The fused attention kernels read views through it.
std::optional<dims_t> restride(const dims_t& dims, const dims_t& st, const dims_t& to);
/// Fills b.attention and b.attention_of (attention_select other than unfused).
void find_attention_units(BlockInfo& b);
/// The unit of chain node `n` of an attention unit: the node's own op,
/// planned for its output dims only (OpPlan::dims_only).
[[nodiscard]] Result<Unit> create_dims_only(BlockInfo& b, const Node& n);
/// The attention unit that node `first`, its earliest member outside the
/// chains, belongs to.
[[nodiscard]] Result<Unit> create_attention(BlockInfo& b, const Node& first,
                                            std::vector<NodeId>* absorbed);
/// The LayerNormalization that `add` (an Add of two computed f32 values) can
/// run fused with, as one add+layernorm unit: a reader of its sum in no unit
/// yet, after which no other reader of the sum comes; else -1.
NodeId layernorm_after(BlockInfo& b, const Node& add);
/// Rows of a LayerNormalization unit over the last axis of a rank-3 value
/// read (`z`: the residual Add's operand) or written (`y`: the normalised
/// output) through a swap of the two leading axes: the [1, 0, 2] Transposes
/// a batch-first torch MultiheadAttention puts around itself, fused instead
/// of copied (kernels/fixed.cu hone_swapped_row).
struct LnSwap {
  bool z = false;
  bool y = false;
};
/// Rank-3 dims (or strides) `d` with their two leading axes swapped.
inline dims_t swap_leading(const dims_t& d) {
  return {d[1], d[0], d[2]};
}
/// The kernel line's note for `sw`: "", " [1,0,2] in", " [1,0,2] out" or both.
inline const char* swap_note(LnSwap sw) {
  return sw.z ? (sw.y ? " [1,0,2] in+out" : " [1,0,2] in") : sw.y ? " [1,0,2] out" : "";
}
/// The Add that Transpose `t` feeds as the one operand of an add+layernorm
/// unit that can read `t`'s input through LnSwap::z (t swaps the leading axes
/// of a rank-3 value, its only reader is that Add), with that unit's
/// LayerNormalization in `*ln`; else -1.
NodeId transposed_into_layernorm(BlockInfo& b, const Node& t, NodeId* ln);
/// That unit: the Add `add` and the LayerNormalization `ln` (ops_layernorm.cpp),
/// started at `transposed` (the Transpose of transposed_into_layernorm) when
/// not null; a swapping Transpose that alone reads the normalised output is
/// absorbed too (LnSwap::y).
[[nodiscard]] Result<Unit> create_add_layernorm(BlockInfo& b, const Node& add, NodeId ln,
                                                std::vector<NodeId>* absorbed,
                                                const Node* transposed = nullptr);
/// A LayerNormalization unit alone, absorbing a swapping Transpose that alone
/// reads its output (LnSwap::y).
[[nodiscard]] Result<Unit> create_layernorm(BlockInfo& b, const Node& n,
                                            std::vector<NodeId>* absorbed);
/// Creates the unit starting at node `n` (absorbing the followers it fuses).
[[nodiscard]] Result<Unit> create_unit(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed);
// Per family, in ops_dense.cpp, ops_eltwise.cpp and ops_misc.cpp.
[[nodiscard]] Result<Unit> create_dense(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed);
/// Conv with the residual Add and Relu that follow it, when it can take them (ops_conv.cpp).
[[nodiscard]] Result<Unit> create_conv(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed);
/// Row-major Y[M, N] = alpha * A[M, K] · B[K, N] + beta * Y on cuBLAS,
/// `batch` times with the given element strides (0 repeats an operand). Y is
/// f32; A and B are f32 (half == 0, SGEMM) or of the cudaDataType `half`
/// (MathSettings::half: bf16 or f16, summed in f32).
[[nodiscard]] Result<void> gemm_rm(const ExecCtx& c, bool ta, bool tb, int64_t m, int64_t n,
                                   int64_t k, float alpha, CUdeviceptr a, int64_t sa, CUdeviceptr b,
                                   int64_t sb, float beta, CUdeviceptr y, int64_t sy, int64_t batch,
                                   int half);
/// A matrix product's kernel id: "<op>.f32.cuda.<sgemm>" for SGEMM, else with
/// "bf16" (or "f16") and gemm_ex for sgemm: gemm_kernel("matmul", "sgemm_batched",
/// kCudaR16BF) is "matmul.bf16.cuda.gemm_ex_batched".
std::string gemm_kernel(const std::string& op, const std::string& sgemm, int half);
/// Bytes of `n` bf16/f16 elements, rounded up to 256 (workspace regions).
size_t half_bytes(int64_t n);
/// Enqueues dst[i] = bf16/f16(x[i]) for n elements (round to nearest even)
/// and returns dst; `half` as in gemm_rm.
[[nodiscard]] Result<CUdeviceptr> to_half(const ExecCtx& c, CUdeviceptr x, int64_t n,
                                          CUdeviceptr dst, int half);
/// Operand `i`'s bf16/f16 copy made at build, or 0.
/// Device arena slots start on 256-byte boundaries.
inline size_t round256(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

inline CUdeviceptr built_half(const Bind& b, size_t i) {
  return i < b.half.size() ? b.half[i] : 0;
}
/// Whether every size fits cuBLAS's 32-bit ints.
bool fits_int(std::initializer_list<int64_t> xs);
[[nodiscard]] Result<Unit> create_chain(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed);
/// Generates into b.chains an in-place kernel `fn(unsigned short* y, long
/// long groups, int bf16)` applying the element-wise nodes `chain` (in order;
/// each reads `from`, earlier chain values and one-value constants only) to
/// bf16 (bf16 = 1) or f16 values, four a step (y 8-byte aligned), in f32;
/// returns fn, and appends the ops' names to `ops`.
[[nodiscard]] Result<std::string> half_chain_kernel(BlockInfo& b, ValueId from,
                                                    const std::vector<NodeId>& chain,
                                                    std::string* ops);
[[nodiscard]] Result<Unit> create_misc(const BlockInfo& b, const Node& n);
/// Gather, Slice, Expand, Split (ops_index.cpp).
[[nodiscard]] Result<Unit> create_index(const BlockInfo& b, const Node& n);
/// At most this many constant indices are gathered by one strided copy
/// each; more by one kernel reading the indices on the device.
inline constexpr int64_t kGatherCopies = 64;
/// Whether Gather `n` (constant or host indices) takes its indices as a
/// device input: they are computed from shapes (their count is known only
/// when planned) or a constant of more than kGatherCopies (ops_index.cpp).
bool gather_reads_indices(const Graph& g, const Node& n);
/// The dtype of `v`: inferred, its initializer's, or a Cast's target; else
/// kUndefined (ops_int.cpp).
DType known_dtype(const Graph& g, ValueId v);
/// Whether Gather `n` reads indices known only at run time (ops_int.cpp).
bool gathers_on_device(const Graph& g, const Node& n);
/// Whether Clip `n` runs as its own unit (hone_clip_typed): its input is
/// i64/i32, or a bound is not a constant f32 scalar (one made at run time),
/// which the element-wise chains cannot bake in (ops_int.cpp).
bool clips_on_device(const Graph& g, const Node& n);
/// That Gather, that Clip, or a Cast between f32, f16, bf16, i64, i32 and
/// bool (ops_int.cpp).
[[nodiscard]] Result<Unit> create_int_op(const BlockInfo& b, const Node& n);
/// `t`'s name ("f32", "i64", "bool") for kernel ids and messages.
std::string dtype_word(DType t);
/// `t`'s element code in kernels/tensor_ops.cu (0 f32, 1 i64, 2 i32, 3 bool,
/// 4 f16, 5 bf16), or -1 for a dtype no cuda kernel reads.
int element_code(DType t);
/// The dtype a data-movement op (Transpose, Slice, Expand, Split, Gather,
/// the views) moves when it reads `v`: its known dtype, f32 when unknown.
DType moved_dtype(const Graph& g, ValueId v);
/// Whether data-movement ops move `t` on the device: f32, i64, i32, bool.
bool movable(DType t);
/// strided_copy for elements of `t` (strides in elements): 4-byte ones
/// through strided_copy, 2-byte through strided_copy_half, an i64 as two
/// words where the rank allows, else (bool bytes) hone_strided_copy_sized.
[[nodiscard]] Result<void> strided_copy_of(const ExecCtx& c, DType t, CUdeviceptr x, CUdeviceptr y,
                                           const dims_t& dims, const dims_t& src,
                                           const dims_t& dst);
/// Whether `op` is CumSum, OneHot, GatherElements, ScatterElements,
/// ScatterND, NonZero or NonMaxSuppression (ops_elements.cpp, ops_nms.cpp).
bool element_op(const std::string& op);
/// Why this backend cannot run that op `n` (its own limits), or "".
std::string element_op_why_not(const Graph& g, const Node& n);
/// That unit (ops_elements.cpp).
[[nodiscard]] Result<Unit> create_element_op(const BlockInfo& b, const Node& n);
/// Why this backend cannot run NonMaxSuppression `n`, or ""; its unit (ops_nms.cpp).
std::string nms_why_not(const Graph& g, const Node& n);
[[nodiscard]] Result<Unit> create_nms(const BlockInfo& b, const Node& n);
/// Standalone BatchNormalization and Pad (ops_pad_norm.cpp).
[[nodiscard]] Result<Unit> create_pad_norm(const BlockInfo& b, const Node& n);
/// Whether `n` runs as a unit of ops_tensor.cpp (create_tensor_op): ArgMax,
/// ArgMin, Tile, InstanceNormalization, Resize, LSTM, GRU, a Where whose condition is
/// made at run time, comparisons of f32 values, Not/And/Or/Xor; TopK, GatherND,
/// the Concat and Add/Sub/Mul of i64/i32 values (ops_select.cpp); ConvTranspose
/// (ops_conv_transpose.cpp).
bool tensor_op(const Graph& g, const Node& n);
/// Why this backend cannot run tensor op `n` (its own limits; attribute
/// validity from ops/attrs.h), or "" (ops_tensor.cpp).
std::string tensor_op_why_not(const Graph& g, const Node& n);
/// That unit (ops_tensor.cpp).
[[nodiscard]] Result<Unit> create_tensor_op(const BlockInfo& b, const Node& n);
/// Where `n`'s condition is neither a constant nor computed from shapes: it
/// is made at run time, bool bytes on the device.
bool where_on_device(const Graph& g, const Node& n);
/// The dtype of Where `n`'s branches: the first known, else f32 (ops_tensor.cpp).
DType where_branch_dtype(const Graph& g, const Node& n);
/// A host node (common/host_eval.h, kAnyDtype): evaluated when a plan is built.
[[nodiscard]] Result<Unit> create_host(const BlockInfo& b, const Node& n);

/// Row-major strides of `d` (ops/broadcast.h).
using ops::strides_of;
int64_t numel_of(const dims_t& d);
/// A bool tensor as 0.0f/1.0f floats of its shape: how a known condition
/// (Where's) reaches the device, whose kernels read f32 only.
Tensor bools_as_floats(const Tensor& t);
/// Multidirectional (numpy) broadcast of `a` and `b` (the rule is
/// ops/broadcast.h); kInvalidArgument when they clash.
[[nodiscard]] inline Result<dims_t> broadcast(const dims_t& a, const dims_t& b) {
  return ops::broadcast_shapes({a, b});
}
/// Strides reading `in` as if broadcast to `out` (0 along broadcast dims),
/// right-aligned to out's rank (ops/broadcast.h).
using ops::broadcast_strides;
/// Enqueues y[dst] = x[src] over `dims` with the fixed hone_strided_copy kernel.
[[nodiscard]] Result<void> strided_copy(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y,
                                        const dims_t& dims, const dims_t& src, const dims_t& dst);
/// The same over 2-byte (bf16/f16) elements, strides in elements. Where the
/// innermost dim is contiguous on both sides, of even length, and the other
/// strides and both pointers allow it, pairs of elements move as floats
/// through strided_copy (rows as float4: a head merge's [S, B, E] to [B, S, E]
/// at copy speed); otherwise element by element (hone_strided_copy_half).
[[nodiscard]] Result<void> strided_copy_half(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y,
                                             const dims_t& dims, const dims_t& src,
                                             const dims_t& dst);

}  // namespace hone::cuda
