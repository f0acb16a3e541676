#include "backends/aot/host_block.h"

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "backends/common/static_dims.h"

namespace hone::aot {
namespace {

/// `t` as the code reads it: as is, or as f32 where the cut made it so (a
/// Where's condition: a bool mask as 0 and 1).
Tensor as_read(const Tensor& t, DType to) {
  if (t.dtype() == to || to != DType::kF32) return t;
  Tensor out = Tensor::zeros(DType::kF32, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i)
    out.data<float>()[i] = static_cast<float>(tensor_element_as_double(t, i));
  return out;
}

/// Host values of one signature, by value id, and those the code reads as
/// its inputs (f32, in HostCut::host_inputs order), converted once.
struct HostValues : std::map<ValueId, Tensor> {
  std::vector<Tensor> code_inputs;
};

class HostBlock final : public CompiledBlock {
 public:
  HostBlock(const Graph& block, HostCut cut, std::unique_ptr<CompiledBlock> inner,
            const Program* program)
      : block_(block), cut_(std::move(cut)), inner_(std::move(inner)), program_(program) {}

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    if (inputs.size() != block_.inputs().size())
      return fail(ErrorCode::kInvalidArgument, "aot block '" + block_.name() + "' takes " +
                                                   std::to_string(block_.inputs().size()) +
                                                   " inputs, got " + std::to_string(inputs.size()));
    HONE_TRY(std::shared_ptr<const HostValues> host, host_values(inputs));
    std::vector<Tensor> outs;
    if (inner_) {
      std::vector<Tensor> in;
      for (size_t k = 0; k < cut_.real_inputs.size(); ++k)
        in.push_back(
            as_read(inputs[cut_.real_inputs[k]], cut_.graph.value(cut_.graph.inputs()[k]).dtype));
      in.insert(in.end(), host->code_inputs.begin(), host->code_inputs.end());
      HONE_TRY(outs, inner_->run(in));
    }
    // The block's outputs: the compiled code's, in order, and host values.
    std::vector<Tensor> result;
    size_t k = 0;
    for (ValueId v : block_.outputs()) {
      if (auto it = host->find(v); it != host->end()) {
        result.push_back(it->second.clone());
        continue;
      }
      if (k >= outs.size())
        return fail(ErrorCode::kInternal, "aot block '" + block_.name() + "' made too few outputs");
      result.push_back(std::move(outs[k++]));
    }
    return result;
  }

 private:
  /// The host nodes' values for the dims of `inputs`, evaluated on first use.
  Result<std::shared_ptr<const HostValues>> host_values(const std::vector<Tensor>& inputs) const {
    // Host values depend on the inputs' dims and the known inputs' values.
    ShapeSignature sig = signature_of(inputs);
    std::vector<bool> take;
    for (ValueId v : block_.inputs()) take.push_back(cut_.known[static_cast<size_t>(v)]);
    const bool cached = append_values(sig, inputs, take, kMaxKnownInput);
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(sig); cached && it != cache_.end()) return it->second;
    auto values = std::make_shared<HostValues>();
    // Dims of values aot computes: their expressions at the inputs' dims.
    std::map<std::string, int64_t> bind;
    if (program_ != nullptr)
      for (size_t k = 0; k < cut_.real_inputs.size(); ++k) {
        const DimExprs& d = program_->values[static_cast<size_t>(cut_.graph.inputs()[k])].dims;
        const std::vector<int64_t>& s = inputs[cut_.real_inputs[k]].shape();
        for (size_t a = 0; a < d.size() && a < s.size(); ++a)
          if (!d[a].is_const()) bind[d[a].to_string()] = s[a];
      }
    std::map<ValueId, size_t> input_of;
    for (size_t i = 0; i < block_.inputs().size(); ++i) input_of[block_.inputs()[i]] = i;
    std::vector<int64_t> scratch;
    host_eval::Env env;
    env.value = [&](ValueId v) -> const Tensor* {
      if (auto it = values->find(v); it != values->end()) return &it->second;
      if (auto it = input_of.find(v); it != input_of.end() && cut_.known[static_cast<size_t>(v)])
        return &inputs[it->second];
      const Value& val = block_.value(v);
      return val.initializer ? &*val.initializer : nullptr;
    };
    env.dims = [&](ValueId v) -> const std::vector<int64_t>* {
      if (auto it = input_of.find(v); it != input_of.end()) return &inputs[it->second].shape();
      if (const Tensor* t = env.value(v)) return &t->shape();
      if (program_ == nullptr || static_cast<size_t>(v) >= program_->values.size()) return nullptr;
      scratch.clear();
      for (const DimExpr& d : program_->values[static_cast<size_t>(v)].dims)
        scratch.push_back(d.eval(bind));
      return &scratch;
    };
    for (NodeId id : cut_.host_nodes) {
      const Node& n = block_.node(id);
      HONE_TRY(std::vector<Tensor> outs, host_eval::evaluate(block_, n, env));
      size_t k = 0;
      for (ValueId v : n.outputs)
        if (v >= 0) values->emplace(v, std::move(outs[k++]));
    }
    for (ValueId v : cut_.host_inputs) {
      // The compiled code checks its inputs' dims; say which value differs first.
      const Tensor& t = values->at(v);
      const DimExprs& d = program_->values[static_cast<size_t>(v)].dims;
      bool same = d.size() == t.shape().size();
      for (size_t a = 0; same && a < d.size(); ++a)
        same = !d[a].is_const() || d[a].value() == t.shape()[a];
      if (!same)
        return fail(ErrorCode::kInternal, "aot block '" + block_.name() + "': the value '" +
                                              block_.value(v).name + "' computed from dims is " +
                                              Shape::of(t.shape()).to_string() + ", not " +
                                              to_string(d) + " as shape inference said");
    }
    for (ValueId v : cut_.host_inputs)
      values->code_inputs.push_back(as_read(values->at(v), cut_.graph.value(v).dtype));
    if (cached) cache_.emplace(sig, values);
    return std::shared_ptr<const HostValues>(values);
  }

  Graph block_;
  HostCut cut_;
  std::unique_ptr<CompiledBlock> inner_;
  const Program* program_;  // owned by inner_
  mutable std::mutex mu_;
  mutable std::map<ShapeSignature, std::shared_ptr<const HostValues>> cache_;
  /// Known inputs with more elements are read, not cached by.
  static constexpr int64_t kMaxKnownInput = 64;
};

}  // namespace

std::set<std::string> run_time_values(const Graph& graph) {
  std::set<std::string> out;
  for (size_t v = 0; v < graph.values().size(); ++v) {
    const Value& val = graph.values()[v];
    if (val.dtype != DType::kF32 && val.dtype != DType::kUndefined && !val.initializer &&
        !host_eval::host_value(graph, static_cast<ValueId>(v), kHostPolicy))
      out.insert(val.name);
  }
  return out;
}

void RunTimeValues::reset(const Graph& g) {
  std::lock_guard lock(mu_);
  names_ = run_time_values(g);
  last_ = nullptr;
}

void RunTimeValues::add(const Graph& g) {
  std::lock_guard lock(mu_);
  if (&g == last_) return;
  last_ = &g;
  names_.merge(run_time_values(g));
}

std::set<std::string> RunTimeValues::names() const {
  std::lock_guard lock(mu_);
  return names_;
}

Result<std::optional<HostCut>> cut_host_nodes(const Graph& block,
                                              const std::set<std::string>& run_time) {
  // Integer and bool inputs are values another block computed from dims,
  // known to the host nodes, unless the whole graph reads them at run time
  // (`run_time`: token ids, masks), or a Where's condition the code reads as floats.
  HostCut cut;
  cut.known = host_eval::known_inputs(block, reads_as_data);
  for (ValueId v : block.inputs())
    if (run_time.count(block.value(v).name)) cut.known[static_cast<size_t>(v)] = false;
  std::vector<bool> host(block.nodes().size(), false);
  bool any = false;
  for (size_t i = 0; i < block.nodes().size(); ++i)
    any |= host[i] = host_eval::host_node(block, block.nodes()[i], kHostPolicy, cut.known);
  std::set<ValueId> conditions;  // read as f32
  for (const Node& n : block.nodes())
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && reads_as_data(n, k)) conditions.insert(n.inputs[k]);
  for (ValueId v : block.inputs())
    any |= cut.known[static_cast<size_t>(v)] ||
           (conditions.count(v) && block.value(v).dtype != DType::kF32);
  if (!any) return std::optional<HostCut>();
  HONE_TRY(std::vector<NodeId> order, block.topological_order());
  for (NodeId id : order)
    if (host[static_cast<size_t>(id)]) cut.host_nodes.push_back(id);
  // Values the aot nodes read, and those a host node makes.
  std::set<ValueId> read, made;
  // (A shape operand of an aot node, a Reshape target or Expand shape made
  // from dims, is no input of the code: its dims come from shape inference.)
  for (size_t i = 0; i < block.nodes().size(); ++i) {
    const Node& n = block.nodes()[i];
    if (host[i]) {
      for (ValueId v : n.outputs)
        if (v >= 0) made.insert(v);
      continue;
    }
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && reads_data_slot(n, k)) read.insert(n.inputs[k]);
  }
  Graph& g = cut.graph;
  g = Graph(block.name());
  g.opsets() = block.opsets();
  for (const Value& val : block.values()) {
    Value c = val;
    c.producer = -1;
    const auto id = static_cast<ValueId>(g.values().size());
    // Conditions are read as f32, the rest as they are (a builder's undefined type: f32).
    if (read.count(id) && !c.initializer && (conditions.count(id) || c.dtype == DType::kUndefined))
      c.dtype = DType::kF32;
    (void)g.add_value(std::move(c));
  }
  for (size_t i = 0; i < block.nodes().size(); ++i)
    if (!host[i]) (void)g.add_node_with_outputs(block.nodes()[i]);
  std::vector<ValueId> ins;
  for (size_t i = 0; i < block.inputs().size(); ++i)
    if (read.count(block.inputs()[i])) {
      ins.push_back(block.inputs()[i]);
      cut.real_inputs.push_back(i);
    }
  for (ValueId v : made)
    if (read.count(v)) {
      if (!block.value(v).shape)
        return fail(ErrorCode::kUnsupported,
                    "the value '" + block.value(v).name + "' computed from dims has no known rank");
      ins.push_back(v);
      cut.host_inputs.push_back(v);
    }
  g.set_inputs(std::move(ins));
  std::vector<ValueId> outs;
  for (ValueId v : block.outputs())
    if (!made.count(v)) outs.push_back(v);
  g.set_outputs(std::move(outs));
  return std::optional<HostCut>(std::move(cut));
}

Result<std::unique_ptr<CompiledBlock>> make_host_block(const Graph& block, HostCut cut,
                                                       std::unique_ptr<CompiledBlock> inner,
                                                       const Program* program) {
  if (program != nullptr) {
    // A Shape of a value aot computes reads its dims as expressions bound by
    // the block's own inputs; a symbol only a host value's dims bind (one the
    // inputs do not name) would be read before it is known.
    std::map<std::string, int64_t> bind, other;
    for (size_t k = 0; k < cut.real_inputs.size(); ++k)
      for (const DimExpr& d : program->values[static_cast<size_t>(cut.graph.inputs()[k])].dims)
        if (!d.is_const()) bind[d.to_string()] = 7;
    other = bind;
    for (const std::string& s : program->symbols) other.try_emplace(s, 1000003);
    for (NodeId id : cut.host_nodes) {
      const Node& n = block.node(id);
      if ((n.op_type != "Shape" && n.op_type != "Size") || n.inputs.empty()) continue;
      const auto v = static_cast<size_t>(n.inputs[0]);
      if (v >= program->values.size()) continue;
      for (const DimExpr& d : program->values[v].dims)
        if (d.eval(bind) != d.eval(other))
          return fail(ErrorCode::kUnsupported, n.describe() + " reads dim " + d.to_string() +
                                                   ", which only a value computed from dims binds");
    }
  }
  return std::unique_ptr<CompiledBlock>(
      std::make_unique<HostBlock>(block, std::move(cut), std::move(inner), program));
}

}  // namespace hone::aot
