#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <map>

#include "backends/common/capabilities.h"
#include "backends/common/static_dims.h"
#include "backends/cuda/cuda_api.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/op.h"
#include "core/log.h"
#include "hone/registry.h"

namespace hone::cuda {

/// Streams (each with its cuBLAS handle and a device arena) for inferences:
/// a call takes one, uses it alone, and gives it back when it succeeded.
struct StreamPool {
  struct Exec {
    Stream stream;
    DeviceBuffer arena;
  };
  const Driver* d = nullptr;
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
    HONE_TRY(Stream s, Stream::create(*d));
    return std::make_unique<Exec>(Exec{std::move(s), DeviceBuffer()});
  }
  void give(std::unique_ptr<Exec> e) {
    std::lock_guard lock(mu);
    idle.push_back(std::move(e));
  }
};

namespace {

using Signature = ShapeSignature;

size_t round256(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

struct Plan {
  struct Slot {
    bool constant = false;
    size_t offset = 0;     // into the arena, unless constant
    CUdeviceptr cptr = 0;  // constant
    dims_t dims;
  };
  struct Step {
    OpPlan op;
    std::vector<size_t> in, out;
  };
  std::vector<Slot> slots;
  std::vector<size_t> input_slots, output_slots;
  std::vector<Step> steps;
  size_t arena_bytes = 0, workspace_offset = 0;
};

class CudaBlock final : public CompiledBlock {
 public:
  CudaBlock(std::shared_ptr<const Graph> g, const Driver& d, const Module& fixed,
            std::shared_ptr<Stats> stats, std::shared_ptr<StreamPool> pool)
      : graph_(std::move(g)),
        d_(d),
        fixed_(fixed),
        stats_(std::move(stats)),
        pool_(std::move(pool)) {}

  /// Creates the units, compiles the block's chains, uploads its constants.
  Result<void> init() {
    const Graph& g = *graph_;
    BlockInfo info(g);
    info.chains = std::make_shared<ChainModule>();
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
      if (!val.initializer || constants_.count(v)) return {};
      if (val.initializer->dtype() != DType::kF32)
        return fail(ErrorCode::kInternal, "constant '" + val.name + "' is not f32");
      HONE_TRY(DeviceBuffer buf, DeviceBuffer::allocate(d_, val.initializer->nbytes()));
      if (buf.bytes() > 0)
        HONE_CHECK_OK(d_.check(
            d_.api().cuMemcpyHtoD(buf.ptr(), val.initializer->raw(), buf.bytes()), "cuMemcpyHtoD"));
      constants_.emplace(v, std::move(buf));
      return {};
    };
    for (const Unit& u : units_)
      for (ValueId v : u.inputs) HONE_CHECK_OK(upload(v));
    for (ValueId v : g.outputs()) HONE_CHECK_OK(upload(v));
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
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].nbytes() > 0)
        HONE_CHECK_OK(d_.check(
            a.cuMemcpyHtoDAsync(ptr(plan.input_slots[i]), inputs[i].raw(), inputs[i].nbytes(), s),
            "cuMemcpyHtoDAsync"));
    const ExecCtx ctx{d_, fixed_, s, ex->stream.blas()};
    uint64_t launched = 0;
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      const Plan::Step& st = plan.steps[k];
      if (!st.op.run) continue;
      Bind b;
      for (size_t in : st.in) b.in.push_back(ptr(in));
      for (size_t out : st.out) b.out.push_back(ptr(out));
      b.workspace = base + plan.workspace_offset;
      HONE_CHECK_OK_CTX(st.op.run(ctx, b),
                        "while running " + units_[k].label + " [" + st.op.kernel + "]");
      ++launched;
    }
    std::vector<Tensor> outputs;
    for (size_t slot : plan.output_slots) {
      HONE_TRY(Tensor t, Tensor::allocate(DType::kF32, plan.slots[slot].dims));
      if (t.nbytes() > 0)
        HONE_CHECK_OK(
            d_.check(a.cuMemcpyDtoHAsync(t.raw(), ptr(slot), t.nbytes(), s), "cuMemcpyDtoHAsync"));
      outputs.push_back(std::move(t));
    }
    // Kernel faults surface here; a failed stream is dropped, not pooled.
    HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
    pool_->give(std::move(ex));
    stats_->kernel_executions.fetch_add(launched, std::memory_order_relaxed);
    return outputs;
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
      plan->slots.push_back({false, plan->arena_bytes, 0, dims});
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
    auto slot_for = [&](ValueId v) -> Result<size_t> {
      if (auto it = slot_of.find(v); it != slot_of.end()) return it->second;
      auto c = constants_.find(v);
      if (c == constants_.end())
        return fail(ErrorCode::kInternal,
                    "value '" + g.value(v).name + "' is read before it is made");
      plan->slots.push_back({true, 0, c->second.ptr(), g.value(v).initializer->shape()});
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
      auto op = u.op->plan(dims);
      if (!op) return fail(std::move(op).error().add_context("while planning " + u.label));
      st.op = std::move(*op);
      for (size_t o = 0; o < u.outputs.size(); ++o) {
        const dims_t& od = st.op.outputs[o];
        if (numel_of(od) == 0)
          return fail(ErrorCode::kUnsupported, u.label + " makes an empty tensor");
        size_t s;
        if (o < st.op.alias.size() && st.op.alias[o] >= 0) {
          Plan::Slot view = plan->slots[st.in[static_cast<size_t>(st.op.alias[o])]];
          view.dims = od;
          plan->slots.push_back(view);
          s = plan->slots.size() - 1;
        } else {
          s = new_slot(od);
        }
        st.out.push_back(s);
        slot_of[u.outputs[o]] = s;
      }
      workspace = std::max(workspace, st.op.workspace_bytes);
      lines.push_back(u.label + " [" + st.op.kernel + "]");
      plan->steps.push_back(std::move(st));
    }
    // Steps run one after another on one stream, so they share one workspace.
    plan->workspace_offset = plan->arena_bytes;
    plan->arena_bytes += round256(workspace);
    for (ValueId v : g.outputs()) {
      HONE_TRY(size_t s, slot_for(v));
      plan->output_slots.push_back(s);
    }
    {
      std::lock_guard lock(stats_->mu);
      for (const std::string& l : lines)
        if (stats_->seen.insert(l).second) stats_->kernel_lines.push_back(l);
    }
    HONE_LOG_DEBUG("cuda: block '{}' for {}: {} steps, {} bytes of device arena", g.name(),
                   signature_text(sig), plan->steps.size(), plan->arena_bytes);
    return std::shared_ptr<const Plan>(std::move(plan));
  }

  std::shared_ptr<const Graph> graph_;
  const Driver& d_;
  const Module& fixed_;
  std::shared_ptr<Stats> stats_;
  std::shared_ptr<StreamPool> pool_;
  std::vector<Unit> units_;
  std::map<ValueId, DeviceBuffer> constants_;
  eval::Interpreter fallback_;
  mutable std::mutex mu_;
  mutable std::map<Signature, std::shared_ptr<const Plan>> plans_;
  mutable std::map<Signature, Error> failed_;
};

}  // namespace

BlockInfo::BlockInfo(const Graph& graph)
    : g(graph),
      consumers(graph.values().size(), 0),
      consumer(graph.values().size(), -1),
      is_output(graph.values().size(), false),
      used(graph.nodes().size(), false) {
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    std::vector<ValueId> seen;
    for (ValueId v : graph.nodes()[i].inputs) {
      if (v < 0 || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      ++consumers[static_cast<size_t>(v)];
      consumer[static_cast<size_t>(v)] = static_cast<NodeId>(i);
    }
  }
  for (ValueId v : graph.outputs()) is_output[static_cast<size_t>(v)] = true;
}

NodeId BlockInfo::sole_consumer(ValueId v) const {
  const auto i = static_cast<size_t>(v);
  if (is_output[i] || consumers[i] != 1) return -1;
  const NodeId c = consumer[i];
  return used[static_cast<size_t>(c)] ? -1 : c;
}

Result<Unit> create_unit(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const std::string& op = n.op_type;
  if (op == "Conv" || op == "Gemm" || op == "MatMul") return create_dense(b, n);
  if (!eltwise_expr(b.g, n, std::vector<std::string>(eltwise_arity(n), "x")).empty())
    return create_chain(b, n, absorbed);
  return create_misc(b, n);
}

CudaBackend::CudaBackend() {
  // A lone Conv or MatMul is worth a block; the base's default of 5 would
  // send single-node models (conformance tests) to the fallback.
  mutable_config().declare("min_block_size", int64_t{1},
                           "supported islands with fewer nodes fall back");
}

CudaBackend::~CudaBackend() = default;

const BackendCapabilities& CudaBackend::caps() {
  // Just in time: kernels are compiled by NVRTC at build.
  static const BackendCapabilities c = f32_capabilities(Device::kCuda, BuildMode::kJustInTime);
  return c;
}

std::string CudaBackend::unavailable_reason() {
  auto d = Driver::get();
  return d ? std::string() : d.error().message();
}

std::vector<std::string> CudaBackend::kernel_plan() const {
  std::lock_guard lock(stats_->mu);
  return stats_->kernel_lines;
}

NodeSupport CudaBackend::supports(const Graph& g, const Node& node) const {
  return supports_node(g, node);
}

Result<void> CudaBackend::do_build(const Graph& graph) {
  // No device, no build: fail before partitioning, with the machine's reason.
  HONE_TRY(const Driver* d, Driver::get());
  if (!streams_) {
    streams_ = std::make_shared<StreamPool>();
    streams_->d = d;
  }
  return CompilingBackend::do_build(graph);
}

Result<std::unique_ptr<CompiledBlock>> CudaBackend::compile(const Graph& block) {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  HONE_TRY(const Module* fixed, fixed_module(*d));
  auto compiled = std::make_unique<CudaBlock>(std::make_shared<const Graph>(block), *d, *fixed,
                                              stats_, streams_);
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
