#include "eval/interpreter.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <map>
#include <new>
#include <set>

#include "core/log.h"
#include "eval/kernel_util.h"
#include "hone/shape.h"

namespace hone::eval {

const RuntimeValue* Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent) {
    const ValueId id = s->graph->find_value(name);
    if (id != kNoValue && !(*s->env)[id].is_none()) return &(*s->env)[id];
    if (id != kNoValue && (*s->env)[id].optional) return &(*s->env)[id];
  }
  return nullptr;
}

Result<const Tensor*> KernelContext::tensor(size_t i) const {
  if (!has_input(i))
    return fail(ErrorCode::kInvalidArgument,
                node_.op_type + " requires input " + std::to_string(i) + ", which is missing");
  if (!inputs_[i]->is_tensor())
    return fail(ErrorCode::kInvalidArgument, node_.op_type + " input " + std::to_string(i) +
                                                 " must be a tensor, got a sequence");
  return &inputs_[i]->tensor;
}

bool KernelContext::wants_output(size_t i) const {
  return i < node_.outputs.size() && node_.outputs[i] != kNoValue &&
         !graph_.value(node_.outputs[i]).name.empty();
}

Result<std::vector<RuntimeValue>> KernelContext::run_subgraph(
    const Graph& g, std::vector<RuntimeValue> inputs) const {
  if (interpreter_ != nullptr) return interpreter_->run_subgraph(g, std::move(inputs), scope_);
  if (bodies_ != nullptr)
    if (auto done = bodies_->run(g, inputs, scope_)) return std::move(*done);
  return fail(ErrorCode::kInternal, "subgraph '" + g.name() + "' of node " + node_.describe() +
                                        " has no compiled program to run");
}

void OpRegistry::add(const std::string& op_type, KernelFn fn, const std::string& domain) {
  kernels_[{domain == "ai.onnx" ? "" : domain, op_type}] = std::move(fn);
}

const KernelFn* OpRegistry::find(const std::string& op_type, const std::string& domain) const {
  auto it = kernels_.find({domain == "ai.onnx" ? "" : domain, op_type});
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [key, fn] : kernels_)
    out.push_back(key.first.empty() ? key.second : key.first + "." + key.second);
  return out;
}

namespace {

Result<void> check_supported_in(const OpRegistry& ops, const Graph& graph) {
  for (const Node& n : graph.nodes()) {
    if (ops.find(n.op_type, n.domain) == nullptr)
      return fail(ErrorCode::kUnsupported,
                  "no reference kernel for op '" + n.op_type + "'" +
                      (n.domain.empty() ? std::string() : " in domain '" + n.domain + "'") +
                      " at node " + n.describe());
    for (const auto& [key, attr] : n.attrs) {
      if (const auto* g = std::get_if<std::shared_ptr<const Graph>>(&attr)) {
        HONE_CHECK_OK_CTX(check_supported_in(ops, **g),
                          "in subgraph '" + key + "' of node " + n.describe());
      } else if (const auto* gs = std::get_if<std::vector<std::shared_ptr<const Graph>>>(&attr)) {
        for (const auto& sg : *gs)
          HONE_CHECK_OK_CTX(check_supported_in(ops, *sg),
                            "in subgraph '" + key + "' of node " + n.describe());
      }
    }
  }
  return {};
}

}  // namespace

Result<std::vector<RuntimeValue>> Interpreter::run_subgraph(const Graph& g,
                                                            std::vector<RuntimeValue> inputs,
                                                            const Scope* scope) const {
  if (subgraph_runner_ != nullptr)
    if (auto done = subgraph_runner_->run(g, inputs, scope)) return std::move(*done);
  return run(g, std::move(inputs), scope);
}

Result<void> Interpreter::check_supported(const Graph& graph) const {
  return check_supported_in(*ops_, graph);
}

Result<void> check_inputs(const Graph& graph, const std::vector<RuntimeValue>& inputs) {
  if (inputs.size() != graph.inputs().size())
    return fail(ErrorCode::kInvalidArgument, "graph '" + graph.name() + "' takes " +
                                                 std::to_string(graph.inputs().size()) +
                                                 " inputs, got " + std::to_string(inputs.size()));
  std::map<std::string, int64_t> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& decl = graph.value(graph.inputs()[i]);
    const RuntimeValue& got = inputs[i];
    if (!got.is_tensor()) continue;  // sequences/optionals: checked by the ops that read them
    const Tensor& t = got.tensor;
    auto where = [&] { return "input " + std::to_string(i) + " '" + decl.name + "'"; };
    if (decl.dtype != DType::kUndefined && decl.kind == ValueKind::kTensor &&
        t.dtype() != decl.dtype)
      return fail(ErrorCode::kInvalidArgument, where() + " must be " +
                                                   std::string(dtype_name(decl.dtype)) + ", got " +
                                                   std::string(dtype_name(t.dtype())));
    if (!decl.shape || decl.kind != ValueKind::kTensor) continue;
    const Shape& s = *decl.shape;
    if (s.rank() != t.rank())
      return fail(ErrorCode::kInvalidArgument, where() + " must have rank " +
                                                   std::to_string(s.rank()) + " " + s.to_string() +
                                                   ", got shape " + shape_to_string(t.shape()));
    for (size_t a = 0; a < s.rank(); ++a) {
      const Dim& d = s[a];
      if (d.is_static() && d.value() != t.dim(a))
        return fail(ErrorCode::kInvalidArgument, where() + " axis " + std::to_string(a) +
                                                     " must be " + std::to_string(d.value()) +
                                                     " (declared " + s.to_string() +
                                                     "), got shape " + shape_to_string(t.shape()));
      if (d.is_symbolic()) {
        auto [it, inserted] = symbols.emplace(d.symbol_name(), t.dim(a));
        if (!inserted && it->second != t.dim(a))
          return fail(ErrorCode::kInvalidArgument,
                      where() + " axis " + std::to_string(a) + " is dim '" + d.symbol_name() +
                          "' = " + std::to_string(t.dim(a)) + ", but another input set it to " +
                          std::to_string(it->second));
      }
    }
  }
  return {};
}

Result<Schedule> schedule(const Graph& graph) {
  Schedule s;
  HONE_TRY(s.order, graph.topological_order());
  // Last reader of each value, so intermediates are freed as soon as possible.
  s.last_use.assign(graph.values().size(), -1);
  for (size_t step = 0; step < s.order.size(); ++step)
    for (ValueId v : graph.node(s.order[step]).inputs)
      if (v != kNoValue) s.last_use[v] = static_cast<int64_t>(step);
  // A value captured by a node's subgraphs (If/Loop/Scan bodies) is read by
  // that node too, so it must live until then.
  for (size_t step = 0; step < s.order.size(); ++step) {
    for (const std::string& name : captured_names(graph.node(s.order[step]))) {
      const ValueId v = graph.find_value(name);
      if (v != kNoValue) s.last_use[v] = std::max(s.last_use[v], static_cast<int64_t>(step));
    }
  }
  s.keep.assign(graph.values().size(), false);
  for (ValueId v : graph.outputs()) s.keep[v] = true;
  return s;
}

Result<std::vector<RuntimeValue>> Interpreter::run(const Graph& graph,
                                                   std::vector<RuntimeValue> inputs,
                                                   const Scope* outer) const {
  HONE_TRY(Schedule plan, schedule(graph));
  return run(graph, plan, std::move(inputs), outer);
}

Result<std::vector<RuntimeValue>> Interpreter::run(const Graph& graph, const Schedule& plan,
                                                   std::vector<RuntimeValue> inputs,
                                                   const Scope* outer) const {
  HONE_CHECK_OK(check_inputs(graph, inputs));
  if (plan.last_use.size() != graph.values().size() || plan.keep.size() != graph.values().size())
    return fail(ErrorCode::kInternal,
                "the schedule given for graph '" + graph.name() + "' was made for another graph");
  const std::vector<NodeId>& order = plan.order;
  const std::vector<int64_t>& last_use = plan.last_use;
  const std::vector<bool>& keep = plan.keep;

  std::vector<RuntimeValue> env(graph.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) env[graph.inputs()[i]] = std::move(inputs[i]);
  for (size_t v = 0; v < graph.values().size(); ++v)
    if (graph.values()[v].initializer) env[v] = RuntimeValue::of(*graph.values()[v].initializer);

  Scope scope{&graph, &env, outer};
  auto resolve = [&](ValueId v) -> const RuntimeValue* {
    if (v == kNoValue) return nullptr;
    const Value& val = graph.value(v);
    if (val.name.empty()) return nullptr;  // omitted optional input
    if (!env[v].is_none() || env[v].optional || val.producer >= 0) return &env[v];
    if (outer != nullptr) {
      if (const RuntimeValue* o = outer->lookup(val.name)) return o;
    }
    return &env[v];
  };

  // HONE_EVAL_PROFILE=1: each op type's time in this run, logged (info) at
  // its end, slowest first; for finding where the reference spends a large
  // model's time, not for timing it.
  static const bool profile = std::getenv("HONE_EVAL_PROFILE") != nullptr;
  std::map<std::string, std::pair<double, int>> spent;
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& node = graph.node(order[step]);
    std::vector<const RuntimeValue*> ins;
    ins.reserve(node.inputs.size());
    for (ValueId v : node.inputs) ins.push_back(resolve(v));
    std::vector<RuntimeValue> outs(node.outputs.size());
    const KernelFn* fn = ops_->find(node.op_type, node.domain);
    // Built only for an error: a string per node per run is a measurable
    // share of small graphs' run time.
    auto ctx_line = [&node] { return "while running node " + node.describe(); };
    if (fn == nullptr)
      return fail(
          Error(ErrorCode::kUnsupported, "no reference kernel for op '" + node.op_type + "'")
              .add_context(ctx_line()));
    const auto started =
        profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    Result<void> r = run_kernel(*fn, node, graph, std::move(ins), outs, &scope);
    if (!r) return fail(std::move(r).error().add_context(ctx_line()));
    if (profile) {
      auto& [ms, count] = spent[node.op_type];
      ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
      ++count;
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ValueId v = node.outputs[o];
      if (v == kNoValue || graph.value(v).name.empty()) continue;
      if (outs[o].is_none() && !outs[o].optional)
        return fail(Error(ErrorCode::kInternal, "kernel did not produce output " +
                                                    std::to_string(o) + " '" + graph.value(v).name +
                                                    "'")
                        .add_context(ctx_line()));
      env[v] = std::move(outs[o]);
    }
    for (ValueId v : node.inputs)
      if (v != kNoValue && last_use[v] == static_cast<int64_t>(step) && !keep[v] &&
          graph.value(v).producer >= 0)
        env[v] = RuntimeValue();
  }

  if (profile && !spent.empty()) {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [op, t] : spent) {
      rows.emplace_back(t.first, op + " x" + std::to_string(t.second));
      total += t.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::string line;
    for (const auto& [ms, what] : rows) line += fmt::format("; {} {:.1f} ms", what, ms);
    HONE_LOG_INFO("reference profile of '{}': {:.1f} ms{}", graph.name(), total, line);
  }
  std::vector<RuntimeValue> results;
  results.reserve(graph.outputs().size());
  for (ValueId v : graph.outputs()) {
    const RuntimeValue* r = resolve(v);
    if (r == nullptr || (r->is_none() && !r->optional))
      return fail(ErrorCode::kInvalidArgument,
                  "graph output '" + graph.value(v).name + "' was never computed");
    results.push_back(*r);
  }
  return results;
}

namespace {

RuntimeValue converted(const RuntimeValue& v, DType from, DType to) {
  RuntimeValue out = v;
  if (v.is_tensor() && v.tensor.dtype() == from) out.tensor = cast_tensor(v.tensor, to);
  if (v.is_sequence())
    for (Tensor& t : out.sequence)
      if (t.dtype() == from) t = cast_tensor(t, to);
  if (out.elem_type == from) out.elem_type = to;
  return out;
}

bool holds(const RuntimeValue* v, DType t) {
  if (v == nullptr) return false;
  if (v->is_tensor()) return v->tensor.dtype() == t;
  if (v->is_sequence())
    for (const Tensor& x : v->sequence)
      if (x.dtype() == t) return true;
  return false;
}

Result<void> guarded_call(const KernelFn& fn, KernelContext& ctx) {
  try {
    return fn(ctx);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kOutOfMemory, "out of memory");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("kernel threw: ") + e.what());
  }
}

}  // namespace

Result<void> Interpreter::run_kernel(const KernelFn& fn, const Node& node, const Graph& graph,
                                     std::vector<const RuntimeValue*> ins,
                                     std::vector<RuntimeValue>& outs, const Scope* scope) const {
  const std::vector<const RuntimeValue*> original = ins;
  KernelContext ctx(node, graph, std::move(ins), &outs, this, scope);
  Result<void> r = guarded_call(fn, ctx);
  if (precision_ != Precision::kF64) return r;
  if (!r) {
    // A kernel written for f32 only: run it on f32 copies (its answer is then
    // as good as the f32 reference's for this node, which the report's
    // calibration accounts for).
    const bool has_f64 = std::any_of(original.begin(), original.end(),
                                     [](const RuntimeValue* v) { return holds(v, DType::kF64); });
    if (r.error().code() != ErrorCode::kUnsupported || !has_f64) return r;
    std::vector<RuntimeValue> narrow;
    narrow.reserve(original.size());
    for (const RuntimeValue* v : original)
      narrow.push_back(v == nullptr ? RuntimeValue() : converted(*v, DType::kF64, DType::kF32));
    std::vector<const RuntimeValue*> ptrs;
    for (size_t i = 0; i < original.size(); ++i)
      ptrs.push_back(original[i] == nullptr ? nullptr : &narrow[i]);
    for (RuntimeValue& o : outs) o = RuntimeValue();
    KernelContext narrow_ctx(node, graph, std::move(ptrs), &outs, this, scope);
    HONE_CHECK_OK(guarded_call(fn, narrow_ctx));
  }
  // Ops whose outputs are f32 whatever their inputs (Cast to float, Constant,
  // TfIdfVectorizer, ...) would otherwise bring f32 back into the f64 run.
  for (RuntimeValue& o : outs)
    if (holds(&o, DType::kF32) || o.elem_type == DType::kF32)
      o = converted(o, DType::kF32, DType::kF64);
  return {};
}

namespace {

DType widened(DType t) {
  return t == DType::kF32 ? DType::kF64 : t;
}

Attribute widened_attr(const Attribute& a) {
  if (const auto* g = std::get_if<std::shared_ptr<const Graph>>(&a))
    return std::make_shared<const Graph>(widen_to_f64(**g));
  if (const auto* gs = std::get_if<std::vector<std::shared_ptr<const Graph>>>(&a)) {
    std::vector<std::shared_ptr<const Graph>> out;
    for (const auto& g : *gs) out.push_back(std::make_shared<const Graph>(widen_to_f64(*g)));
    return out;
  }
  return a;  // tensors in attributes (Constant, ConstantOfShape) are widened when produced
}

}  // namespace

Graph widen_to_f64(const Graph& graph) {
  Graph g = graph;
  for (size_t id = 0; id < g.values().size(); ++id) {
    Value& v = g.value(static_cast<ValueId>(id));
    v.dtype = widened(v.dtype);
    if (v.initializer && v.initializer->dtype() == DType::kF32)
      v.initializer = cast_tensor(*v.initializer, DType::kF64);
  }
  for (size_t id = 0; id < g.nodes().size(); ++id) {
    Node& n = g.node(static_cast<NodeId>(id));
    for (auto& [key, attr] : n.attrs) attr = widened_attr(attr);
  }
  return g;
}

Result<std::vector<Tensor>> Interpreter::run_tensors(const Graph& graph,
                                                     const std::vector<Tensor>& inputs,
                                                     const Schedule* plan) const {
  std::vector<RuntimeValue> ins;
  ins.reserve(inputs.size());
  for (const Tensor& t : inputs) ins.push_back(RuntimeValue::of(t));
  HONE_TRY(auto outs, plan ? run(graph, *plan, std::move(ins)) : run(graph, std::move(ins)));
  std::vector<Tensor> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_tensor())
      return fail(ErrorCode::kUnsupported, "graph output " + std::to_string(i) + " '" +
                                               graph.value(graph.outputs()[i]).name +
                                               "' is not a tensor");
    result.push_back(std::move(outs[i].tensor));
  }
  return result;
}

}  // namespace hone::eval
