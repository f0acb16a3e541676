#include "backends/onednn/plan.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>

#include "backends/common/arena_layout.h"
#include "backends/common/host_eval.h"
#include "core/log.h"
#include "hone/limits.h"
#include "ops/attrs.h"
#include "ops/nonzero.h"

namespace hone::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

md_t any_md(const dims_t& dims) {
  return md_t(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

dnnl::primitive_attr user_scratch() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

md_t plain_md(const dims_t& dims, dnnl::memory::data_type dt) {
  dims_t d = dims.empty() ? dims_t{1} : dims;
  dims_t strides(d.size(), 1);
  for (size_t i = d.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * d[i];
  return md_t(d, dt, strides);
}

md_t bytes_md(size_t nbytes) {
  return md_t({static_cast<int64_t>(std::max<size_t>(nbytes, 1))}, dnnl::memory::data_type::u8,
              dnnl::memory::format_tag::a);
}

bool is_plain(const md_t& md) {
  return md == plain_md(md.dims());
}

dims_t pad_left(const dims_t& dims, size_t rank) {
  dims_t out(rank > dims.size() ? rank - dims.size() : 0, 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

// Outside the anonymous namespace: RunContext (declared in plan.h) holds Arenas.
struct AlignedFree {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using Arena = std::unique_ptr<std::byte[], AlignedFree>;

namespace {

Arena make_arena(size_t bytes) {
  if (bytes == 0) return nullptr;
  return Arena(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64))));
}

}  // namespace

struct RunContext {
  Arena arena, scratch;
  dnnl::stream stream;
  std::vector<std::unordered_map<int, dnnl::memory>> args;  // per step
  /// Per own step, its args' memory objects in the step's order (into `args`).
  std::vector<std::vector<const dnnl::memory*>> own;
  /// Memory objects over input or output buffers, rebound every run.
  std::vector<std::pair<dnnl::memory*, int>> io;  // (memory, buffer index)
};

Plan::Plan() = default;
Plan::~Plan() = default;

std::unique_ptr<RunContext> Plan::acquire() const {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      auto ctx = std::move(pool_.back());
      pool_.pop_back();
      return ctx;
    }
  }
  auto ctx = std::make_unique<RunContext>();
  const dnnl::engine& eng = cpu_engine();
  ctx->arena = make_arena(arena_bytes);
  ctx->scratch = make_arena(scratch_bytes);
  ctx->stream = dnnl::stream(eng);
  ctx->args.resize(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    auto& args = ctx->args[i];
    for (const auto& [arg, ref] : s.args) {
      const Buffer& b = buffers[static_cast<size_t>(ref.buffer)];
      void* ptr = b.kind == Buffer::Kind::kTemp       ? ctx->arena.get() + b.offset
                  : b.kind == Buffer::Kind::kConstant ? b.data
                                                      : nullptr;  // bound per run
      args.emplace(arg, dnnl::memory(ref.md, eng, ptr));
    }
    if (s.scratch_bytes > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   dnnl::memory(md_t({static_cast<int64_t>(s.scratch_bytes)},
                                     dnnl::memory::data_type::u8, dnnl::memory::format_tag::a),
                                eng, ctx->scratch.get()));
  }
  // Pointers into the maps stay valid: the maps are not touched again.
  ctx->own.resize(steps.size());
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].own)
      for (const auto& [arg, ref] : steps[i].args) ctx->own[i].push_back(&ctx->args[i].at(arg));
  for (size_t i = 0; i < steps.size(); ++i)
    for (const auto& [arg, ref] : steps[i].args) {
      const Buffer::Kind k = buffers[static_cast<size_t>(ref.buffer)].kind;
      if (k == Buffer::Kind::kInput || k == Buffer::Kind::kOutput)
        ctx->io.push_back({&ctx->args[i].at(arg), ref.buffer});
    }
  return ctx;
}

void Plan::release(std::unique_ptr<RunContext> ctx) const {
  std::lock_guard lock(pool_mu_);
  pool_.push_back(std::move(ctx));
}

Result<std::vector<Tensor>> Plan::run(const std::vector<Tensor>& inputs,
                                      std::atomic<uint64_t>* executions) const {
  try {
    std::vector<Tensor> outputs;
    outputs.reserve(output_dims.size());
    for (size_t k = 0; k < output_dims.size(); ++k) {
      if (host_outputs[k]) {
        outputs.push_back(host_outputs[k]->clone());
        continue;
      }
      HONE_TRY(Tensor t, Tensor::allocate(output_dtypes[k], output_dims[k]));
      outputs.push_back(std::move(t));
    }
    std::unique_ptr<RunContext> ctx = acquire();
    for (auto& [mem, buffer] : ctx->io) {
      const Buffer& b = buffers[static_cast<size_t>(buffer)];
      // oneDNN takes void*; no step ever writes into an input buffer.
      mem->set_data_handle(b.kind == Buffer::Kind::kInput
                               ? const_cast<void*>(inputs[static_cast<size_t>(b.index)].raw())
                               : outputs[static_cast<size_t>(b.index)].raw());
    }
    // HONE_ONEDNN_PROFILE=1: each step's time in this run, logged (info) at
    // its end, slowest first, as HONE_EVAL_PROFILE does for the reference;
    // for finding where a block spends its time, not for timing it (the
    // stream is waited on after every step).
    static const bool profile = std::getenv("HONE_ONEDNN_PROFILE") != nullptr;
    std::vector<double> spent(profile ? steps.size() : 0);
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto started =
          profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      if (const Step& s = steps[i]; s.own) {
        ctx->stream.wait();  // what the primitives before it wrote
        void* ptrs[kMaxOwnArgs] = {};
        for (size_t k = 0; k < ctx->own[i].size(); ++k) ptrs[k] = ctx->own[i][k]->get_data_handle();
        if (auto r = s.own(ptrs); !r) {
          release(std::move(ctx));  // nothing in it is left half-made
          return fail(std::move(r).error());
        }
      } else {
        s.prim.execute(ctx->stream, ctx->args[i]);
      }
      if (profile) {
        ctx->stream.wait();
        spent[i] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
      }
      executions->fetch_add(1, std::memory_order_relaxed);
    }
    ctx->stream.wait();
    if (profile) log_profile(spent);
    release(std::move(ctx));  // a context whose run threw is dropped, not reused
    HONE_CHECK_OK(ops::unpack_counted(outputs, counted_outputs));  // NonZero's, NMS's
    HONE_CHECK_OK(unpack_sized(outputs, sized_outputs));           // run-time Slices'
    return outputs;
  } catch (const dnnl::error& e) {
    return fail(ErrorCode::kInternal,
                std::string("oneDNN failed while running a block: ") + e.what());
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kOutOfMemory, "out of memory while running a oneDNN block");
  }
}

void Plan::log_profile(const std::vector<double>& spent) const {
  std::vector<size_t> order(spent.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spent[a] > spent[b]; });
  double total = 0;
  for (double ms : spent) total += ms;
  std::string line;
  for (size_t i : order) {
    if (spent[i] < total * 0.005) break;  // the tail of tiny steps says little
    const Step& s = steps[i];
    std::string dims;  // the result's (the last arg's where none is DNNL_ARG_DST)
    const BufferRef* out = s.args.empty() ? nullptr : &s.args.back().second;
    for (const auto& [arg, ref] : s.args)
      if (arg == DNNL_ARG_DST) out = &ref;
    if (out != nullptr)
      for (int64_t d : out->md.dims()) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    line += fmt::format("; #{} {} [{}] {:.3f} ms", i, s.kind, dims, spent[i]);
  }
  HONE_LOG_INFO("onednn profile of a block of {} steps: {:.3f} ms{}", steps.size(), total, line);
}

std::string Plan::describe() const {
  std::string out;
  for (const Step& s : steps) out += (out.empty() ? "" : ", ") + s.kind;
  return blocked16 ? out + " (convs on nChw16c)" : out;
}

size_t Plan::compute_steps() const {
  size_t n = 0;
  for (const Step& s : steps) n += s.kind != "reorder";
  return n;
}

// --- PlanBuilder -----------------------------------------------------------

PlanBuilder::PlanBuilder(const Graph& g) : g_(g) {
  for (const Node& n : g_.nodes()) {
    const int64_t group = n.op_type == "Conv" ? ops::conv_group(n) : 1;
    const Value* w = n.inputs.size() > 1 && n.inputs[1] >= 0 ? &g_.value(n.inputs[1]) : nullptr;
    if (group > 1 && w != nullptr && w->initializer && w->initializer->rank() == 4 &&
        w->initializer->dim(1) == 1 && w->initializer->dim(0) == group)
      has_depthwise_ = true;
    // What lower_conv may run by Winograd on nChw16c: 3x3, stride 1, no
    // dilation, no groups, channels in 16s, constant weights.
    if (n.op_type == "Conv" && group == 1 && w != nullptr && w->initializer &&
        w->initializer->rank() == 4 && w->initializer->dim(0) % 16 == 0 &&
        w->initializer->dim(1) % 16 == 0 && w->initializer->dim(2) == 3 &&
        w->initializer->dim(3) == 3) {
      const auto ca = ops::conv_attrs(n);
      auto ones = [](const std::vector<int64_t>& v) {
        return std::all_of(v.begin(), v.end(), [](int64_t d) { return d == 1; });
      };
      has_winograd_conv_ = has_winograd_conv_ || (ca && ones(ca->strides) && ones(ca->dilations));
    }
  }
}

bool PlanBuilder::has(ValueId v) const {
  return v >= 0 && static_cast<size_t>(v) < defined_.size() && defined_[static_cast<size_t>(v)];
}

void PlanBuilder::set(ValueId v, PValue pv) {
  values_[static_cast<size_t>(v)] = std::move(pv);
  defined_[static_cast<size_t>(v)] = true;
}

const Tensor* PlanBuilder::constant(ValueId v) const {
  if (v < 0) return nullptr;
  if (host_[static_cast<size_t>(v)]) return &*host_[static_cast<size_t>(v)];
  const Value& val = g_.value(v);
  return val.initializer ? &*val.initializer : nullptr;
}

std::string PlanBuilder::choose(const Node& n, const std::string& kind,
                                const std::vector<std::string>& runnable,
                                const std::function<std::vector<double>()>& time) {
  // An unnamed node is named by its place in the block (the same each build).
  const std::string node = n.name.empty()
                               ? "node " + std::to_string(node_id(&n)) + " (" + n.op_type + ")"
                               : n.describe();
  const std::string label = node + (prefer_blocked16_ ? " [nChw16c plan] " : " [any plan] ") + kind;
  std::vector<dims_t> in;
  for (ValueId v : n.inputs) {
    if (v < 0) continue;
    if (const Tensor* t = constant(v)) {
      in.push_back(t->shape());
    } else if (has(v)) {
      in.push_back(value(v).dims);
    }
  }
  const std::string mode = bf16() ? "bf16" : "fp32";
  if (choices_ != nullptr) return choices_->choose(label, in, mode, runnable, time);
  TimedChoices untracked;  // times as the record would, keeping nothing
  return untracked.choose(label, in, mode, runnable, time);
}

int PlanBuilder::new_temp(const md_t& md) {
  Buffer b;
  b.kind = Buffer::Kind::kTemp;
  b.size = md.get_size();
  plan_->buffers.push_back(std::move(b));  // its offset comes from place_temps()
  return static_cast<int>(plan_->buffers.size() - 1);
}

int PlanBuilder::new_constant(Tensor t) {
  Buffer b;
  b.kind = Buffer::Kind::kConstant;
  b.data = const_cast<void*>(t.raw());
  auto holder = std::make_shared<Tensor>(std::move(t));
  b.owner = holder;
  plan_->buffers.push_back(std::move(b));
  return static_cast<int>(plan_->buffers.size() - 1);
}

void PlanBuilder::add_step(std::string kind, dnnl::primitive prim,
                           const dnnl::primitive_desc_base& pd,
                           std::vector<std::pair<int, BufferRef>> args) {
  Step s{std::move(kind), std::move(prim), std::move(args), pd.scratchpad_desc().get_size(), {}};
  plan_->scratch_bytes = std::max(plan_->scratch_bytes, s.scratch_bytes);
  plan_->steps.push_back(std::move(s));
}

BufferRef PlanBuilder::reorder_to(const BufferRef& src, const md_t& want) {
  if (src.md == want) return src;
  if (same_bytes(src.md, want)) return BufferRef{src.buffer, want};  // a view, no step
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::reorder::primitive_desc pd(cpu_engine(), src.md, cpu_engine(), want, attr);
  BufferRef dst{new_temp(want), want};
  add_step("reorder", dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  return dst;
}

BufferRef PlanBuilder::ensure(ValueId v, const md_t& want) {
  const PValue& pv = value(v);
  if (pv.ref.md == want) return pv.ref;
  if (same_bytes(pv.ref.md, want)) return BufferRef{pv.ref.buffer, want};
  BufferRef dst = reorder_to(pv.ref, want);
  // Later readers wanting plain layout reuse the converted copy.
  if (is_plain(want)) set(v, PValue{pv.dims, dst});
  return dst;
}

BufferRef PlanBuilder::pack(const Tensor& t, const md_t& src_view, const md_t& want) {
  const dnnl::engine& eng = cpu_engine();
  Tensor packed = Tensor::zeros(DType::kU8, {static_cast<int64_t>(want.get_size())});
  dnnl::memory src(src_view, eng, const_cast<void*>(t.raw()));
  dnnl::memory dst(want, eng, packed.raw());
  dnnl::stream s(eng);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  return BufferRef{new_constant(std::move(packed)), want};
}

const Node* PlanBuilder::sole_consumer(ValueId v) const {
  if (v < 0 || is_output_[static_cast<size_t>(v)] || consumers_[static_cast<size_t>(v)] != 1)
    return nullptr;
  return last_consumer_[static_cast<size_t>(v)];
}

bool PlanBuilder::dies_at(ValueId v, const Node* reader) const {
  if (!has(v)) return false;
  const int buf = value(v).ref.buffer;
  // A slice's bytes are also its parent's value (a Concat's output), alive elsewhere.
  if (const Buffer& b = plan_->buffers[static_cast<size_t>(buf)];
      b.kind != Buffer::Kind::kTemp || b.sliced)
    return false;
  for (size_t u = 0; u < values_.size(); ++u) {
    if (!defined_[u] || values_[u].ref.buffer != buf) continue;
    if (is_output_[u]) return false;
    for (const Node* c : readers_[u])
      if (c != reader && !lowered_[static_cast<size_t>(node_id(c))]) return false;
  }
  return true;
}

Result<std::shared_ptr<const Plan>> PlanBuilder::build(const std::vector<dims_t>& input_dims,
                                                       const std::vector<const Tensor*>& known,
                                                       const std::vector<DType>& dtypes) {
  const size_t nv = g_.values().size();
  values_.assign(nv, PValue{});
  defined_.assign(nv, false);
  host_.assign(nv, std::nullopt);
  empty_.assign(nv, false);
  consumers_.assign(nv, 0);
  last_consumer_.assign(nv, nullptr);
  readers_.assign(nv, {});
  lowered_.assign(g_.nodes().size(), false);
  is_output_.assign(nv, false);
  absorbed_.clear();
  has_channel_concat_ = false;
  plan_ = std::make_shared<Plan>();
  plan_->blocked16 = prefer_blocked16_;
  for (const Node& n : g_.nodes())
    for (ValueId v : n.inputs)
      if (v >= 0) {
        ++consumers_[static_cast<size_t>(v)];
        last_consumer_[static_cast<size_t>(v)] = &n;
        readers_[static_cast<size_t>(v)].push_back(&n);
      }
  for (ValueId v : g_.outputs()) is_output_[static_cast<size_t>(v)] = true;

  if (input_dims.size() != g_.inputs().size())
    return fail(ErrorCode::kInvalidArgument, "block expects " + std::to_string(g_.inputs().size()) +
                                                 " inputs, got " +
                                                 std::to_string(input_dims.size()));
  try {
    for (size_t i = 0; i < input_dims.size(); ++i) {
      if (i < known.size() && known[i] != nullptr) {
        if (known[i]->numel() == 0)
          set_empty(g_.inputs()[i], *known[i]);  // lower_empty.cpp
        else
          set_host(g_.inputs()[i], *known[i]);  // read by no primitive: no buffer
        continue;
      }
      const DType t = i < dtypes.size() ? dtypes[i] : DType::kF32;
      if (shape_numel(input_dims[i]) == 0) {
        // No element: known now, read by no step (lower_empty.cpp). Its dtype
        // is the declared one where the key says f32 by default.
        const DType declared = g_.value(g_.inputs()[i]).dtype;
        set_empty(g_.inputs()[i],
                  Tensor::zeros(t == DType::kF32 && declared != DType::kUndefined ? declared : t,
                                input_dims[i]));
        continue;
      }
      Buffer b;
      b.kind = Buffer::Kind::kInput;
      b.index = static_cast<int>(i);
      plan_->buffers.push_back(b);
      const md_t md = t == DType::kF32 ? plain_md(input_dims[i])
                                       : bytes_md(shape_numel(input_dims[i]) * dtype_size(t));
      set(g_.inputs()[i],
          PValue{input_dims[i], {static_cast<int>(plan_->buffers.size() - 1), md}, t});
    }
    for (size_t v = 0; v < nv; ++v) {
      const Value& val = g_.values()[v];
      if (!val.initializer || val.initializer->dtype() != DType::kF32) continue;
      if (val.initializer->numel() == 0) continue;
      set(static_cast<ValueId>(v),
          PValue{val.initializer->shape(),
                 {new_constant(*val.initializer), plain_md(val.initializer->shape())}});
    }
    HONE_CHECK_OK(lower_all());
    HONE_CHECK_OK(finish_outputs());
    HONE_CHECK_OK_CTX(place_temps(), "while planning the arena of block '" + g_.name() + "'");
  } catch (const dnnl::error& e) {
    return fail(ErrorCode::kUnsupported, std::string("oneDNN refused a primitive: ") + e.what());
  }
  // Each run context allocates both; a hostile shape fails here, named.
  HONE_CHECK_OK(check_allocation(plan_->arena_bytes + plan_->scratch_bytes,
                                 "the oneDNN arena of block '" + g_.name() + "'"));
  return std::shared_ptr<const Plan>(std::move(plan_));
}

Result<void> PlanBuilder::lower_all() {
  HONE_TRY(std::vector<NodeId> order, g_.topological_order());
  for (NodeId id : order) {
    if (absorbed_.count(id)) continue;
    const Node& n = g_.node(id);
    for (ValueId v : n.inputs)
      // Empty f32 constants (Resize's absent roi or scales) are read as constants only.
      if (v >= 0 && !has(v) &&
          (!constant(v) || (constant(v)->dtype() == DType::kF32 && constant(v)->numel() > 0)))
        return fail(ErrorCode::kInternal, "value '" + g_.value(v).name + "' read by node " +
                                              n.describe() + " was not lowered");
    lowering_fp32_ = fp32_nodes_.count(n.name) > 0;
    try {
      HONE_CHECK_OK_CTX(lower_node(*this, n), "while lowering node " + n.describe() + " to oneDNN");
    } catch (const dnnl::error& e) {
      return fail(ErrorCode::kUnsupported, "oneDNN refused node " + n.describe() + ": " + e.what());
    }
    lowered_[static_cast<size_t>(id)] = true;
  }
  return {};
}

Result<void> PlanBuilder::finish_outputs() {
  std::set<int> taken;
  for (size_t k = 0; k < g_.outputs().size(); ++k) {
    const ValueId v = g_.outputs()[k];
    if (host_[static_cast<size_t>(v)] && (!has(v) || value(v).dtype != DType::kF32)) {
      plan_->output_dims.push_back(host_[static_cast<size_t>(v)]->shape());
      plan_->output_dtypes.push_back(host_[static_cast<size_t>(v)]->dtype());
      plan_->host_outputs.push_back(host_[static_cast<size_t>(v)]);
      continue;
    }
    plan_->host_outputs.push_back(std::nullopt);
    if (!has(v))
      return fail(ErrorCode::kInternal, "block output '" + g_.value(v).name + "' was not lowered");
    PValue pv = value(v);
    plan_->output_dims.push_back(pv.dims);
    plan_->output_dtypes.push_back(pv.dtype);
    if (auto it = counted_.find(v); it != counted_.end()) {
      plan_->counted_outputs.push_back(it->second);
      plan_->counted_outputs.back().output = k;
    }
    if (auto it = sized_.find(v); it != sized_.end())
      plan_->sized_outputs.emplace_back(k, it->second);
    if (pv.dtype != DType::kF32) {
      // Plain bytes already; a view of an input, a constant or another
      // output's bytes is copied into a temporary of its own first.
      if (plan_->buffers[static_cast<size_t>(pv.ref.buffer)].kind != Buffer::Kind::kTemp ||
          plan_->buffers[static_cast<size_t>(pv.ref.buffer)].sliced || taken.count(pv.ref.buffer))
        pv.ref = copy_bytes(*this, pv.ref, shape_numel(pv.dims) * dtype_size(pv.dtype));
      Buffer& b = plan_->buffers[static_cast<size_t>(pv.ref.buffer)];
      b.kind = Buffer::Kind::kOutput;
      b.index = static_cast<int>(k);
      taken.insert(pv.ref.buffer);
      continue;
    }
    const md_t want = plain_md(pv.dims);
    Buffer& b = plan_->buffers[static_cast<size_t>(pv.ref.buffer)];
    if (b.kind == Buffer::Kind::kTemp && !b.sliced && pv.ref.md == want &&
        !taken.count(pv.ref.buffer)) {
      // The last writer of this value writes straight into the output tensor.
      b.kind = Buffer::Kind::kOutput;
      b.index = static_cast<int>(k);
      taken.insert(pv.ref.buffer);
      continue;
    }
    Buffer out;
    out.kind = Buffer::Kind::kOutput;
    out.index = static_cast<int>(k);
    plan_->buffers.push_back(out);
    BufferRef dst{static_cast<int>(plan_->buffers.size() - 1), want};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::reorder::primitive_desc pd(cpu_engine(), pv.ref.md, cpu_engine(), want, attr);
    add_step("reorder", dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, pv.ref}, {DNNL_ARG_TO, dst}});
  }
  return {};
}

namespace {

/// Shape arithmetic, masks and tables computed from dims and constants
/// (common/host_eval.h, Policy::kAnyDtype): evaluated now, once per input
/// signature. Its outputs become plan constants that PlanBuilder::constant()
/// returns; an f32 one is also a constant buffer the primitives read.
Result<void> lower_host(PlanBuilder& b, const Node& n) {
  const Graph& g = b.graph();
  host_eval::Env env;
  env.dims = [&](ValueId v) -> const std::vector<int64_t>* {
    if (b.has(v)) return &b.value(v).dims;
    const Tensor* t = b.constant(v);  // the Shape of a constant or of a host value
    return t != nullptr ? &t->shape() : nullptr;
  };
  env.value = [&](ValueId v) { return b.constant(v); };
  HONE_TRY(std::vector<Tensor> outs, host_eval::evaluate(g, n, env));
  size_t k = 0;
  for (ValueId v : n.outputs) {
    if (v < 0) continue;
    Tensor t = std::move(outs[k++]);
    if (t.dtype() == DType::kF32 && t.numel() > 0)
      b.set(v, PValue{t.shape(), {b.new_constant(t), plain_md(t.shape())}});
    b.set_host(v, std::move(t));
  }
  return {};
}

/// Every input of `n` is known now and one has no buffer (an integer value
/// of a known block input, or computed from one): no step could read it, so
/// `n` is evaluated now, as a host node is.
bool known_now(const PlanBuilder& b, const Node& n) {
  bool some = false, unbuffered = false;
  for (ValueId v : n.inputs) {
    if (v < 0) continue;
    if (b.constant(v) == nullptr) return false;
    some = true;
    unbuffered = unbuffered || !b.has(v);
  }
  return some && unbuffered;
}

}  // namespace

Result<void> lower_node(PlanBuilder& b, const Node& n) {
  if (reads_empty(b, n)) return lower_empty(b, n);
  if (host_eval::host_node(b.graph(), n, kHostPolicy) || known_now(b, n)) return lower_host(b, n);
  if (lowers_misc(b, n)) return lower_misc(b, n);
  // Gather of integer data (a column of ids): the own step moves any dtype.
  if (n.op_type == "Gather" && b.dtype(n.inputs[0]) != DType::kF32 &&
      b.dtype(n.inputs[0]) != DType::kUndefined)
    return lower_gather_at_run_time(b, n);
  HONE_CHECK_OK(check_f32_reads(b, n));
  if (n.op_type == "Where") return lower_where(b, n);
  if (n.op_type == "Cast") return lower_cast(b, n);
  if (n.op_type == "Conv" || n.op_type == "Gemm" || n.op_type == "MatMul") return lower_dense(b, n);
  if (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN") return lower_rnn(b, n);
  if (n.op_type == "Resize" || n.op_type == "ConvTranspose") return lower_resample(b, n);
  if (n.op_type == "Gather") return lower_gather(b, n);
  if (n.op_type == "Expand") return lower_expand(b, n);
  return lower_simple(b, n);
}

}  // namespace hone::onednn
