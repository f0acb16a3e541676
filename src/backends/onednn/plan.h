// Private to the onednn backend: a Plan is one block of the graph lowered to
// oneDNN primitives for one set of concrete input shapes. This header pulls
// in dnnl.hpp, so only the backend's own .cpp files include it.
//
//   PlanBuilder b(block_graph, engine(), stats);
//   HONE_TRY(std::shared_ptr<const Plan> p, b.build({{2, 3, 16, 16}}));
//   HONE_TRY(auto outs, p->run(inputs, &executions));   // thread-safe
//
// Buffers: block inputs and outputs are plain row-major tensors, f32 but for
// integer and bool values (token ids, masks) that only hone's own steps read
// and write (own_steps.cpp: Gather by run-time indices, Where, Cast, and the
// views of Reshape/Squeeze/Unsqueeze); inside a plan, f32 values may live in
// whatever (blocked) layout a primitive prefers, and
// a reorder is added only where a consumer needs another layout or at the
// block's outputs. Temporaries share arena bytes by liveness, so a chain of
// layers reuses memory that is still in cache; a temporary may be a slice of
// another (a Concat's source written straight into its part of the output,
// buffers.cpp). With set_bf16, Conv/Gemm/MatMul take bf16 copies of
// their source (a reorder step) and weights (packed once) and write f32. Temporaries live in one
// arena allocated per run() call, so concurrent calls share nothing writable; constants (packed
// weights) are built once and only read.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/common/host_eval.h"
#include "backends/onednn/timed_choices.h"
#include "hone/graph.h"
#include "hone/tensor.h"
#include "ops/nonzero.h"

namespace hone::onednn {

/// What onednn evaluates when it builds a plan (common/host_eval.h): shape
/// arithmetic and also the masks, scales and tables exporters compute from
/// dims (f32 and bool results too). support.cpp decides with it, plan.cpp
/// evaluates with it.
inline constexpr host_eval::Policy kHostPolicy = host_eval::Policy::kAnyDtype;

using md_t = dnnl::memory::desc;
using dims_t = std::vector<int64_t>;

/// The process-wide CPU engine (engines are thread-safe).
const dnnl::engine& cpu_engine();
/// Plain row-major descriptor (f32 unless said); a scalar becomes {1}.
md_t plain_md(const dims_t& dims, dnnl::memory::data_type dt = dnnl::memory::data_type::f32);
bool is_plain(const md_t& md);
/// An f32 descriptor whose layout oneDNN picks (format_tag::any).
md_t any_md(const dims_t& dims);
/// Every lowered primitive runs for inference only.
inline constexpr auto kInfer = dnnl::prop_kind::forward_inference;
/// Attributes with a user scratchpad (the plan's workspace holds it).
dnnl::primitive_attr user_scratch();
/// The descriptor of a value that is not f32 (oneDNN 2.6 has no 64-bit
/// integers): its plain row-major bytes, `nbytes` of u8, read and written by
/// hone's own steps only.
md_t bytes_md(size_t nbytes);

struct Buffer {
  enum class Kind : uint8_t { kInput, kConstant, kTemp, kOutput };
  Kind kind = Kind::kTemp;
  int index = 0;      // kInput / kOutput: position
  size_t size = 0;    // kTemp: bytes
  size_t offset = 0;  // kTemp: offset in the arena
  /// kTemp: the temporary whose bytes this one is a slice of (a Concat's
  /// output that its sources are written into, buffers.cpp), or -1; the
  /// slice starts `parent_offset` bytes in. Only roots (-1) are placed.
  int parent = -1;
  size_t parent_offset = 0;
  bool sliced = false;  // kTemp: a slice, or has slices (never written in place, never an output)
  std::shared_ptr<void> owner;  // kConstant: keeps `data` alive
  void* data = nullptr;         // kConstant
};

/// A view of a buffer with a layout.
struct BufferRef {
  int buffer = -1;
  md_t md;
};

/// A step of hone's own code (own_steps.cpp): called with the data pointer
/// of each of its step's args, in their order; an error stops the run.
using OwnFn = std::function<Result<void>(void* const* ptrs)>;
/// At most this many args to an own step.
inline constexpr size_t kMaxOwnArgs = 5;

struct Step {
  std::string kind;      // "conv", "matmul", "eltwise", "reorder", ... (+post-ops)
  dnnl::primitive prim;  // unset for an own step
  std::vector<std::pair<int, BufferRef>> args;  // DNNL_ARG_* -> buffer
  size_t scratch_bytes = 0;
  OwnFn own;  // set for a step of hone's own code instead of a primitive
};

/// What one run needs besides the plan: the arena, the scratchpad, a stream
/// and every step's oneDNN memory objects, made once and bound to the arena.
/// Defined in plan.cpp.
struct RunContext;

class Plan {
 public:
  Plan();
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<dims_t> output_dims;
  std::vector<DType> output_dtypes;  // f32 but for integer and bool values
  /// Per output: a tensor known when the plan was built (a host-computed
  /// shape), handed out as a copy at run; nullopt for computed outputs.
  std::vector<std::optional<Tensor>> host_outputs;
  /// Outputs whose length is known only once the plan has run (NonZero,
  /// own_moves.cpp; NonMaxSuppression, own_nms.cpp): the buffer holds the
  /// elements, then the length as its last i64, and run() hands out the dims
  /// with the length in place.
  std::vector<ops::CountedOutput> counted_outputs;
  /// (output, rank) of the outputs whose every dim is known only once the plan
  /// has run (a Slice of starts, ends or steps read then, own_moves.cpp): the
  /// buffer holds the elements, then the dims as rank i64 in its last bytes,
  /// and run() hands out those dims.
  std::vector<std::pair<size_t, size_t>> sized_outputs;
  size_t arena_bytes = 0;
  size_t scratch_bytes = 0;
  bool blocked16 = false;  // built with PlanBuilder::set_prefer_blocked16
  std::string arena;       // how the temporaries were placed: "arena 1.2 MiB (naive 3.4 MiB, ...)"

  /// Runs every step; `executions` counts the steps run (primitives and own steps). Thread-safe:
  /// each concurrent call takes a RunContext of its own from a pool (creating one when all are
  /// busy), so a warm single caller allocates only its outputs and rebinds only the input and
  /// output pointers.
  [[nodiscard]] Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                                std::atomic<uint64_t>* executions) const;
  /// "conv+eltwise, pooling, reorder"
  std::string describe() const;
  /// Steps that are not reorders.
  size_t compute_steps() const;

 private:
  std::unique_ptr<RunContext> acquire() const;
  void release(std::unique_ptr<RunContext> ctx) const;
  /// HONE_ONEDNN_PROFILE's line: the steps by time (`spent[i]`, ms), slowest first.
  void log_profile(const std::vector<double>& spent) const;

  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<RunContext>> pool_;
};

/// A value of the block while lowering: logical (ONNX) dims and where it
/// lives. A value that is not f32 lives plain, its md bytes_md().
struct PValue {
  dims_t dims;
  BufferRef ref;
  DType dtype = DType::kF32;
};

class PlanBuilder {
 public:
  explicit PlanBuilder(const Graph& g);

  /// Lowers every node for these input dims; kUnsupported naming the node
  /// when oneDNN cannot express it for these shapes.
  /// `known[i]`, where given, is input i's value: a small integer or bool
  /// tensor another block computed from dims (a Reshape's target), used as a
  /// plan constant like a host value; the plan then ignores that input.
  /// `dtypes[i]`, where given, is input i's dtype when it is read at run
  /// time but is not f32 (token ids, a mask): only own steps read it.
  [[nodiscard]] Result<std::shared_ptr<const Plan>> build(
      const std::vector<dims_t>& input_dims, const std::vector<const Tensor*>& known = {},
      const std::vector<DType>& dtypes = {});

  // --- for the lowerings ----------------------------------------------------
  const Graph& graph() const { return g_; }
  bool has(ValueId v) const;
  const PValue& value(ValueId v) const { return values_[static_cast<size_t>(v)]; }
  void set(ValueId v, PValue pv);
  /// The initializer of `v`, or its value computed at plan time (common/host_eval.h), or nullptr.
  const Tensor* constant(ValueId v) const;
  /// The block has depthwise convs (grouped, one input channel per group).
  bool has_depthwise() const { return has_depthwise_; }
  /// The block has 3x3 stride-1 convs over channels in 16s with constant
  /// weights: on nChw16c lower_conv may run them by Winograd.
  bool has_winograd_conv() const { return has_winograd_conv_; }
  /// The block joins 4-D values along channels (a Concat lowered so far):
  /// on nChw16c at batch 1 their sources can be written in place.
  bool has_channel_concat() const { return has_channel_concat_; }
  void note_channel_concat() { has_channel_concat_ = true; }
  /// 2-D convs whose channels split in 16s run on nChw16c instead of the
  /// layout oneDNN picks (see lower_conv); set before build().
  void set_prefer_blocked16(bool on) { prefer_blocked16_ = on; }
  bool prefer_blocked16() const { return prefer_blocked16_; }
  /// Whether a direct conv (lower_conv) or a ConvTranspose (lower_deconv)
  /// of an nChw16c plan is timed on both nhwc and nChw16c (nhwc charged with
  /// the reorders it costs) and the faster kept (the default); off, each
  /// stays on the plan's layout, so the plan's shape does not depend on a
  /// timing (tests of layout propagation).
  void set_layout_trials(bool on) { layout_trials_ = on; }
  bool layout_trials() const { return layout_trials_; }
  /// How lower_conv runs an eligible 3x3 conv of an nChw16c plan: unset
  /// (the default), by Winograd where that is timed faster than the direct
  /// kernel; true, by Winograd wherever oneDNN has the kernel; false, never.
  /// Set, the plan does not depend on a timing (tests of either kernel).
  void set_winograd(std::optional<bool> force) { winograd_ = force; }
  std::optional<bool> winograd() const { return winograd_; }
  /// The backend's record of timed choices (timed_choices.h; not owned, may
  /// be null): each choice lower_* would time is taken from it when it holds
  /// one, and recorded there when timed. A forced setting above
  /// (set_winograd, set_layout_trials off) wins over it: such a choice is
  /// neither timed nor looked up. Null: every choice is timed, none kept.
  void set_choices(TimedChoices* rec) { choices_ = rec; }
  /// Settles the decision of `kind` (TimedChoices::kinds()) at node `n`
  /// among `runnable` (its choices that can run here, the default first):
  /// see TimedChoices::choose; `time` gives each runnable choice's ms. The
  /// key: the node, the plan (any or nChw16c), `kind`, the dims of `n`'s
  /// inputs and the node's precision.
  std::string choose(const Node& n, const std::string& kind,
                     const std::vector<std::string>& runnable,
                     const std::function<std::vector<double>()>& time);
  /// Conv, Gemm and MatMul read bf16 source and weights (f32 accumulation
  /// and destination) where oneDNN has such a kernel, but for the nodes
  /// named in `fp32_nodes`; set before build(), only where the CPU has
  /// native bf16 (cpu_has_bf16()).
  void set_bf16(bool on, std::set<std::string> fp32_nodes = {}) {
    bf16_ = on;
    fp32_nodes_ = std::move(fp32_nodes);
  }
  /// Whether the node being lowered reads bf16.
  bool bf16() const { return bf16_ && !lowering_fp32_; }
  /// Records `v`'s plan-time value.
  void set_host(ValueId v, Tensor t) { host_[static_cast<size_t>(v)] = std::move(t); }
  /// Records `v` as an empty value (a zero-sized dim; lower_empty.cpp): `t`, its
  /// plan-time value, has no element; no buffer ever holds it.
  void set_empty(ValueId v, Tensor t) {
    set_host(v, std::move(t));
    empty_[static_cast<size_t>(v)] = true;
  }
  /// `v` is an empty value of this plan (a block input or computed from one).
  bool is_empty(ValueId v) const { return v >= 0 && empty_[static_cast<size_t>(v)]; }

  int new_temp(const md_t& md);
  // --- slices of one temporary (buffers.cpp) -----------------------------------
  /// The root temporary holding buffer `buf`'s bytes and the byte offset of
  /// `buf` in it (`buf` itself and 0 when it is a root); -1 when `buf` is not
  /// a temporary.
  int root_of(int buf, size_t* offset) const;
  size_t buffer_size(int buf) const;
  /// Makes root temporary `buf` a slice of temporary `parent`, `offset` bytes in:
  /// what was written into `buf` (and is still to be) lands there.
  void place_in(int buf, int parent, size_t offset);
  /// A new temporary of layout `md` that is a slice of `parent`, `offset` bytes in.
  int new_slice(int parent, size_t offset, const md_t& md);
  int new_constant(Tensor t);
  /// `v` in layout `want` (a reorder step when it differs).
  BufferRef ensure(ValueId v, const md_t& want);
  /// A reorder step from `src` into a fresh buffer of layout `want`; none
  /// when the layouts are equal or hold the same bytes (same_bytes): `src`'s
  /// buffer seen as `want`.
  BufferRef reorder_to(const BufferRef& src, const md_t& want);
  /// `v` in plain row-major layout.
  BufferRef plain(ValueId v) { return ensure(v, plain_md(value(v).dims)); }
  /// `v`'s plain bytes whatever its dtype, for an own step: an f32 value as
  /// plain(); a plan-time value without a buffer (an integer or bool
  /// constant, a mask computed from dims) gets a constant buffer now.
  BufferRef data(ValueId v);
  /// `v`'s dtype: its PValue's, or its plan-time value's.
  DType dtype(ValueId v) const;
  /// A constant tensor reordered now into layout `want` (packed weights).
  BufferRef pack(const Tensor& t, const md_t& src_view, const md_t& want);
  void add_step(std::string kind, dnnl::primitive prim, const dnnl::primitive_desc_base& pd,
                std::vector<std::pair<int, BufferRef>> args);
  /// A step of hone's own code; `args` as add_step's (DNNL_ARG_DST and
  /// DNNL_ARG_DST_* written, the others read), at most kMaxOwnArgs.
  void add_own_step(std::string kind, OwnFn fn, std::vector<std::pair<int, BufferRef>> args);
  /// Block output `v` is `dims` with the length at `axis`, followed by the
  /// length (Plan::counted_outputs).
  void set_counted(ValueId v, std::vector<int64_t> dims, size_t axis) {
    counted_[v] = {0, std::move(dims), axis};
  }
  /// Block output `v` is its elements followed by its `rank` dims
  /// (Plan::sized_outputs).
  void set_counted_dims(ValueId v, size_t rank) { sized_[v] = rank; }

  // --- fusion queries ---------------------------------------------------------
  /// The one node reading `v`, when `v` is not a block output; else nullptr.
  const Node* sole_consumer(ValueId v) const;
  NodeId node_id(const Node* n) const { return static_cast<NodeId>(n - g_.nodes().data()); }
  void absorb(const Node* n) {
    absorbed_.insert(node_id(n));
    lowered_[static_cast<size_t>(node_id(n))] = true;
  }
  /// True when the step being lowered may write over `v`'s bytes: they are
  /// a temporary, and every value living in them (`v` and its views) is no
  /// block output and is read by no node still to run but `reader`.
  bool dies_at(ValueId v, const Node* reader) const;

 private:
  Result<void> lower_all();
  Result<void> finish_outputs();
  /// Gives every temporary an arena offset by liveness (common/arena_layout.h):
  /// temporaries whose lives do not overlap share bytes, and an element-wise
  /// or binary step writes over a source that dies there. Run last.
  Result<void> place_temps();

  const Graph& g_;
  std::vector<PValue> values_;
  std::vector<bool> defined_;
  std::vector<std::optional<Tensor>> host_;
  std::vector<bool> empty_;  // per value: set_empty
  std::vector<int> consumers_;
  std::vector<const Node*> last_consumer_;
  std::vector<std::vector<const Node*>> readers_;  // per value
  std::vector<bool> lowered_;                      // per node: its step is placed
  std::vector<bool> is_output_;
  std::set<NodeId> absorbed_;
  std::map<ValueId, ops::CountedOutput> counted_;  // set_counted
  std::map<ValueId, size_t> sized_;                // set_counted_dims
  bool prefer_blocked16_ = false;
  bool layout_trials_ = true;
  std::optional<bool> winograd_;
  TimedChoices* choices_ = nullptr;
  bool bf16_ = false;
  std::set<std::string> fp32_nodes_;
  bool lowering_fp32_ = false;  // the node being lowered is in fp32_nodes_
  bool has_depthwise_ = false;
  bool has_winograd_conv_ = false;
  bool has_channel_concat_ = false;
  std::shared_ptr<Plan> plan_;
};

/// One node (and whatever it fuses) into `b`. Defined in lower_*.cpp.
[[nodiscard]] Result<void> lower_node(PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_dense(PlanBuilder& b, const Node& n);   // Conv, Gemm, MatMul
[[nodiscard]] Result<void> lower_simple(PlanBuilder& b, const Node& n);  // everything else
/// Reshape, Squeeze, Unsqueeze, Flatten, Identity, Transpose, Concat, Slice,
/// Split, Pad (lower_simple hands them on).
[[nodiscard]] Result<void> lower_shape(PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_rnn(PlanBuilder& b, const Node& n);       // LSTM, GRU, RNN
[[nodiscard]] Result<void> lower_resample(PlanBuilder& b, const Node& n);  // Resize, ConvTranspose
/// Gather and Expand, indices and shape known when the plan is built (lower_index.cpp).
[[nodiscard]] Result<void> lower_gather(PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_expand(PlanBuilder& b, const Node& n);
/// hone's own steps (own_steps.cpp), for what oneDNN 2.6 has no primitive
/// for: Gather by indices read at run time, Where, Cast.
[[nodiscard]] Result<void> lower_gather_at_run_time(PlanBuilder& b, const Node& n);
/// A node reading an empty value (a zero-sized dim at plan time): its
/// outputs computed now, or found empty too, or joined without the empty
/// parts; no primitive sees a zero dim (lower_empty.cpp says why).
bool reads_empty(const PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_empty(PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_where(PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_cast(PlanBuilder& b, const Node& n);
/// What oneDNN 2.6 has no primitive for beyond those (lower_misc.cpp): math
/// such as Sin/Cos/Floor and the unary formulas no eltwise algorithm
/// computes, integer Add/Sub/Mul, ArgMax/ArgMin, TopK, DepthToSpace and
/// SpaceToDepth. misc_why_not: nothing when `n` is none of them, else why
/// not ("" when it is claimed); lowers_misc: lower_misc takes `n`.
bool is_misc_op(const std::string& op);
std::optional<std::string> misc_why_not(const Graph& g, const Node& n);
bool lowers_misc(const PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_misc(PlanBuilder& b, const Node& n);
/// Whether those steps read input `input` of `n` as integers (ArgMax's data,
/// integer arithmetic's operands, TopK's K, every input of GatherND and of an
/// integer Concat: own_index.cpp).
bool reads_integers(const Node& n, size_t input);
/// Visits the elements of `out` in row-major order, each with the offsets of
/// N operands read through their broadcast strides (ops::broadcast_strides:
/// 0 along the axes an operand is broadcast on): f(i, offsets), offsets a
/// std::array<int64_t, N>. Own steps' loop over broadcast operands.
template <size_t N, class F>
void for_each_broadcast(const dims_t& out, const std::array<std::vector<int64_t>, N>& strides,
                        F&& f) {
  const size_t rank = out.size();
  std::array<int64_t, N> at{};  // the operands' offsets at the current row's start
  if (rank == 0) {
    f(int64_t{0}, at);
    return;
  }
  const int64_t n = out[rank - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= out[d];
  std::vector<int64_t> pos(rank, 0);  // the odometer over the outer axes
  for (int64_t r = 0; r < rows; ++r) {
    std::array<int64_t, N> off = at;
    for (int64_t k = 0; k < n; ++k) {
      f(r * n + k, off);
      for (size_t j = 0; j < N; ++j) off[j] += strides[j][rank - 1];
    }
    for (size_t d = rank - 1; d-- > 0;) {  // next row: carry through the outer axes
      for (size_t j = 0; j < N; ++j) at[j] += strides[j][d];
      if (++pos[d] < out[d]) break;
      for (size_t j = 0; j < N; ++j) at[j] -= strides[j][d] * out[d];
      pos[d] = 0;
    }
  }
}

/// `v`'s dims: its PValue's, or its plan-time value's (an own step's operand).
dims_t value_dims(const PlanBuilder& b, ValueId v);
/// Each (k, rank) of `sized` (Plan::sized_outputs) in `outs` made its real
/// dims, read from the last rank i64 of its bytes (own_moves.cpp).
[[nodiscard]] Result<void> unpack_sized(std::vector<Tensor>& outs,
                                        const std::vector<std::pair<size_t, size_t>>& sized);
/// A new plain temporary for an own step's result of `dims` and `dtype`
/// (f32 as plain_md, any other dtype as plain bytes).
BufferRef new_plain_value(PlanBuilder& b, const dims_t& dims, DType dtype);
/// An own step copying `nbytes` of `src` (plain) into a new temporary: a
/// block output that is a view of an input or of a constant.
BufferRef copy_bytes(PlanBuilder& b, const BufferRef& src, size_t nbytes);
/// kUnsupported when `n` is lowered to primitives but reads a value that is
/// not f32 (a graph without inferred dtypes: supports() let it through), so
/// the block runs on the reference instead of a primitive reading bytes.
[[nodiscard]] Result<void> check_f32_reads(const PlanBuilder& b, const Node& n);
/// Whether block input `in` of `g` (an integer or bool tensor) can be read
/// at run time: every node reading it, and whatever reads their integer
/// outputs in turn, is an own step or a view (Gather's indices, Where, Cast,
/// Reshape/Squeeze/Unsqueeze/Flatten/Identity data, Shape, Size). Otherwise
/// its values are needed when the plan is built (a Reshape's target).
bool read_at_run_time(const Graph& g, ValueId in);

/// Maps an ONNX activation node to a oneDNN eltwise algorithm; false when it is not one.
struct EltwiseSpec {
  dnnl::algorithm alg = dnnl::algorithm::undef;
  float alpha = 0, beta = 0;
  // HardSigmoid needs a second stage (clip to [0, 1]).
  bool then_clip01 = false;
};
bool eltwise_spec(const PlanBuilder& b, const Node& n, EltwiseSpec* out);

/// Left-pads `dims` with ones to `rank`.
dims_t pad_left(const dims_t& dims, size_t rank);

// Shared by lower_simple.cpp and lower_shape.cpp (defined in lower_simple.cpp).
/// The non-plain layouts a conv leaves its output in, by rank.
std::vector<dnnl::memory::format_tag> native_tags(size_t rank);
/// `axis` normalised for `rank`; supports() has checked it (ops/axis.h maps it).
int64_t normalize_axis(int64_t axis, size_t rank);
/// `d` as two dims: the product of those before `axis`, of those from it on.
dims_t split2(const dims_t& d, int64_t axis);

// Values seen through other dims without a copy (views.cpp).
/// `n`'s output is its input's bytes under new dims (Reshape, Flatten,
/// Squeeze, ...): a view of the input where it lives when oneDNN can express
/// one (a channels-last value whose channels split in two), else one reorder
/// into a layout that keeps the input's order of axes and makes it one.
void alias(PlanBuilder& b, const Node& n, dims_t dims);
/// `v` where it lives when that layout is strided without inner blocks
/// (plain, or a conv's channels-last output), else its plain copy.
BufferRef strided_source(PlanBuilder& b, ValueId v);
/// The dense layout of `dims` whose axes lie in memory in the order of
/// `like`'s strides (a strided layout of the same rank).
md_t dense_like(const md_t& like, const dims_t& dims);
/// Whether `md` is a layout every primitive has its fast kernels for: plain,
/// one of native_tags(), or a blocked one whose outer axes keep their order.
/// A view in another order (a transposed or reshaped value) may get a
/// reference kernel from some (pooling, batch norm, resampling read plain).
bool is_usual_layout(const md_t& md);
/// `v` in its layout when it is a usual one, else plain.
BufferRef usual(PlanBuilder& b, ValueId v);
/// Whether two layouts of the same dims and type put every element at the
/// same offset, so one is a view of the other: strided ones that differ only
/// in the strides of dims of size 1 (nhwc and nchw of a 1x1 pooled tensor),
/// or small unpadded ones compared element by element (nChw16c and nchw of
/// [1,C,1,1] with C a multiple of 16: a squeeze-excitation's pooled values).
bool same_bytes(const md_t& a, const md_t& b);

}  // namespace hone::onednn

namespace hone::onednn {

/// Output size and oneDNN paddings of one sliding-window op (Conv, pools).
struct Window {
  dims_t out, pad_l, pad_r;
};
/// The window of `n` (ops::make_window) over the spatial input dims `in`, in
/// oneDNN's terms (ceil_mode widens the right padding).
[[nodiscard]] Result<Window> sliding_window(const Node& n, const dims_t& in, const dims_t& kernel,
                                            bool ceil_mode);

}  // namespace hone::onednn
