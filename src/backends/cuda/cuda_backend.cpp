#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "backends/common/capabilities.h"
#include "backends/common/static_dims.h"
#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cudnn_api.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/op.h"
#include "core/log.h"
#include "hone/registry.h"

namespace hone::cuda {

/// Two timing events on one stream: the device time between them.
class EventPair {
 public:
  static Result<EventPair> create(const Driver& d) {
    EventPair p;
    p.d_ = &d;
    HONE_CHECK_OK(d.check(d.api().cuEventCreate(&p.begin_, 0), "cuEventCreate"));
    HONE_CHECK_OK(d.check(d.api().cuEventCreate(&p.end_, 0), "cuEventCreate"));
    return p;
  }
  EventPair() = default;
  EventPair(EventPair&& o) noexcept { swap(o); }
  EventPair& operator=(EventPair&& o) noexcept {
    EventPair t(std::move(o));
    swap(t);
    return *this;
  }
  ~EventPair() {
    if (begin_ == nullptr && end_ == nullptr) return;
    (void)d_->make_current();
    for (CUevent e : {begin_, end_})
      if (e != nullptr) (void)d_->api().cuEventDestroy(e);
  }
  CUevent begin() const { return begin_; }
  CUevent end() const { return end_; }

 private:
  void swap(EventPair& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(begin_, o.begin_);
    std::swap(end_, o.end_);
  }
  const Driver* d_ = nullptr;
  CUevent begin_ = nullptr, end_ = nullptr;
};

/// Streams (each with its cuBLAS handle and a device arena) for inferences:
/// a call takes one, uses it alone, and gives it back when it succeeded.
struct StreamPool {
  struct Exec {
    Stream stream;
    DeviceBuffer arena;
    // CUDA graphs of the plans this stream ran, keyed by plan (plans live as
    // long as their block, and a build makes a new pool); captured on a
    // plan's second run here, dropped when the arena moves.
    std::map<const void*, GraphExec> graphs;
    std::set<const void*> ran;
    PinnedBuffer staging;      // large inputs pass through here (upload())
    PinnedBuffer out_staging;  // large outputs are downloaded here (parallel_copy())
    EventPair steps;           // around the steps: their device time
  };
  const Driver* d = nullptr;
  int math_mode = kCublasDefaultMath;      // every handle of the pool, from the precision setting
  const Cudnn* dnn = nullptr;              // every stream gets a cuDNN handle when set
  bool graphs = true;                      // the cuda_graphs setting
  std::atomic<bool> pinned_outputs{true};  // false once page-locked memory was refused
  std::mutex mu;
  std::vector<std::unique_ptr<Exec>> idle;

  Result<std::unique_ptr<Exec>> take() {
    {
      std::lock_guard lock(mu);
      if (!idle.empty()) {
        auto e = std::move(idle.back());
        idle.pop_back();
        return e;
      }
    }
    HONE_TRY(Stream s, Stream::create(*d, math_mode, dnn));
    HONE_TRY(EventPair ev, EventPair::create(*d));
    return std::make_unique<Exec>(
        Exec{std::move(s), DeviceBuffer(), {}, {}, PinnedBuffer(), PinnedBuffer(), std::move(ev)});
  }
  void give(std::unique_ptr<Exec> e) {
    std::lock_guard lock(mu);
    idle.push_back(std::move(e));
  }
};

namespace {

using Signature = ShapeSignature;

struct Plan {
  struct Slot {
    bool constant = false;
    size_t offset = 0;     // into the arena, unless constant
    CUdeviceptr cptr = 0;  // constant (an initializer, or a host value uploaded for this plan)
    CUdeviceptr half = 0;  // its bf16/f16 copy (a matrix-product weight under bf16/fp16)
    dims_t dims;
    DType dtype = DType::kF32;
    std::shared_ptr<const Tensor> host;  // a value computed on the host at plan time
    bool dims_only = false;              // OpPlan::dims_only: no bytes, only dims for Shape nodes
  };
  struct Step {
    OpPlan op;
    std::vector<size_t> in, out;
  };
  std::vector<Slot> slots;
  std::vector<size_t> input_slots, output_slots;
  std::vector<Step> steps;
  size_t arena_bytes = 0, workspace_offset = 0;
  std::vector<DeviceBuffer> uploads;          // host values device ops read, copied once per plan
  size_t launches = 0;                        // steps that enqueue work
  mutable std::atomic<bool> no_graph{false};  // a capture failed: run its steps one by one
};

class CudaBlock final : public CompiledBlock {
 public:
  CudaBlock(std::shared_ptr<const Graph> g, const Driver& d, const Module& fixed,
            std::shared_ptr<Stats> stats, std::shared_ptr<StreamPool> pool, ConvSettings conv)
      : graph_(std::move(g)),
        d_(d),
        fixed_(fixed),
        stats_(std::move(stats)),
        pool_(std::move(pool)),
        conv_(std::move(conv)) {}

  /// Creates the units, compiles the block's chains, uploads its constants.
  Result<void> init() {
    const Graph& g = *graph_;
    BlockInfo info(g);
    info.chains = std::make_shared<ChainModule>();
    info.conv = conv_;
    if (conv_.attention_select != AttentionSelect::kUnfused) find_attention_units(info);
    HONE_TRY(units_,
             place_units<Unit>(g, [&](NodeId id, const Node& n, std::vector<NodeId>* absorbed) {
               info.used[static_cast<size_t>(id)] = true;
               return create_unit(info, n, absorbed);
             }));
    if (!info.chains->source.empty()) {
      HONE_TRY(Module m, Module::compile(d_, ew_prelude() + info.chains->source, "hone_chains"));
      info.chains->module = std::make_unique<Module>(std::move(m));
    }
    // Weights and other constants go to the device once, here.
    auto upload = [&](ValueId v) -> Result<void> {
      const Value& val = g.value(v);
      // Any dtype: i64 Gather indices travel as they are.
      if (!val.initializer || constants_.count(v)) return {};
      HONE_TRY(DeviceBuffer buf,
               DeviceBuffer::upload(d_, val.initializer->raw(), val.initializer->nbytes()));
      constants_.emplace(v, std::move(buf));
      return {};
    };
    for (const Unit& u : units_)
      for (ValueId v : u.inputs) HONE_CHECK_OK(upload(v));
    for (ValueId v : g.outputs()) HONE_CHECK_OK(upload(v));
    if (conv_.gemm_half != 0) {
      // bf16/fp16: each constant weight of a matrix product (Gemm/MatMul B,
      // Conv W) also gets its reduced copy, converted once here.
      for (const Node& n : g.nodes()) {
        if ((n.op_type != "Gemm" && n.op_type != "MatMul" && n.op_type != "Conv") ||
            n.inputs.size() < 2 || n.inputs[1] < 0)
          continue;
        const ValueId v = n.inputs[1];
        const Value& val = g.value(v);
        if (!val.initializer || val.initializer->dtype() != DType::kF32 ||
            half_constants_.count(v) || val.initializer->numel() == 0)
          continue;
        const Tensor& t = *val.initializer;
        HONE_TRY(DeviceBuffer buf,
                 upload_half(d_, t.data<float>(), static_cast<size_t>(t.numel()), conv_.gemm_half));
        half_constants_.emplace(v, std::move(buf));
      }
    }
    return {};
  }

  void prepare(const Signature& sig) {
    std::lock_guard lock(mu_);
    (void)plan_locked(sig);  // a failure is logged; that signature runs on the reference
  }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    const Signature sig = signature_of(inputs);
    // Planning looks up kernels in modules: the context must be current on
    // this thread before that, not only for the launches.
    HONE_CHECK_OK(d_.make_current());
    std::shared_ptr<const Plan> plan;
    if (all_f32(inputs)) {
      std::lock_guard lock(mu_);
      if (auto p = plan_locked(sig)) plan = *p;
    }
    if (!plan) {
      stats_->fallback_runs.fetch_add(1, std::memory_order_relaxed);
      return fallback_.run_tensors(*graph_, inputs);
    }
    auto out = execute(*plan, inputs);
    if (!out)
      return fail(
          std::move(out).error().add_context("while running cuda block '" + graph_->name() + "'"));
    return out;
  }

 private:
  Result<std::vector<Tensor>> execute(const Plan& plan, const std::vector<Tensor>& inputs) const {
    HONE_TRY(std::unique_ptr<StreamPool::Exec> ex, pool_->take());
    if (ex->arena.bytes() < plan.arena_bytes) {
      ex->graphs.clear();  // they point into the old arena
      ex->ran.clear();
      ex->arena = DeviceBuffer();  // free first: the old and new need not fit together
      HONE_TRY(ex->arena, DeviceBuffer::allocate(d_, plan.arena_bytes));
    }
    const CUstream s = ex->stream.get();
    const CUdeviceptr base = ex->arena.ptr();
    auto ptr = [&](size_t slot) {
      const Plan::Slot& sl = plan.slots[slot];
      return sl.constant ? sl.cptr : base + sl.offset;
    };
    const Api& a = d_.api();
    // Inputs go through the stream's pinned staging buffer, which the last
    // run on this stream has finished with (it ended with a synchronize).
    // HONE_CUDA_PROFILE=1: each step timed with events and logged (debug),
    // no CUDA graph, and the input and output copies timed on the host; for
    // finding where a model's time goes, not for timing it.
    static const bool profile = std::getenv("HONE_CUDA_PROFILE") != nullptr;
    using Clock = std::chrono::steady_clock;
    const auto copy_start = Clock::now();
    size_t in_bytes = 0;
    for (const Tensor& t : inputs) in_bytes += t.nbytes();
    if (ex->staging.bytes() < in_bytes) {
      ex->staging = PinnedBuffer();
      HONE_TRY(ex->staging, PinnedBuffer::allocate(d_, in_bytes));
    }
    for (size_t i = 0, off = 0; i < inputs.size(); off += inputs[i].nbytes(), ++i) {
      const Tensor& t = inputs[i];
      if (t.nbytes() == 0) continue;
      // Page-locked inputs (allocate_host()) go in one DMA, no staging copy.
      if (t.nbytes() >= (size_t{1} << 20) && is_pinned(d_, t.raw(), t.nbytes()))
        HONE_CHECK_OK(
            d_.check(a.cuMemcpyHtoDAsync(ptr(plan.input_slots[i]), t.raw(), t.nbytes(), s),
                     "cuMemcpyHtoDAsync"));
      else
        HONE_CHECK_OK(
            upload(d_, s, ex->staging, off, ptr(plan.input_slots[i]), t.raw(), t.nbytes()));
    }
    if (profile) {
      HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
      HONE_LOG_DEBUG("cuda profile io: upload of {} bytes {:.3f} ms", in_bytes,
                     std::chrono::duration<double, std::milli>(Clock::now() - copy_start).count());
    }
    const ExecCtx ctx{d_, fixed_, s, ex->stream.blas(), ex->stream.dnn()};
    auto run_steps = [&]() -> Result<void> {
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        const Plan::Step& st = plan.steps[k];
        if (!st.op.run) continue;
        Bind b;
        for (size_t in : st.in) {
          b.in.push_back(ptr(in));
          b.half.push_back(plan.slots[in].half);
        }
        for (size_t out : st.out) b.out.push_back(ptr(out));
        b.workspace = base + plan.workspace_offset;
        HONE_CHECK_OK_CTX(st.op.run(ctx, b),
                          "while running " + units_[k].label + " [" + st.op.kernel + "]");
      }
      return {};
    };
    bool replayed = false;
    HONE_CHECK_OK(d_.check(a.cuEventRecord(ex->steps.begin(), s), "cuEventRecord"));
    if (profile) {
      HONE_CHECK_OK(profile_steps(plan, s, ctx, ptr, base));
      replayed = true;
    }
    if (!replayed && pool_->graphs && !plan.no_graph.load(std::memory_order_relaxed)) {
      auto it = ex->graphs.find(&plan);
      if (it == ex->graphs.end() && !ex->ran.insert(&plan).second) {
        // The second run of this signature on this stream: capture it (the
        // first ran plainly, keeping cuBLAS's lazy set-up out of the graph).
        HONE_CHECK_OK(GraphExec::begin(d_, s));
        auto captured = run_steps();
        auto graph = GraphExec::end(d_, s);  // ends the capture even after a failed step
        if (captured && graph) {
          it = ex->graphs.emplace(&plan, std::move(*graph)).first;
        } else {
          plan.no_graph.store(true, std::memory_order_relaxed);
          HONE_LOG_DEBUG("cuda: block '{}' runs without a CUDA graph: {}", graph_->name(),
                         (captured ? graph.error() : captured.error()).to_string());
        }
      }
      if (it != ex->graphs.end()) {
        HONE_CHECK_OK(it->second.launch(s));
        replayed = true;
      }
    }
    if (!replayed) HONE_CHECK_OK(run_steps());
    HONE_CHECK_OK(d_.check(a.cuEventRecord(ex->steps.end(), s), "cuEventRecord"));
    const uint64_t launched = plan.launches;
    // Outputs of 1 MiB or more in page-locked blocks (PinnedPool): one DMA
    // each. Others, and all where page-locked memory is refused, in ordinary
    // memory; together 4 MiB or more of those go through the stream's pinned
    // staging buffer and a parallel copy out of it.
    std::vector<Tensor> outputs;
    std::vector<char> direct(plan.output_slots.size(), 0);
    size_t out_bytes = 0, unpinned_bytes = 0;
    for (size_t i = 0; i < plan.output_slots.size(); ++i) {
      const Plan::Slot& sl = plan.slots[plan.output_slots[i]];
      if (sl.host) {  // computed on the host when planned: no copy
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
    if (profile) HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
    const auto download_start = Clock::now();
    const bool staged = unpinned_bytes >= (size_t{4} << 20);
    if (staged && ex->out_staging.bytes() < unpinned_bytes) {
      ex->out_staging = PinnedBuffer();
      HONE_TRY(ex->out_staging, PinnedBuffer::allocate(d_, unpinned_bytes));
    }
    for (size_t i = 0, off = 0; i < plan.output_slots.size(); ++i) {
      const size_t slot = plan.output_slots[i];
      Tensor& t = outputs[i];
      if (plan.slots[slot].host || t.nbytes() == 0) continue;
      void* dst = t.raw();
      if (!direct[i] && staged) {
        dst = ex->out_staging.data() + off;
        off += t.nbytes();
      }
      HONE_CHECK_OK(
          d_.check(a.cuMemcpyDtoHAsync(dst, ptr(slot), t.nbytes(), s), "cuMemcpyDtoHAsync"));
    }
    // Kernel faults surface here; a failed stream is dropped, not pooled.
    HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
    float steps_ms = 0.0f;
    if (d_.check(a.cuEventElapsedTime(&steps_ms, ex->steps.begin(), ex->steps.end()),
                 "cuEventElapsedTime"))
      stats_->device_ns.fetch_add(static_cast<uint64_t>(static_cast<double>(steps_ms) * 1e6),
                                  std::memory_order_relaxed);
    if (staged)
      for (size_t i = 0, off = 0; i < plan.output_slots.size(); ++i) {
        Tensor& t = outputs[i];
        if (plan.slots[plan.output_slots[i]].host || t.nbytes() == 0 || direct[i]) continue;
        parallel_copy(t.raw(), ex->out_staging.data() + off, t.nbytes());
        off += t.nbytes();
      }
    if (profile)
      HONE_LOG_DEBUG(
          "cuda profile io: download of {} bytes {:.3f} ms", out_bytes,
          std::chrono::duration<double, std::milli>(Clock::now() - download_start).count());
    pool_->give(std::move(ex));
    stats_->kernel_executions.fetch_add(launched, std::memory_order_relaxed);
    return outputs;
  }

  template <class Ptr>
  Result<void> profile_steps(const Plan& plan, CUstream s, const ExecCtx& ctx, Ptr& ptr,
                             CUdeviceptr base) const {
    const Api& a = d_.api();
    std::vector<CUevent> ev(plan.steps.size() + 1, nullptr);
    for (CUevent& e : ev) HONE_CHECK_OK(d_.check(a.cuEventCreate(&e, 0), "cuEventCreate"));
    Result<void> r;
    for (size_t k = 0; k < plan.steps.size() && r; ++k) {
      r = d_.check(a.cuEventRecord(ev[k], s), "cuEventRecord");
      const Plan::Step& st = plan.steps[k];
      if (!r || !st.op.run) continue;
      Bind b;
      for (size_t in : st.in) {
        b.in.push_back(ptr(in));
        b.half.push_back(plan.slots[in].half);
      }
      for (size_t out : st.out) b.out.push_back(ptr(out));
      b.workspace = base + plan.workspace_offset;
      r = st.op.run(ctx, b);
    }
    if (r) r = d_.check(a.cuEventRecord(ev.back(), s), "cuEventRecord");
    if (r) r = d_.check(a.cuEventSynchronize(ev.back()), "cuEventSynchronize");
    for (size_t k = 0; r && k < plan.steps.size(); ++k) {
      float ms = 0;
      (void)a.cuEventElapsedTime(&ms, ev[k], ev[k + 1]);
      HONE_LOG_DEBUG("cuda profile: {:.4f} ms {} [{}]", ms, units_[k].label,
                     plan.steps[k].op.kernel);
    }
    for (CUevent e : ev) (void)a.cuEventDestroy(e);
    return r;
  }

  Result<std::shared_ptr<const Plan>> plan_locked(const Signature& sig) const {
    if (auto it = plans_.find(sig); it != plans_.end()) return it->second;
    if (auto it = failed_.find(sig); it != failed_.end()) return fail(it->second);
    auto plan = build_plan(sig);
    if (!plan) {
      HONE_LOG_DEBUG("cuda: block '{}' for {} runs on the reference: {}", graph_->name(),
                     signature_text(sig), plan.error().to_string());
      failed_.emplace(sig, plan.error());
      return fail(std::move(plan).error());
    }
    plans_.emplace(sig, *plan);
    return *plan;
  }

  Result<std::shared_ptr<const Plan>> build_plan(const Signature& sig) const {
    const Graph& g = *graph_;
    if (sig.size() != g.inputs().size())
      return fail(ErrorCode::kInvalidArgument, "block expects " +
                                                   std::to_string(g.inputs().size()) +
                                                   " inputs, got " + std::to_string(sig.size()));
    auto plan = std::make_shared<Plan>();
    std::map<ValueId, size_t> slot_of;
    auto new_slot = [&](const dims_t& dims) {
      plan->slots.push_back({false, plan->arena_bytes, 0, 0, dims, DType::kF32, nullptr});
      plan->arena_bytes += round256(static_cast<size_t>(numel_of(dims)) * sizeof(float));
      return plan->slots.size() - 1;
    };
    for (size_t i = 0; i < sig.size(); ++i) {
      if (numel_of(sig[i]) == 0)
        return fail(ErrorCode::kUnsupported,
                    "input '" + g.value(g.inputs()[i]).name + "' is empty; cuda blocks need data");
      plan->input_slots.push_back(new_slot(sig[i]));
      slot_of[g.inputs()[i]] = plan->input_slots.back();
    }
    // What host nodes and the ops' planners read: dims of every value made so
    // far, contents of constants and host values.
    PlanEnv env;
    env.dims = [&](ValueId v) -> const dims_t* {
      if (auto it = slot_of.find(v); it != slot_of.end()) return &plan->slots[it->second].dims;
      const Value& val = g.value(v);
      return val.initializer ? &val.initializer->shape() : nullptr;
    };
    env.value = [&](ValueId v) -> const Tensor* {
      if (auto it = slot_of.find(v); it != slot_of.end() && plan->slots[it->second].host)
        return plan->slots[it->second].host.get();
      const Value& val = g.value(v);  // a constant (its device copy has a slot too)
      return val.initializer ? &*val.initializer : nullptr;
    };
    // The slot a device op reads `v` from; a host value gets its device copy here.
    auto slot_for = [&](ValueId v) -> Result<size_t> {
      if (auto it = slot_of.find(v); it != slot_of.end()) {
        Plan::Slot& sl = plan->slots[it->second];
        if (sl.host && !sl.constant) {
          HONE_TRY(DeviceBuffer buf, DeviceBuffer::upload(d_, sl.host->raw(), sl.host->nbytes()));
          sl.constant = true;
          sl.cptr = buf.ptr();
          plan->uploads.push_back(std::move(buf));
        }
        return it->second;
      }
      auto c = constants_.find(v);
      if (c == constants_.end())
        return fail(ErrorCode::kInternal,
                    "value '" + g.value(v).name + "' is read before it is made");
      const Tensor& t = *g.value(v).initializer;
      const auto h = half_constants_.find(v);
      plan->slots.push_back({true, 0, c->second.ptr(),
                             h == half_constants_.end() ? 0 : h->second.ptr(), t.shape(), t.dtype(),
                             nullptr});
      return slot_of[v] = plan->slots.size() - 1;
    };
    std::vector<std::string> lines;
    size_t workspace = 0;
    for (const Unit& u : units_) {
      Plan::Step st;
      std::vector<dims_t> dims;
      for (ValueId v : u.inputs) {
        HONE_TRY(size_t s, slot_for(v));
        st.in.push_back(s);
        dims.push_back(plan->slots[s].dims);
      }
      auto op = u.op->plan(dims, env);
      if (!op) return fail(std::move(op).error().add_context("while planning " + u.label));
      st.op = std::move(*op);
      for (size_t i = 0; i < st.in.size(); ++i)
        if (plan->slots[st.in[i]].dims_only && st.op.run)
          return fail(ErrorCode::kInternal,
                      u.label + " reads '" + g.value(u.inputs[i]).name +
                          "', which an attention unit reads in place (only its dims are known)");
      if (st.op.dims_only) {
        // Dims for the Shape nodes that read them; the attention unit reads the
        // chain's source through strides.
        for (size_t o = 0; o < u.outputs.size(); ++o) {
          plan->slots.push_back({false, 0, 0, 0, st.op.outputs[o], DType::kF32, nullptr});
          plan->slots.back().dims_only = true;
          st.out.push_back(plan->slots.size() - 1);
          slot_of[u.outputs[o]] = plan->slots.size() - 1;
        }
        lines.push_back(u.label + " [" + st.op.kernel + "]");
        plan->steps.push_back(std::move(st));
        continue;
      }
      for (size_t o = 0; o < u.outputs.size(); ++o) {
        const dims_t& od = st.op.outputs[o];
        size_t s;
        if (o < st.op.host.size() && st.op.host[o]) {
          // A host value: no device memory until a device op reads it.
          plan->slots.push_back({false, 0, 0, 0, od, st.op.host[o]->dtype(), st.op.host[o]});
          s = plan->slots.size() - 1;
        } else if (numel_of(od) == 0) {
          return fail(ErrorCode::kUnsupported, u.label + " makes an empty tensor");
        } else if (o < st.op.alias.size() && st.op.alias[o] >= 0) {
          Plan::Slot view = plan->slots[st.in[static_cast<size_t>(st.op.alias[o])]];
          const int64_t off = o < st.op.alias_offset.size() ? st.op.alias_offset[o] : 0;
          const size_t bytes = static_cast<size_t>(off) * dtype_size(view.dtype);
          if (view.constant)
            view.cptr += bytes;
          else
            view.offset += bytes;
          view.dims = od;
          view.host = nullptr;
          view.half = 0;
          plan->slots.push_back(view);
          s = plan->slots.size() - 1;
        } else {
          s = new_slot(od);
        }
        st.out.push_back(s);
        slot_of[u.outputs[o]] = s;
      }
      workspace = std::max(workspace, st.op.workspace_bytes);
      plan->launches += st.op.run ? 1 : 0;
      if (st.op.run || !st.op.kernel.empty()) lines.push_back(u.label + " [" + st.op.kernel + "]");
      plan->steps.push_back(std::move(st));
    }
    // Steps run one after another on one stream, so they share one workspace.
    plan->workspace_offset = plan->arena_bytes;
    plan->arena_bytes += round256(workspace);
    for (ValueId v : g.outputs()) {
      if (auto it = slot_of.find(v); it != slot_of.end()) {
        plan->output_slots.push_back(it->second);
        continue;
      }
      HONE_TRY(size_t s, slot_for(v));
      plan->output_slots.push_back(s);
    }
    {
      std::lock_guard lock(stats_->mu);
      for (const std::string& l : lines)
        if (stats_->seen.insert(l).second) stats_->kernel_lines.push_back(l);
    }
    HONE_LOG_DEBUG(
        "cuda: block '{}' for {}: {} steps, {} bytes of device arena, {} host values "
        "uploaded",
        g.name(), signature_text(sig), plan->steps.size(), plan->arena_bytes, plan->uploads.size());
    return std::shared_ptr<const Plan>(std::move(plan));
  }

  std::shared_ptr<const Graph> graph_;
  const Driver& d_;
  const Module& fixed_;
  std::shared_ptr<Stats> stats_;
  std::shared_ptr<StreamPool> pool_;
  ConvSettings conv_;
  std::vector<Unit> units_;
  std::map<ValueId, DeviceBuffer> constants_;
  std::map<ValueId, DeviceBuffer> half_constants_;  // bf16/f16 copies of GEMM weights
  eval::Interpreter fallback_;
  mutable std::mutex mu_;
  mutable std::map<Signature, std::shared_ptr<const Plan>> plans_;
  mutable std::map<Signature, Error> failed_;
};

}  // namespace

CudaBackend::CudaBackend() {
  // A lone Conv or MatMul is worth a block; the base's default of 5 would
  // send single-node models (conformance tests) to the fallback.
  mutable_config()
      .declare("min_block_size", int64_t{1}, "supported islands with fewer nodes fall back")
      .declare("precision", std::string("fp32"),
               "fp32: strict f32 matrix products (TF32 off); tf32: cuBLAS and cuDNN on TF32 "
               "tensor cores (also chosen by allow_reduced_precision); bf16 / fp16: matrix "
               "products on bf16 / f16 tensor cores, convolutions on TF32 ones or (timed per "
               "geometry, conv_select) on cuDNN's bf16 / f16 NHWC kernels; every product "
               "accumulates in f32, and tensors, softmax and normalisation stay f32 (but for the "
               "hidden activation inside a bf16/fp16 MLP unit, see gemm_epilogue)")
      .declare("cudnn", true,
               "convolutions on cuDNN when it is found (HONE_CUDNN_PATH, the loader's path, "
               "PyTorch's pip wheel); false, or no cuDNN: im2col + cuBLAS")
      .declare("cudnn_depthwise", true,
               "depthwise convolutions on cuDNN too; false: hone's direct kernel")
      .declare("cudnn_fused", true,
               "a conv's bias, residual Add and Relu inside cuDNN's fused call; false: the "
               "plain cuDNN conv, then one hone epilogue pass")
      .declare("conv_select", std::string("time"),
               "time: per conv geometry, time cuDNN against im2col + cuBLAS (and, under "
               "bf16/fp16, cuDNN on bf16/f16 NHWC copies of the input and weights, checked "
               "against the f32 cuDNN result) at plan time and keep the fastest; cudnn: cuDNN "
               "(f32 data) wherever it can run the conv; cudnn_nhwc (bf16/fp16 only): cuDNN in "
               "bf16/f16 NHWC wherever it can run the conv (group 1, symmetric pads), else as "
               "cudnn")
      .declare("gemm_select", std::string("time"),
               "bf16/fp16 only. time: per matrix-product shape, time the bf16/f16 product "
               "(operands converted) against SGEMM in TF32 at plan time and keep the faster; "
               "reduced: always the bf16/f16 product")
      .declare("attention_select", std::string("time"),
               "time: per attention block and shape, time the fused kernels that accept it "
               "(f32 SIMT; tensor cores: bf16/f16 operands under those precisions, tf32 under "
               "tf32, 3xTF32 under strict fp32) against the unfused GEMM-softmax-GEMM path at "
               "plan time and keep the fastest; fused: a fused kernel whenever one accepts the "
               "shapes; unfused: the nodes' own kernels")
      .declare("gemm_epilogue", true,
               "a MatMul by a constant weight and the Add of a constant bias after it run as one "
               "unit: cuBLASLt's bias epilogue (each algorithm of its heuristic, when "
               "libcublasLt is found; f32 operands also with the weight transposed once) or "
               "the bias broadcast into the output first, whichever times faster; under "
               "bf16/fp16, MatMul + bias, an element-wise chain (GELU) and MatMul + bias run "
               "as one MLP unit whose hidden activation stays bf16/f16; false: MatMul, then "
               "the Add")
      .declare("kernel_choices", std::string(),
               "the kernels chosen by timing (conv_select, gemm_select, attention_select, "
               "gemm_epilogue), one entry per unit, input shapes and precision: "
               "LABEL|SHAPES|MODE=KERNEL, ';'-separated ('%XX' escapes % ; = |), '-' for none. "
               "Filled as shapes are planned; a build given entries replays them untimed")
      .declare("cuda_graphs", true,
               "replay each shape signature's launches as one CUDA graph (captured on its second "
               "run on a stream)");
}

CudaBackend::~CudaBackend() = default;

const BackendCapabilities& CudaBackend::caps() {
  // Just in time: kernels are compiled by NVRTC at build.
  static const BackendCapabilities c = [] {
    BackendCapabilities k = f32_capabilities(Device::kCuda, BuildMode::kJustInTime);
    // tf32: cuBLAS's TF32 tensor-op math mode; bf16 / f16: its f32-accumulating
    // bf16 / f16 tensor-core compute types.
    k.precisions = {"f32", "tf32", "bf16", "f16"};
    return k;
  }();
  return c;
}

std::string CudaBackend::unavailable_reason() {
  auto d = Driver::get();
  return d ? std::string() : d.error().message();
}

Result<Tensor> CudaBackend::allocate_host(DType dtype, std::vector<int64_t> shape) const {
  auto drv = Driver::get();
  if (!drv) return Tensor::allocate(dtype, std::move(shape));  // no GPU: ordinary memory
  auto t = PinnedPool::tensor(**drv, dtype, shape);
  if (!t) {
    // Page-locked memory is limited (RLIMIT_MEMLOCK in a container, say):
    // ordinary memory still works, through the staging copy.
    HONE_LOG_DEBUG("cuda: ordinary memory for an input: {}", t.error().message());
    return Tensor::allocate(dtype, std::move(shape));
  }
  if (t->nbytes() > 0) std::memset(t->raw(), 0, t->nbytes());
  return t;
}

std::vector<std::string> CudaBackend::kernel_plan() const {
  std::vector<std::string> out;
  {
    std::lock_guard lock(stats_->mu);
    out = stats_->kernel_lines;
  }
  if (choices_)
    for (std::string& l : choices_->lines()) out.push_back(std::move(l));
  return out;
}

ChoiceCounts CudaBackend::selections() const {
  return choices_ ? choices_->counts() : ChoiceCounts{};
}

NodeSupport CudaBackend::supports(const Graph& g, const Node& node) const {
  return supports_node(g, node);
}

Result<void> CudaBackend::do_build(const Graph& graph) {
  // No device, no build: fail before partitioning, with the machine's reason.
  std::string precision = config().get<std::string>("precision", "fp32");
  if (precision == "f32" || precision == "f16") precision.insert(1, "p");  // the caps' names
  if (precision != "fp32" && precision != "tf32" && precision != "bf16" && precision != "fp16")
    return fail(ErrorCode::kInvalidArgument,
                "cuda precision '" + precision + "': expected fp32, tf32, bf16 or fp16");
  const std::string select = config().get<std::string>("conv_select", "time");
  if (select != "time" && select != "cudnn" && select != "cudnn_nhwc")
    return fail(ErrorCode::kInvalidArgument,
                "cuda conv_select '" + select + "': expected time, cudnn or cudnn_nhwc");
  if (select == "cudnn_nhwc" && precision != "bf16" && precision != "fp16")
    return fail(ErrorCode::kInvalidArgument,
                "cuda conv_select 'cudnn_nhwc' runs convs in bf16 or f16: it needs precision "
                "bf16 or fp16, not '" +
                    precision + "'");
  const std::string gemm_select = config().get<std::string>("gemm_select", "time");
  if (gemm_select != "time" && gemm_select != "reduced")
    return fail(ErrorCode::kInvalidArgument,
                "cuda gemm_select '" + gemm_select + "': expected time or reduced");
  const std::string attention = config().get<std::string>("attention_select", "time");
  if (attention != "time" && attention != "fused" && attention != "unfused")
    return fail(ErrorCode::kInvalidArgument,
                "cuda attention_select '" + attention + "': expected time, fused or unfused");
  auto given = KernelChoices::parse(config().get<std::string>("kernel_choices", ""));
  if (!given) return fail(std::move(given).error());
  HONE_TRY(const Driver* d, Driver::get());
  const bool tf32 = precision != "fp32" || config().get<bool>("allow_reduced_precision", false);
  const int gemm_half = precision == "bf16" ? kCudaR16BF : precision == "fp16" ? kCudaR16F : 0;
  const int math = tf32 ? kCublasTf32Math : kCublasDefaultMath;
  // Handles take their math mode when made, and graphs are keyed by plans of
  // the blocks being replaced: each build gets a new pool.
  streams_ = std::make_shared<StreamPool>();
  streams_->d = d;
  streams_->math_mode = math;
  streams_->graphs = config().get<bool>("cuda_graphs", true);
  conv_ = ConvSettings{};
  conv_.tf32 = tf32;
  conv_.gemm_half = gemm_half;
  conv_.gemm_by_time = gemm_select == "time";
  conv_.mode = gemm_half != 0 ? precision : tf32 ? "tf32" : "fp32";
  // The record starts from the given choices; what is timed later (blocks
  // planned at build, or at their first inference of a new shape) is written
  // back into the config, so a package saved after the tune replays it.
  choices_ = std::make_shared<KernelChoices>(std::move(*given));
  choices_->on_change(
      [this](const std::string& text) { (void)mutable_config().set("kernel_choices", text); });
  conv_.choices = choices_;
  conv_.gemm_epilogue = config().get<bool>("gemm_epilogue", true);
  conv_.attention_select = attention == "fused"     ? AttentionSelect::kFused
                           : attention == "unfused" ? AttentionSelect::kUnfused
                                                    : AttentionSelect::kTime;
  conv_.depthwise_on_dnn = config().get<bool>("cudnn_depthwise", true);
  conv_.fused_relu = config().get<bool>("cudnn_fused", true);
  conv_.conv_select = select == "cudnn"        ? ConvSelect::kCudnn
                      : select == "cudnn_nhwc" ? ConvSelect::kCudnnNhwc
                                               : ConvSelect::kTime;
  if (!config().get<bool>("cudnn", true)) {
    conv_.why_not = "cudnn=false";
  } else if (auto dnn = Cudnn::get()) {
    conv_.dnn = *dnn;
  } else {
    conv_.why_not = dnn.error().message();
  }
  streams_->dnn = conv_.dnn;
  if (std::any_of(graph.nodes().begin(), graph.nodes().end(),
                  [](const Node& n) { return n.op_type == "Conv"; })) {
    const std::string line =
        conv_.dnn != nullptr
            ? "convolutions: " + conv_.dnn->description()
            : "convolutions: im2col + cuBLAS (cuDNN not used: " + conv_.why_not + ")";
    HONE_LOG_DEBUG("cuda: {}", line);
    std::lock_guard lock(stats_->mu);
    if (stats_->seen.insert(line).second) stats_->kernel_lines.push_back(line);
  }
  HONE_LOG_DEBUG("cuda: matrix products in {}", gemm_half != 0 ? precision + " (f32 accumulation)"
                                                : tf32         ? "tf32 (f32 accumulation)"
                                                               : "strict fp32");
  return CompilingBackend::do_build(graph);
}

Result<std::unique_ptr<CompiledBlock>> CudaBackend::compile(const Graph& block) {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  HONE_TRY(const Module* fixed, fixed_module(*d));
  auto compiled = std::make_unique<CudaBlock>(std::make_shared<const Graph>(block), *d, *fixed,
                                              stats_, streams_, conv_);
  HONE_CHECK_OK_CTX(compiled->init(), "while compiling a cuda block of " +
                                          std::to_string(block.nodes().size()) + " nodes");
  // Dynamic blocks are planned on first use.
  if (auto sig = static_input_dims(block)) compiled->prepare(*sig);
  return compiled;
}

}  // namespace hone::cuda

namespace hone {

void register_cuda(BackendRegistry& registry) {
  BackendRegistry::Entry e{"cuda",
                           "NVIDIA GPU through the CUDA driver, cuBLAS SGEMM and NVRTC-compiled "
                           "kernels, all loaded at run time",
                           cuda::CudaBackend::caps(),
                           [] { return std::make_unique<cuda::CudaBackend>(); },
                           [] { return cuda::CudaBackend::unavailable_reason(); }};
  auto r = registry.add(std::move(e));
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
