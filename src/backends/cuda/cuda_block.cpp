#include "backends/cuda/cuda_block.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "backends/cuda/kernels.h"
#include "core/log.h"
#include "ops/nonzero.h"

namespace hone::cuda {
namespace {

// HONE_CUDA_PROFILE=1: each step timed with events and logged (debug), no
// CUDA graph, and the input and output copies timed on the host; for finding
// where a model's time goes, not for timing it.
bool profiling() {
  static const bool profile = std::getenv("HONE_CUDA_PROFILE") != nullptr;
  return profile;
}

using Clock = std::chrono::steady_clock;

/// A unit kept in fp32 (mixed precision): its op, made with f32 settings,
/// offers no half-precision plan, so under half activations its inputs are
/// converted to f32 and its outputs are f32 (storage.h), the conversions
/// naming why.
class KeptInFp32 final : public Op {
 public:
  explicit KeptInFp32(std::unique_ptr<Op> op) : op_(std::move(op)) {}
  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    HONE_TRY(OpPlan p, op_->plan(in, env));
    p.f32_because = "kept in fp32 (fp32_nodes)";
    return p;
  }

 private:
  std::unique_ptr<Op> op_;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

CudaBlock::CudaBlock(std::shared_ptr<const Graph> g, const Driver& d, const Module& fixed,
                     std::shared_ptr<Stats> stats, std::shared_ptr<StreamPool> pool,
                     BuildSettings conv)
    : BlockRuntime("cuda", std::move(g), &stats->fallback_runs),
      d_(d),
      fixed_(fixed),
      stats_(std::move(stats)),
      pool_(std::move(pool)),
      settings_(std::move(conv)) {}

Result<void> CudaBlock::init() {
  const Graph& g = graph();
  BlockInfo info(g);
  info.chains = std::make_shared<ChainModule>();
  info.settings = settings_;
  if (settings_.attention != AttentionSelect::kUnfused) find_attention_units(info);
  // Mixed precision: a unit with a member named in fp32_nodes is made with
  // f32 settings. Its first node decides before it is made; a unit whose
  // fusion took in such a node is made again with them, from the same state.
  // (do_build sets fp32_nodes only when it names some.)
  const auto& keep = settings_.fp32_nodes;
  const auto kept = [&](NodeId id) { return keep && keep->contains(g.node(id).name); };
  const BuildSettings f32 = keep ? settings_.f32_math() : settings_;
  auto create = [&](NodeId id, const Node& n, std::vector<NodeId>* absorbed) -> Result<Unit> {
    if (!keep) return create_unit(info, n, absorbed);
    const std::vector<bool> used = info.used;
    if (!kept(id)) {
      HONE_TRY(Unit u, create_unit(info, n, absorbed));
      if (std::none_of(absorbed->begin(), absorbed->end(), kept)) return u;
      info.used = used;
      absorbed->clear();
    }
    info.settings = f32;
    auto u = create_unit(info, n, absorbed);
    info.settings = settings_;
    if (!u) return u;
    u->op = std::make_unique<KeptInFp32>(std::move(u->op));
    u->label += " [fp32]";
    return u;
  };
  HONE_TRY(units_,
           place_units<Unit>(g, [&](NodeId id, const Node& n, std::vector<NodeId>* absorbed) {
             info.used[static_cast<size_t>(id)] = true;
             return create(id, n, absorbed);
           }));
  if (!info.chains->source.empty()) {
    HONE_TRY(Module m, Module::compile(d_, ew_prelude() + info.chains->source, "hone_chains"));
    info.chains->module = std::make_unique<Module>(std::move(m));
  }
  // Weights and other constants go to the device once, here.
  auto upload = [&](ValueId v) -> Result<void> {
    const Value& val = g.value(v);
    // Any dtype: i64 Gather indices travel as they are; bools (Where's
    // condition) as 0/1 floats, the only form device kernels read.
    if (!val.initializer || constants_.count(v)) return {};
    const Tensor& t = *val.initializer;
    const Tensor as_f32 = t.dtype() == DType::kBool ? bools_as_floats(t) : Tensor();
    const Tensor& up = t.dtype() == DType::kBool ? as_f32 : t;
    HONE_TRY(DeviceBuffer buf, DeviceBuffer::upload(d_, up.raw(), up.nbytes()));
    constants_.emplace(v, std::move(buf));
    return {};
  };
  for (const Unit& u : units_)
    for (ValueId v : u.inputs) HONE_CHECK_OK(upload(v));
  for (ValueId v : g.outputs()) HONE_CHECK_OK(upload(v));
  if (settings_.math.half != 0) {
    // bf16/fp16: each constant weight of a matrix product (Gemm/MatMul B,
    // Conv W) also gets its reduced copy, converted once here.
    for (const Node& n : g.nodes()) {
      if ((n.op_type != "Gemm" && n.op_type != "MatMul" && n.op_type != "Conv") ||
          n.inputs.size() < 2 || n.inputs[1] < 0 || (keep && keep->contains(n.name)))
        continue;
      const ValueId v = n.inputs[1];
      const Value& val = g.value(v);
      if (!val.initializer || val.initializer->dtype() != DType::kF32 || half_constants_.count(v) ||
          val.initializer->numel() == 0)
        continue;
      const Tensor& t = *val.initializer;
      HONE_TRY(DeviceBuffer buf, upload_half(d_, t.data<float>(), static_cast<size_t>(t.numel()),
                                             settings_.math.half));
      half_constants_.emplace(v, std::move(buf));
    }
  }
  return {};
}

DType input_dtype(DType declared) {
  const bool kept = declared == DType::kI64 || declared == DType::kI32 || declared == DType::kBool;
  return kept ? declared : DType::kF32;
}

std::optional<ShapeSignature> CudaBlock::key_of(const std::vector<Tensor>& inputs) const {
  const Graph& g = graph();
  if (inputs.size() != g.inputs().size()) return std::nullopt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType want = input_dtype(g.value(g.inputs()[i]).dtype);
    if (inputs[i].dtype() != want) {
      HONE_LOG_DEBUG("cuda: block '{}' runs on the reference: input '{}' is {}, its slot {}",
                     g.name(), g.value(g.inputs()[i]).name, dtype_name(inputs[i].dtype()),
                     dtype_name(want));
      return std::nullopt;
    }
  }
  return signature_of(inputs);
}

Result<std::vector<Tensor>> CudaBlock::run(const std::vector<Tensor>& inputs) const {
  HONE_CHECK_OK(d_.make_current());
  return BlockRuntime::run(inputs);
}

Result<std::vector<Tensor>> CudaBlock::execute(const Program& program,
                                               const std::vector<Tensor>& inputs) const {
  auto ex = pool_->take();
  if (!ex)
    return fail(
        std::move(ex).error().add_context("while running cuda block '" + graph().name() + "'"));
  auto out = execute_on(program, **ex, inputs);
  if (!out)
    return fail(
        std::move(out).error().add_context("while running cuda block '" + graph().name() + "'"));
  // Only a stream that succeeded goes back: a failed one is dropped.
  pool_->give(std::move(*ex));
  stats_->kernel_executions.fetch_add(program.launches, std::memory_order_relaxed);
  return out;
}

Result<void> CudaBlock::ensure_arena(const Program& program, StreamPool::Exec& ex) const {
  if (ex.arena.bytes() < program.arena_bytes) {
    // Work still queued on the stream (a device-resident run returns before
    // it is done) reads the old arena: let it finish before the arena goes.
    HONE_CHECK_OK(d_.check(d_.api().cuStreamSynchronize(ex.stream.get()), "cuStreamSynchronize"));
    ex.graphs.clear();  // they point into the old arena
    ex.ran.clear();
    ex.arena = DeviceBuffer();  // free first: the old and new need not fit together
    HONE_TRY(ex.arena, DeviceBuffer::allocate(d_, program.arena_bytes));
  }
  return {};
}

Result<std::vector<Tensor>> CudaBlock::execute_on(const Program& program, StreamPool::Exec& ex,
                                                  const std::vector<Tensor>& inputs) const {
  HONE_CHECK_OK(ensure_arena(program, ex));
  HONE_CHECK_OK(upload_inputs(program, ex, inputs));
  const ExecCtx ctx{
      d_, fixed_, ex.stream.get(), ex.stream.blas(), ex.stream.dnn(), ex.errors.word()};
  HONE_CHECK_OK(launch_steps(program, ex, ctx));
  return download_outputs(program, ex);
}

Result<void> CudaBlock::upload_inputs(const Program& program, StreamPool::Exec& ex,
                                      const std::vector<Tensor>& inputs) const {
  const CUstream s = ex.stream.get();
  const CUdeviceptr base = ex.arena.ptr();
  const Api& a = d_.api();
  // Inputs go through the stream's pinned staging buffer, which the last
  // run on this stream has finished with (it ended with a synchronize).
  const auto copy_start = Clock::now();
  size_t in_bytes = 0;
  for (const Tensor& t : inputs) in_bytes += t.nbytes();
  if (ex.staging.bytes() < in_bytes) {
    ex.staging = PinnedBuffer();
    HONE_TRY(ex.staging, PinnedBuffer::allocate(d_, in_bytes));
  }
  for (size_t i = 0, off = 0; i < inputs.size(); off += inputs[i].nbytes(), ++i) {
    const Tensor& t = inputs[i];
    if (t.nbytes() == 0) continue;
    // The slot holds the dtype the plan was made for: other bytes would
    // spill into the next slot.
    if (const DType want = program.slots[program.input_slots[i]].dtype; t.dtype() != want)
      return fail(ErrorCode::kInvalidArgument,
                  "input " + std::to_string(i) + " is " + std::string(dtype_name(t.dtype())) +
                      "; this cuda block was planned for " + std::string(dtype_name(want)));
    const CUdeviceptr dst = program.address(program.input_slots[i], base);
    // Page-locked inputs (allocate_host()) go in one DMA, no staging copy.
    if (t.nbytes() >= (size_t{1} << 20) && is_pinned(d_, t.raw(), t.nbytes()))
      HONE_CHECK_OK(
          d_.check(a.cuMemcpyHtoDAsync(dst, t.raw(), t.nbytes(), s), "cuMemcpyHtoDAsync"));
    else
      HONE_CHECK_OK(upload(d_, s, ex.staging, off, dst, t.raw(), t.nbytes()));
    stats_->count_h2d(t.nbytes());
  }
  if (profiling()) {
    HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
    HONE_LOG_DEBUG("cuda profile io: upload of {} bytes {:.3f} ms", in_bytes, ms_since(copy_start));
  }
  return {};
}

Result<void> CudaBlock::run_steps(const Program& program, const ExecCtx& ctx,
                                  CUdeviceptr base) const {
  for (size_t k = 0; k < program.steps.size(); ++k) {
    const Program::Step& st = program.steps[k];
    if (!st.op.run) continue;
    HONE_CHECK_OK_CTX(st.op.run(ctx, program.bind(k, base)),
                      "while running " + st.label + " [" + st.op.kernel + "]");
  }
  return {};
}

Result<void> CudaBlock::launch_steps(const Program& program, StreamPool::Exec& ex,
                                     const ExecCtx& ctx) const {
  const CUstream s = ctx.stream;
  const CUdeviceptr base = ex.arena.ptr();
  const Api& a = d_.api();
  bool replayed = false;
  HONE_CHECK_OK(d_.check(a.cuEventRecord(ex.steps.begin(), s), "cuEventRecord"));
  if (profiling()) {
    HONE_CHECK_OK(profile_steps(program, ctx, base));
    replayed = true;
  }
  if (!replayed && pool_->graphs && !program.no_graph.load(std::memory_order_relaxed)) {
    auto it = ex.graphs.find(&program);
    if (it == ex.graphs.end() && !ex.ran.insert(&program).second) {
      // The second run of this signature on this stream: capture it (the
      // first ran plainly, keeping cuBLAS's lazy set-up out of the graph).
      HONE_CHECK_OK(GraphExec::begin(d_, s));
      auto captured = run_steps(program, ctx, base);
      auto graph = GraphExec::end(d_, s);  // ends the capture even after a failed step
      if (captured && graph) {
        it = ex.graphs.emplace(&program, std::move(*graph)).first;
      } else {
        program.no_graph.store(true, std::memory_order_relaxed);
        HONE_LOG_DEBUG("cuda: block '{}' runs without a CUDA graph: {}", this->graph().name(),
                       (captured ? graph.error() : captured.error()).to_string());
      }
    }
    if (it != ex.graphs.end()) {
      HONE_CHECK_OK(it->second.launch(s));
      replayed = true;
    }
  }
  if (!replayed) HONE_CHECK_OK(run_steps(program, ctx, base));
  HONE_CHECK_OK(d_.check(a.cuEventRecord(ex.steps.end(), s), "cuEventRecord"));
  return {};
}

Result<std::vector<Tensor>> CudaBlock::download_outputs(const Program& program,
                                                        StreamPool::Exec& ex) const {
  const CUstream s = ex.stream.get();
  const CUdeviceptr base = ex.arena.ptr();
  const Api& a = d_.api();
  // Outputs of 1 MiB or more in page-locked blocks (PinnedPool): one DMA
  // each. Others, and all where page-locked memory is refused, in ordinary
  // memory; together 4 MiB or more of those go through the stream's pinned
  // staging buffer and a parallel copy out of it.
  std::vector<Tensor> outputs;
  std::vector<char> direct(program.output_slots.size(), 0);
  size_t out_bytes = 0, unpinned_bytes = 0;
  for (size_t i = 0; i < program.output_slots.size(); ++i) {
    const Program::Slot& sl = program.slots[program.output_slots[i]];
    if (sl.host) {  // computed on the host when built: no copy
      outputs.push_back(sl.host->clone());
      continue;
    }
    HONE_TRY(const size_t nb, Tensor::bytes_for(sl.dtype, sl.dims));
    Tensor t;
    if (nb >= (size_t{1} << 20) && pool_->pinned_outputs.load(std::memory_order_relaxed)) {
      if (auto pt = PinnedPool::tensor(d_, sl.dtype, sl.dims)) {
        t = std::move(*pt);
        direct[i] = 1;
      } else {
        pool_->pinned_outputs.store(false, std::memory_order_relaxed);
        HONE_LOG_DEBUG("cuda: outputs in ordinary memory from now on: {}", pt.error().message());
      }
    }
    if (!direct[i]) {
      HONE_TRY(t, Tensor::allocate(sl.dtype, sl.dims));
      unpinned_bytes += nb;
    }
    out_bytes += nb;
    outputs.push_back(std::move(t));
  }
  if (profiling()) HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
  const auto download_start = Clock::now();
  const bool staged = unpinned_bytes >= (size_t{4} << 20);
  if (staged && ex.out_staging.bytes() < unpinned_bytes) {
    ex.out_staging = PinnedBuffer();
    HONE_TRY(ex.out_staging, PinnedBuffer::allocate(d_, unpinned_bytes));
  }
  for (size_t i = 0, off = 0; i < program.output_slots.size(); ++i) {
    const size_t slot = program.output_slots[i];
    Tensor& t = outputs[i];
    if (program.slots[slot].host || t.nbytes() == 0) continue;
    void* dst = t.raw();
    if (!direct[i] && staged) {
      dst = ex.out_staging.data() + off;
      off += t.nbytes();
    }
    HONE_CHECK_OK(d_.check(a.cuMemcpyDtoHAsync(dst, program.address(slot, base), t.nbytes(), s),
                           "cuMemcpyDtoHAsync"));
    stats_->count_d2h(t.nbytes());
  }
  // The run's error word comes back with the outputs (8 bytes, ordered after every step).
  HONE_CHECK_OK(ex.errors.enqueue_read(d_, s));
  // Kernel faults surface here; a failed stream is dropped, not pooled.
  HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
  HONE_CHECK_OK(ex.errors.check(d_, s, program));  // an index out of range, naming its node
  float steps_ms = 0.0f;
  if (d_.check(a.cuEventElapsedTime(&steps_ms, ex.steps.begin(), ex.steps.end()),
               "cuEventElapsedTime"))
    stats_->device_ns.fetch_add(static_cast<uint64_t>(static_cast<double>(steps_ms) * 1e6),
                                std::memory_order_relaxed);
  if (staged)
    for (size_t i = 0, off = 0; i < program.output_slots.size(); ++i) {
      Tensor& t = outputs[i];
      if (program.slots[program.output_slots[i]].host || t.nbytes() == 0 || direct[i]) continue;
      parallel_copy(t.raw(), ex.out_staging.data() + off, t.nbytes());
      off += t.nbytes();
    }
  if (profiling())
    HONE_LOG_DEBUG("cuda profile io: download of {} bytes {:.3f} ms", out_bytes,
                   ms_since(download_start));
  // A NonZero's or NonMaxSuppression's output: its length came back as its last element.
  HONE_CHECK_OK(ops::unpack_counted(outputs, program.counted_outputs));
  return outputs;
}

Result<void> CudaBlock::profile_steps(const Program& program, const ExecCtx& ctx,
                                      CUdeviceptr base) const {
  const Api& a = d_.api();
  const CUstream s = ctx.stream;
  std::vector<CUevent> ev(program.steps.size() + 1, nullptr);
  for (CUevent& e : ev) HONE_CHECK_OK(d_.check(a.cuEventCreate(&e, 0), "cuEventCreate"));
  Result<void> r;
  for (size_t k = 0; k < program.steps.size() && r; ++k) {
    r = d_.check(a.cuEventRecord(ev[k], s), "cuEventRecord");
    const Program::Step& st = program.steps[k];
    if (!r || !st.op.run) continue;
    r = st.op.run(ctx, program.bind(k, base));
  }
  if (r) r = d_.check(a.cuEventRecord(ev.back(), s), "cuEventRecord");
  if (r) r = d_.check(a.cuEventSynchronize(ev.back()), "cuEventSynchronize");
  for (size_t k = 0; r && k < program.steps.size(); ++k) {
    float ms = 0;
    (void)a.cuEventElapsedTime(&ms, ev[k], ev[k + 1]);
    HONE_LOG_DEBUG("cuda profile: {:.4f} ms {} [{}]", ms, program.steps[k].label,
                   program.steps[k].op.kernel);
  }
  for (CUevent e : ev) (void)a.cuEventDestroy(e);
  return r;
}

}  // namespace hone::cuda
