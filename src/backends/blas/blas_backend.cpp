#include "backends/blas/blas_backend.h"

#include <algorithm>
#include <functional>
#include <map>
#include <new>
#include <set>

#include "backends/blas/kernels/gemm.h"
#include "backends/blas/op.h"
#include "backends/common/arena_layout.h"
#include "backends/common/block_runtime.h"
#include "backends/common/capabilities.h"
#include "backends/common/empty_values.h"
#include "backends/common/host_eval.h"
#include "backends/common/static_dims.h"
#include "core/log.h"
#include "hone/limits.h"
#include "hone/registry.h"

namespace hone::blas {
namespace {

using Signature = ShapeSignature;

/// One block for one input-shape signature: where every value lives and
/// the planned op of every unit.
struct Program {
  struct Slot {
    enum class Kind : uint8_t { kInput, kConstant, kTemp, kOutput };
    Kind kind = Kind::kTemp;
    size_t index = 0;             // kInput / kOutput: position
    size_t offset = 0;            // kTemp: floats into the arena
    const float* data = nullptr;  // kConstant
    dims_t dims;
  };
  struct Step {
    OpPlan op;
    std::vector<size_t> in, out;  // slots
    size_t workspace = 0;         // floats into the arena
  };
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<std::pair<size_t, size_t>> copies;  // (slot, output) for outputs no step writes
  std::vector<dims_t> output_dims;
  /// Per output: its value when a host node made it (common/host_eval.h),
  /// handed out as is, whatever its dtype (a Reshape target another block
  /// reads); null for the outputs the steps write.
  std::vector<std::shared_ptr<const Tensor>> host_outputs;
  /// Host values the constant slots point into.
  std::vector<std::shared_ptr<const Tensor>> owned;
  size_t arena_floats = 0;
  ArenaLayout memory;  // how the arena was laid out
};

struct AlignedDelete {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using Arena = std::unique_ptr<float[], AlignedDelete>;

Arena make_arena(size_t floats) {
  if (floats == 0) return nullptr;
  return Arena(static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t(64))));
}

/// Arenas kept between calls: a call takes one (or makes one), runs, and
/// gives it back, so concurrent calls never share one and a steady stream of
/// calls allocates nothing (a fresh multi-megabyte block from malloc is fresh
/// pages from the kernel, faulted in on every call).
class ArenaPool {
 public:
  struct Lease {
    ArenaPool* pool = nullptr;
    Arena arena;
    size_t floats = 0;
    Lease() = default;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (pool != nullptr && arena) pool->give_back(std::move(arena), floats);
    }
    float* get() const { return arena.get(); }
  };

  void take(size_t floats, Lease* out) {
    out->pool = this;
    {
      std::lock_guard lock(mu_);
      // The smallest kept arena that is large enough.
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i)
        if (free_[i].second >= floats &&
            (best == free_.size() || free_[i].second < free_[best].second))
          best = i;
      if (best < free_.size()) {
        out->arena = std::move(free_[best].first);
        out->floats = free_[best].second;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
        return;
      }
    }
    out->arena = make_arena(floats);
    out->floats = floats;
  }

 private:
  // More than this many concurrent calls allocate; the spare ones are freed.
  static constexpr size_t kKeep = 4;
  void give_back(Arena a, size_t floats) {
    std::lock_guard lock(mu_);
    if (free_.size() < kKeep) {
      free_.emplace_back(std::move(a), floats);
      return;
    }
    // Keep the largest: they serve every smaller signature too.
    auto smallest = std::min_element(free_.begin(), free_.end(), [](const auto& x, const auto& y) {
      return x.second < y.second;
    });
    if (smallest->second < floats) *smallest = {std::move(a), floats};
  }
  std::mutex mu_;
  std::vector<std::pair<Arena, size_t>> free_;
};

/// Lays out the temporaries and workspaces of `program` in one arena: each
/// step's workspace is scratch live only during that step; copies to the
/// block's outputs read their sources after the last step.
Result<ArenaLayout> arena_layout_of(Program* program) {
  ArenaProblem mp;
  mp.alignment = 64;
  for (const Program::Slot& sl : program->slots) {
    size_t n = 1;
    for (int64_t d : sl.dims) n *= static_cast<size_t>(d);
    mp.values.push_back({n * sizeof(float), sl.kind != Program::Slot::Kind::kTemp});
  }
  for (const Program::Step& st : program->steps) {
    ArenaStep ms;
    for (size_t s : st.in) ms.reads.push_back(static_cast<int>(s));
    for (size_t s : st.out) ms.writes.push_back(static_cast<int>(s));
    ms.scratch_bytes = st.op.workspace_floats * sizeof(float);
    for (int k : st.op.in_place)
      ms.in_place.emplace_back(static_cast<int>(st.in[static_cast<size_t>(k)]),
                               static_cast<int>(st.out[0]));
    mp.steps.push_back(std::move(ms));
  }
  if (!program->copies.empty()) {
    ArenaStep tail;
    for (const auto& [s, k] : program->copies) tail.reads.push_back(static_cast<int>(s));
    mp.steps.push_back(std::move(tail));
  }
  HONE_TRY(ArenaLayout m, lay_out(mp));
  for (size_t s = 0; s < program->slots.size(); ++s)
    if (program->slots[s].kind == Program::Slot::Kind::kTemp &&
        m.offsets[s] != ArenaLayout::kNotPlaced)
      program->slots[s].offset = m.offsets[s] / sizeof(float);
  for (size_t i = 0; i < program->steps.size(); ++i)
    if (m.scratch_offsets[i] != ArenaLayout::kNotPlaced)
      program->steps[i].workspace = m.scratch_offsets[i] / sizeof(float);
  return m;
}

/// Unit `u` of block `g` when one of its nodes reads an empty value
/// (common/empty_values.h): node by node, evaluated now on the reference
/// (every input known, or every output empty), its outputs given to `keep`;
/// true then, no step. False for a unit reading none, and for a Concat with
/// an empty part, planned as usual (its kernel copies nothing from that
/// part). kUnsupported for anything else: this signature runs on the reference.
Result<bool> plan_empty(const Graph& g, const Unit& u, const host_eval::Env& known,
                        const std::set<ValueId>& empty,
                        const std::function<void(ValueId, Tensor)>& keep) {
  bool reads = false;
  for (NodeId id : u.nodes)
    for (ValueId v : g.node(id).inputs) reads = reads || (v >= 0 && empty.count(v));
  if (!reads) return false;
  auto dtype = [&](ValueId v) { return g.value(v).dtype; };
  for (NodeId id : u.nodes) {
    const Node& n = g.node(id);
    auto r = empty_values::evaluate(g, n, known, dtype);
    if (!r) return fail(std::move(r).error().add_context("while planning " + u.label));
    if (!r->known && !r->all_empty()) {
      if (u.nodes.size() == 1 && n.op_type == "Concat") return false;
      return fail(ErrorCode::kUnsupported,
                  n.describe() +
                      " reads an empty tensor but its output is not empty, and it reads "
                      "values known only at run time: blas has no rule for that");
    }
    size_t k = 0;
    for (ValueId v : n.outputs)
      if (v >= 0) keep(v, std::move(r->outputs[k++]));
  }
  return true;
}

/// The inputs of block `g` with a zero dim in `sig`, but for those only
/// Shape or Size reads (`dims_only`): empty values, each given its empty
/// tensor in `host` unless the key carried its value.
std::set<ValueId> empty_inputs(const Graph& g, const Signature& sig,
                               const std::vector<bool>& dims_only,
                               std::map<ValueId, std::shared_ptr<const Tensor>>* host) {
  std::set<ValueId> empty;
  for (size_t i = 0; i < sig.size(); ++i) {
    const ValueId in = g.inputs()[i];
    if (dims_only[i] || shape_numel(sig[i]) != 0) continue;
    empty.insert(in);
    const DType t = g.value(in).dtype == DType::kUndefined ? DType::kF32 : g.value(in).dtype;
    if (!host->count(in)) (*host)[in] = std::make_shared<const Tensor>(Tensor::zeros(t, sig[i]));
  }
  return empty;
}

class BlasBlock final : public BlockRuntime<Program> {
 public:
  /// `units` were made from `*g` (host units and index ops keep references to it).
  BlasBlock(std::shared_ptr<const Graph> g, std::vector<Unit> units, std::shared_ptr<Stats> stats,
            ThreadPool* pool, std::shared_ptr<ThreadPool> keep, host_eval::Known known)
      : BlockRuntime("blas", std::move(g), &stats->fallback_runs),
        units_(std::move(units)),
        stats_(std::move(stats)),
        pool_(pool),
        keep_pool_(std::move(keep)),
        dims_only_(host_eval::dims_only_inputs(graph())),
        known_(std::move(known)) {
    for (ValueId in : graph().inputs()) {
      bool cond = false;
      for (const Node& n : graph().nodes())
        for (size_t k = 0; k < n.inputs.size(); ++k)
          cond |= n.inputs[k] == in && reads_as_data(n, k);
      cond_input_.push_back(cond);
    }
  }

  /// Every run of this block goes to the reference, for `why`.
  void refuse(Error why) { refused_ = std::move(why); }

 private:
  /// The inputs' dims, then the values of the known inputs (integer and bool
  /// values another block computed from dims: a Reshape target, an Expand
  /// shape; static_dims.h's append_values). An input only Shape or Size reads
  /// (input_ids, whose length makes the positions and masks) may have any
  /// dtype, and a Where's condition is read when it runs; any other non-f32
  /// input sends the run to the reference.
  std::optional<Signature> key_of(const std::vector<Tensor>& inputs) const override {
    Signature key = signature_of(inputs);
    const std::vector<ValueId>& ins = graph().inputs();
    if (inputs.size() != ins.size()) return all_f32(inputs) ? std::optional(key) : std::nullopt;
    std::vector<bool> take(ins.size(), false);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const DType t = inputs[i].dtype();
      if (t == DType::kF32 || dims_only_[i]) continue;
      if (known_[static_cast<size_t>(ins[i])]) {
        take[i] = true;
      } else if (!(cond_input_[i] && t == DType::kBool)) {
        HONE_LOG_DEBUG("blas: block '{}' runs on the reference: its input '{}' is {}",
                       graph().name(), graph().value(ins[i]).name, dtype_name(t));
        return std::nullopt;
      }
    }
    if (!append_values(key, inputs, take, kMaxKnownInput)) {
      HONE_LOG_DEBUG(
          "blas: block '{}' runs on the reference: an input whose values the plan takes has "
          "more than {} elements",
          graph().name(), kMaxKnownInput);
      return std::nullopt;
    }
    return key;
  }

  Result<std::vector<Tensor>> execute(const Program& program,
                                      const std::vector<Tensor>& inputs) const override {
    try {
      std::vector<Tensor> outputs;
      for (size_t k = 0; k < program.output_dims.size(); ++k) {
        if (const auto& host = program.host_outputs[k]) {
          outputs.push_back(host->clone());  // the caller may write it
          continue;
        }
        HONE_TRY(Tensor t, Tensor::allocate(DType::kF32, program.output_dims[k]));
        outputs.push_back(std::move(t));
      }
      // One arena per call, laid out by arena_layout_of().
      ArenaPool::Lease arena;
      arenas_.take(program.arena_floats, &arena);
      auto ptr = [&](size_t s) -> float* {
        const Program::Slot& sl = program.slots[s];
        switch (sl.kind) {
          case Program::Slot::Kind::kInput:
            return const_cast<float*>(inputs[sl.index].data<float>());  // only ever read
          case Program::Slot::Kind::kConstant:
            return const_cast<float*>(sl.data);  // only ever read
          case Program::Slot::Kind::kTemp:
            return arena.get() + sl.offset;
          case Program::Slot::Kind::kOutput:
            return outputs[sl.index].data<float>();
        }
        return nullptr;
      };
      RunArgs args;
      args.pool = pool_;
      for (const Program::Step& st : program.steps) {
        args.workspace = arena.get() + st.workspace;
        args.inputs.clear();
        args.outputs.clear();
        for (size_t s : st.in) args.inputs.push_back(ptr(s));
        for (size_t s : st.out) args.outputs.push_back(ptr(s));
        st.op.run(args);
        stats_->kernel_executions.fetch_add(1, std::memory_order_relaxed);
      }
      for (const auto& [s, k] : program.copies)
        if (outputs[k].numel() > 0)
          std::copy(ptr(s), ptr(s) + outputs[k].numel(), outputs[k].data<float>());
      return outputs;
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kOutOfMemory, "out of memory while running a blas block");
    } catch (const std::exception& e) {
      return fail(ErrorCode::kInternal, std::string("blas block failed: ") + e.what());
    }
  }

  Result<std::shared_ptr<const Program>> build(const Signature& key) const override {
    if (refused_) return fail(*refused_);
    const Graph& g = graph();
    if (key.size() < g.inputs().size())
      return fail(ErrorCode::kInvalidArgument, "block expects " +
                                                   std::to_string(g.inputs().size()) +
                                                   " inputs, got " + std::to_string(key.size()));
    const Signature sig(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(g.inputs().size()));
    auto program = std::make_shared<Program>();
    std::map<ValueId, size_t> slot_of;
    for (size_t i = 0; i < sig.size(); ++i) {
      program->slots.push_back({Program::Slot::Kind::kInput, i, 0, nullptr, sig[i]});
      slot_of[g.inputs()[i]] = program->slots.size() - 1;
    }
    // Values computed when planning (host nodes), by value; first the known
    // inputs' values, which the key carries.
    std::map<ValueId, std::shared_ptr<const Tensor>> host;
    HONE_TRY(auto values, values_of_key(key, g.inputs().size()));
    for (auto& [i, t] : values) host[g.inputs()[i]] = std::make_shared<const Tensor>(std::move(t));
    // Empty values (a zero dim: common/empty_values.h): known now, read by no kernel.
    std::set<ValueId> empty = empty_inputs(g, sig, dims_only_, &host);
    auto slot_for = [&](ValueId v) -> Result<size_t> {
      if (auto it = slot_of.find(v); it != slot_of.end()) return it->second;
      const Value& val = g.value(v);
      if (!val.initializer || val.initializer->dtype() != DType::kF32)
        return fail(ErrorCode::kInternal, "value '" + val.name + "' is read before it is made");
      program->slots.push_back({Program::Slot::Kind::kConstant, 0, 0,
                                val.initializer->data<float>(), val.initializer->shape()});
      slot_of[v] = program->slots.size() - 1;
      return program->slots.size() - 1;
    };
    host_eval::Env known;
    known.dims = [&](ValueId v) -> const std::vector<int64_t>* {
      if (auto it = slot_of.find(v); it != slot_of.end()) return &program->slots[it->second].dims;
      const Tensor* t = known.value(v);  // the Shape of a constant or of a host value
      return t != nullptr ? &t->shape() : nullptr;
    };
    known.value = [&](ValueId v) -> const Tensor* {
      if (auto it = host.find(v); it != host.end()) return it->second.get();
      const Value& val = g.value(v);
      return val.initializer ? &*val.initializer : nullptr;
    };
    const PlanEnv env{*pool_, known};
    // A value computed now (a host node's, or a node's reading an empty
    // value): a constant of this plan; an f32 one is also a slot the kernels read.
    auto keep = [&](ValueId v, std::shared_ptr<const Tensor> t) {
      host[v] = t;
      if (t->numel() == 0) empty.insert(v);
      if (t->dtype() != DType::kF32) return;
      program->owned.push_back(t);
      program->slots.push_back({Program::Slot::Kind::kConstant, 0, 0,
                                t->numel() == 0 ? nullptr : t->data<float>(), t->shape()});
      slot_of[v] = program->slots.size() - 1;
    };
    std::vector<std::string> lines;
    for (const Unit& u : units_) {
      HONE_TRY(bool done, plan_empty(g, u, known, empty, [&](ValueId v, Tensor t) {
                 keep(v, std::make_shared<const Tensor>(std::move(t)));
               }));
      if (done) continue;
      Program::Step st;
      HONE_CHECK_OK(plan_unit_step(st, u, slot_for, program->slots, env));
      if (st.op.host.empty() && !st.op.outputs.empty() &&
          std::all_of(st.op.outputs.begin(), st.op.outputs.end(),
                      [](const dims_t& d) { return shape_numel(d) == 0; }))
        for (const dims_t& d : st.op.outputs)  // no element to write: no step
          st.op.host.push_back(std::make_shared<const Tensor>(Tensor::zeros(DType::kF32, d)));
      if (!st.op.host.empty()) {
        // A host node (or a Slice or an Expand to a zero dim): its values are
        // constants of this plan; an f32 one is also a slot the kernels read.
        for (size_t o = 0; o < u.outputs.size() && o < st.op.host.size(); ++o)
          keep(u.outputs[o], st.op.host[o]);
        continue;
      }
      for (size_t o = 0; o < u.outputs.size(); ++o) {
        program->slots.push_back({Program::Slot::Kind::kTemp, 0, 0, nullptr, st.op.outputs[o]});
        st.out.push_back(program->slots.size() - 1);
        slot_of[u.outputs[o]] = program->slots.size() - 1;
        if (shape_numel(st.op.outputs[o]) == 0) {
          // An empty part (a Split's): the step writes nothing there, its
          // readers see an empty value.
          empty.insert(u.outputs[o]);
          host[u.outputs[o]] =
              std::make_shared<const Tensor>(Tensor::zeros(DType::kF32, st.op.outputs[o]));
        }
      }
      lines.push_back(u.label + " [" + st.op.kernel + "]");
      program->steps.push_back(std::move(st));
    }
    std::vector<bool> taken(program->slots.size(), false);
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      if (auto it = host.find(g.outputs()[k]); it != host.end()) {
        program->output_dims.push_back(it->second->shape());
        program->host_outputs.push_back(it->second);
        continue;
      }
      program->host_outputs.push_back(nullptr);
      HONE_TRY(size_t s, slot_for(g.outputs()[k]));
      Program::Slot& sl = program->slots[s];
      program->output_dims.push_back(sl.dims);
      if (sl.kind == Program::Slot::Kind::kTemp && !taken[s]) {
        // The step making this value writes straight into the output tensor.
        sl.kind = Program::Slot::Kind::kOutput;
        sl.index = k;
        taken[s] = true;
      } else {
        program->copies.emplace_back(s, k);
      }
    }
    HONE_TRY(program->memory, arena_layout_of(program.get()));
    HONE_CHECK_OK(check_allocation(program->memory.arena_bytes,
                                   "the activation arena of block '" + g.name() + "'"));
    program->arena_floats = program->memory.arena_bytes / sizeof(float);
    const std::string memory_line =
        "peak_activation_bytes " + std::to_string(program->memory.arena_bytes) + " for block '" +
        g.name() + "' " + signature_text(sig) + ": " + program->memory.describe();
    {
      std::lock_guard lock(stats_->mu);
      for (const std::string& l : lines)
        if (stats_->seen.insert(l).second) stats_->kernel_lines.push_back(l);
      if (stats_->seen.insert(memory_line).second) stats_->kernel_lines.push_back(memory_line);
      if (program->memory.arena_bytes >= stats_->memory.peak_activation_bytes) {
        stats_->memory.peak_activation_bytes = program->memory.arena_bytes;
        stats_->memory.naive_activation_bytes = program->memory.naive_bytes;
      }
    }
    HONE_LOG_DEBUG("blas: block '{}' for {}: {} steps, {}", g.name(), signature_text(sig),
                   program->steps.size(), program->memory.describe());
    return std::shared_ptr<const Program>(std::move(program));
  }

  std::vector<Unit> units_;
  std::shared_ptr<Stats> stats_;
  ThreadPool* pool_;
  std::shared_ptr<ThreadPool> keep_pool_;
  std::optional<Error> refused_;  // why no unit could be made: every run is the reference's
  std::vector<bool> dims_only_;   // per block input: only Shape or Size reads it
  host_eval::Known known_;        // by value id: inputs whose values the key carries
  std::vector<bool> cond_input_;  // per block input: a Where reads it as its condition
  static constexpr int64_t kMaxKnownInput = 64;
  mutable ArenaPool arenas_;
};

/// Fused units of `g` in an order where each unit runs after everything it
/// reads: a unit runs at the position of its last node.
Result<std::vector<Unit>> create_units(const Graph& g, host_eval::Known known) {
  BlockInfo info(g, std::move(known));
  return place_units<Unit>(g, [&](NodeId id, const Node& n, std::vector<NodeId>* absorbed) {
    info.used[static_cast<size_t>(id)] = true;
    auto u = create_unit(info, n, absorbed);
    // Absorbed nodes are taken: a later dense op's epilogue must not claim them.
    if (u)
      for (NodeId a : *absorbed) info.used[static_cast<size_t>(a)] = true;
    return u;
  });
}

}  // namespace

BlasBackend::BlasBackend() {
  // A lone Conv or MatMul already beats the reference, and conformance
  // models are single nodes: the base's default of 5 would send them all to
  // the fallback.
  mutable_config().declare("min_block_size", int64_t{1},
                           "supported islands with fewer nodes fall back");
}

const BackendCapabilities& BlasBackend::caps() {
  static const BackendCapabilities c = [] {
    BackendCapabilities k = f32_capabilities(Device::kCpu, BuildMode::kAheadOfTime);
    k.libraries = {{"openblas", kernels::openblas_version()}};
    return k;
  }();
  return c;
}

MemoryFigures BlasBackend::memory_figures() const {
  std::lock_guard lock(stats_->mu);
  return stats_->memory;
}

std::vector<std::string> BlasBackend::describe_kernels() const {
  std::lock_guard lock(stats_->mu);
  return stats_->kernel_lines;
}

NodeSupport BlasBackend::supports(const Graph& g, const Node& node) const {
  return supports_node(g, node);
}

Result<std::unique_ptr<CompiledBlock>> BlasBackend::compile(const Graph& block) {
  const int64_t threads = config().get<int64_t>("threads", 0);  // >= 0: Backend::build checked
  if (threads > 0 && !own_pool_)
    own_pool_ = std::make_shared<ThreadPool>(static_cast<int>(threads));
  ThreadPool* pool = own_pool_ ? own_pool_.get() : &ThreadPool::global();
  HONE_LOG_DEBUG("blas: OpenBLAS {} build, kept single-threaded; {} pool threads",
                 kernels::openblas_variant(), pool->num_threads());
  auto graph = std::make_shared<const Graph>(block);
  host_eval::Known known = host_eval::known_inputs(*graph, reads_as_data);
  auto units = create_units(*graph, known);
  if (!units && units.error().code() == ErrorCode::kUnsupported) {
    // A node the whole graph computes from dims that this block cannot (its
    // inputs come from another block as data): every run goes to the reference.
    HONE_LOG_DEBUG("blas: block '{}' runs on the reference: {}", block.name(),
                   units.error().to_string());
    auto compiled = std::make_unique<BlasBlock>(graph, std::vector<Unit>{}, stats_, pool, own_pool_,
                                                std::move(known));
    compiled->refuse(std::move(units).error());
    return compiled;
  }
  if (!units) return fail(std::move(units).error());
  auto compiled = std::make_unique<BlasBlock>(graph, std::move(*units), stats_, pool, own_pool_,
                                              std::move(known));
  // Static blocks are planned now; a failure is not fatal: that signature
  // runs on the reference (and the reason is logged).
  if (auto sig = static_input_dims(block)) compiled->prepare(*sig);
  return compiled;
}

}  // namespace hone::blas

namespace hone {

void register_blas(BackendRegistry& registry) {
  auto r = registry.add({"blas",
                         "hone's f32 CPU kernels around OpenBLAS SGEMM: im2col/depthwise conv, "
                         "fused epilogues and element-wise chains",
                         blas::BlasBackend::caps(),
                         [] { return std::make_unique<blas::BlasBackend>(); },
                         {}});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
