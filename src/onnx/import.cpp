// ONNX ModelProto -> hone::Graph.
#include "hone/onnx.h"

#include "hone/onnx_load_options.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <exception>
#include <memory>
#include <set>
#include <unordered_map>

#include "core/log.h"
#include "onnx/proto_tensor.h"
#include "onnx/proto_types.h"
#include "onnx/schema_check.h"
#include "onnx/shape_infer.h"

namespace hone::onnx {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::ValueInfoProto;

struct ImportContext {
  detail::ExternalDataPolicy ext;
  /// Every imported (sub)graph with the proto it came from, so types found by
  /// shape inference afterwards can be merged in.
  std::vector<std::pair<const GraphProto*, Graph*>> graphs;
};

/// The graphs enclosing a subgraph being imported, innermost first.
struct OuterScope {
  const Graph* graph = nullptr;
  const OuterScope* parent = nullptr;
};

const Value* lookup_outer(const OuterScope* scope, const std::string& name) {
  for (; scope != nullptr; scope = scope->parent) {
    const ValueId id = scope->graph->find_value(name);
    if (id != kNoValue) return &scope->graph->value(id);
  }
  return nullptr;
}

std::vector<std::string> outer_names(const OuterScope* scope) {
  std::vector<std::string> names;
  for (; scope != nullptr; scope = scope->parent)
    for (const Value& v : scope->graph->values())
      if (!v.name.empty()) names.push_back(v.name);
  return names;
}

std::string normalize_domain(const std::string& d) {
  return d == "ai.onnx" ? std::string() : d;
}

std::string node_label(const NodeProto& n, int index) {
  if (!n.name().empty()) return "node '" + n.name() + "' (" + n.op_type() + ")";
  return "node #" + std::to_string(index) + " (" + n.op_type() + ")";
}

/// Merges what `type` says into `value`, keeping what it does not say.
Result<void> merge_type(const ::onnx::TypeProto& type, const std::string& what, Value& value) {
  Value tmp;
  HONE_CHECK_OK(detail::apply_type_proto(type, what, tmp));
  if (type.value_case() != ::onnx::TypeProto::VALUE_NOT_SET) value.kind = tmp.kind;
  if (tmp.dtype != DType::kUndefined) value.dtype = tmp.dtype;
  if (tmp.shape) value.shape = std::move(tmp.shape);
  return {};
}

Result<Graph> convert_graph(const GraphProto& gp, ImportContext& ctx, const OuterScope* outer);

/// value_info (declared, or added by shape inference) types intermediate
/// values; entries hone cannot represent are skipped rather than failing.
void apply_value_info(const GraphProto& gp, Graph& g) {
  for (const ValueInfoProto& vi : gp.value_info()) {
    const ValueId id = g.find_value(vi.name());
    if (id == kNoValue || g.value(id).initializer) continue;
    auto r = merge_type(vi.type(), "value '" + vi.name() + "'", g.value(id));
    if (!r) HONE_LOG_DEBUG("onnx import: ignoring value_info: {}", r.error().message());
  }
}

Result<Attribute> convert_attribute(const AttributeProto& a, ImportContext& ctx,
                                    const OuterScope* scope) {
  if (!a.ref_attr_name().empty())
    return fail(ErrorCode::kUnsupported,
                "attribute '" + a.name() + "' refers to function attribute '" + a.ref_attr_name() +
                    "'; ONNX functions are not supported");
  const AttributeProto::AttributeType held = detail::held_attribute_type(a);
  AttributeProto::AttributeType type = a.type();
  if (type == AttributeProto::UNDEFINED) type = held;
  if (held != AttributeProto::UNDEFINED && held != type)
    return fail(ErrorCode::kCorrupt, "attribute '" + a.name() + "' is declared " +
                                         AttributeProto::AttributeType_Name(type) +
                                         " but holds a " +
                                         AttributeProto::AttributeType_Name(held) + " value");
  switch (type) {
    case AttributeProto::FLOAT:
      return Attribute(a.f());
    case AttributeProto::INT:
      return Attribute(static_cast<int64_t>(a.i()));
    case AttributeProto::STRING:
      return Attribute(a.s());
    case AttributeProto::TENSOR: {
      HONE_TRY(Tensor t, detail::tensor_from_proto(a.t(), ctx.ext));
      return Attribute(std::move(t));
    }
    case AttributeProto::SPARSE_TENSOR: {
      HONE_TRY(Tensor t, detail::tensor_from_sparse_proto(a.sparse_tensor(), ctx.ext));
      return Attribute(std::move(t));
    }
    case AttributeProto::GRAPH: {
      HONE_TRY(Graph g, convert_graph(a.g(), ctx, scope));
      auto sub = std::make_shared<Graph>(std::move(g));
      ctx.graphs.emplace_back(&a.g(), sub.get());
      return Attribute(std::shared_ptr<const Graph>(std::move(sub)));
    }
    case AttributeProto::TYPE_PROTO:
      return Attribute(detail::type_proto_to_string(a.tp()));
    case AttributeProto::FLOATS:
      return Attribute(std::vector<float>(a.floats().begin(), a.floats().end()));
    case AttributeProto::INTS:
      return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AttributeProto::STRINGS:
      return Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case AttributeProto::TENSORS: {
      std::vector<Tensor> ts;
      for (const auto& tp : a.tensors()) {
        HONE_TRY(Tensor t, detail::tensor_from_proto(tp, ctx.ext));
        ts.push_back(std::move(t));
      }
      return Attribute(std::move(ts));
    }
    case AttributeProto::SPARSE_TENSORS: {
      std::vector<Tensor> ts;
      for (const auto& sp : a.sparse_tensors()) {
        HONE_TRY(Tensor t, detail::tensor_from_sparse_proto(sp, ctx.ext));
        ts.push_back(std::move(t));
      }
      return Attribute(std::move(ts));
    }
    case AttributeProto::GRAPHS: {
      std::vector<std::shared_ptr<const Graph>> gs;
      for (const auto& sub : a.graphs()) {
        HONE_TRY(Graph g, convert_graph(sub, ctx, scope));
        auto sg = std::make_shared<Graph>(std::move(g));
        ctx.graphs.emplace_back(&sub, sg.get());
        gs.push_back(std::move(sg));
      }
      return Attribute(std::move(gs));
    }
    case AttributeProto::TYPE_PROTOS: {
      std::vector<std::string> ts;
      for (const auto& tp : a.type_protos()) ts.push_back(detail::type_proto_to_string(tp));
      return Attribute(std::move(ts));
    }
    case AttributeProto::UNDEFINED:
      return fail(ErrorCode::kCorrupt, "attribute '" + a.name() + "' has no type and no value");
    default:
      return fail(ErrorCode::kCorrupt, "attribute '" + a.name() + "' has unknown type " +
                                           std::to_string(static_cast<int>(type)));
  }
}

/// The tensor a Constant node defines.
Result<Tensor> constant_value(const NodeProto& n, ImportContext& ctx) {
  if (n.attribute_size() != 1)
    return fail(ErrorCode::kCorrupt, "Constant has " + std::to_string(n.attribute_size()) +
                                         " attributes; it needs exactly one value attribute");
  const AttributeProto& a = n.attribute(0);
  if (!a.ref_attr_name().empty())
    return fail(ErrorCode::kUnsupported, "Constant refers to function attribute '" +
                                             a.ref_attr_name() +
                                             "'; ONNX functions are not supported");
  const std::string& k = a.name();
  if (k == "value") return detail::tensor_from_proto(a.t(), ctx.ext);
  if (k == "sparse_value") return detail::tensor_from_sparse_proto(a.sparse_tensor(), ctx.ext);
  if (k == "value_float") return Tensor::scalar(a.f());
  if (k == "value_int") return Tensor::scalar(static_cast<int64_t>(a.i()));
  if (k == "value_floats") {
    HONE_TRY(Tensor t, Tensor::allocate(DType::kF32, {a.floats_size()}));
    std::copy(a.floats().begin(), a.floats().end(), t.data<float>());
    return t;
  }
  if (k == "value_ints") {
    HONE_TRY(Tensor t, Tensor::allocate(DType::kI64, {a.ints_size()}));
    std::copy(a.ints().begin(), a.ints().end(), t.data<int64_t>());
    return t;
  }
  if (k == "value_string" || k == "value_strings")
    return fail(ErrorCode::kUnsupported,
                "Constant holds a string (" + k + "); string tensors are not supported");
  return fail(ErrorCode::kCorrupt, "Constant has unknown attribute '" + k + "'");
}

bool is_constant_node(const NodeProto& n) {
  return n.op_type() == "Constant" && normalize_domain(n.domain()).empty();
}

Result<Graph> convert_graph(const GraphProto& gp, ImportContext& ctx, const OuterScope* outer) {
  Graph g(gp.name().empty() ? std::string("graph") : gp.name());
  const std::string gname = "graph '" + g.name() + "'";
  // What defines each name, for duplicate messages.
  std::unordered_map<std::string, std::string> defined_by;

  auto define = [&](const std::string& name, const std::string& by) -> Result<void> {
    auto [it, inserted] = defined_by.emplace(name, by);
    if (!inserted)
      return fail(ErrorCode::kInvalidArgument, gname + " defines value '" + name + "' twice: as " +
                                                   it->second + " and as " + by);
    return {};
  };

  for (int i = 0; i < gp.initializer_size(); ++i) {
    const auto& tp = gp.initializer(i);
    if (tp.name().empty())
      return fail(ErrorCode::kCorrupt,
                  gname + " has initializer #" + std::to_string(i) + " without a name");
    HONE_CHECK_OK(define(tp.name(), "an initializer"));
    auto t = detail::tensor_from_proto(tp, ctx.ext);
    if (!t)
      return fail(std::move(t).error().add_context("while importing initializer '" + tp.name() +
                                                   "' of " + gname));
    g.add_initializer(tp.name(), std::move(*t));
  }
  for (int i = 0; i < gp.sparse_initializer_size(); ++i) {
    const auto& sp = gp.sparse_initializer(i);
    const std::string& name = sp.values().name();
    if (name.empty())
      return fail(ErrorCode::kCorrupt,
                  gname + " has sparse initializer #" + std::to_string(i) + " without a name");
    HONE_CHECK_OK(define(name, "an initializer"));
    auto t = detail::tensor_from_sparse_proto(sp, ctx.ext);
    if (!t)
      return fail(std::move(t).error().add_context("while importing sparse initializer '" + name +
                                                   "' of " + gname));
    g.add_initializer(name, std::move(*t));
  }

  std::vector<ValueId> inputs;
  for (int i = 0; i < gp.input_size(); ++i) {
    const ValueInfoProto& vi = gp.input(i);
    if (vi.name().empty())
      return fail(ErrorCode::kCorrupt,
                  gname + " has input #" + std::to_string(i) + " without a name");
    // An input that also has an initializer is a constant with a default: keep the initializer.
    const ValueId init = g.find_value(vi.name());
    if (init != kNoValue && g.value(init).initializer) continue;
    HONE_CHECK_OK(define(vi.name(), "a graph input"));
    Value v;
    v.name = vi.name();
    v.doc = vi.doc_string();
    HONE_CHECK_OK(
        detail::apply_type_proto(vi.type(), "graph input '" + vi.name() + "' of " + gname, v));
    inputs.push_back(g.add_value(std::move(v)));
  }
  g.set_inputs(inputs);

  // Pass 1: Constant nodes become initializers; other nodes' outputs get values
  // now, so nodes listed out of order still wire (validate then reports cycles).
  std::set<std::string> explicit_names;
  for (const NodeProto& n : gp.node())
    if (!n.name().empty()) explicit_names.insert(n.name());
  std::vector<bool> folded(static_cast<size_t>(gp.node_size()), false);
  for (int i = 0; i < gp.node_size(); ++i) {
    const NodeProto& n = gp.node(i);
    const std::string label = node_label(n, i) + " of " + gname;
    if (n.op_type().empty()) return fail(ErrorCode::kInvalidArgument, label + " has no op_type");
    if (is_constant_node(n)) {
      if (n.output_size() != 1 || n.output(0).empty())
        return fail(ErrorCode::kCorrupt, label + " must have exactly one named output");
      auto t = constant_value(n, ctx);
      if (!t) return fail(std::move(t).error().add_context("while importing " + label));
      HONE_CHECK_OK(define(n.output(0), "the output of " + node_label(n, i)));
      g.add_initializer(n.output(0), std::move(*t));
      folded[static_cast<size_t>(i)] = true;
      continue;
    }
    for (const std::string& out : n.output()) {
      if (out.empty()) continue;
      HONE_CHECK_OK(define(out, "the output of " + node_label(n, i)));
      Value v;
      v.name = out;
      g.add_value(std::move(v));
    }
  }

  apply_value_info(gp, g);

  auto capture = [&](const std::string& name) -> ValueId {
    Value v;
    v.name = name;
    if (const Value* o = lookup_outer(outer, name)) {
      v.kind = o->kind;
      v.dtype = o->dtype;
      v.shape = o->shape;
    }
    return g.add_value(std::move(v));
  };

  // Pass 2: nodes.
  const OuterScope scope{&g, outer};
  for (int i = 0; i < gp.node_size(); ++i) {
    if (folded[static_cast<size_t>(i)]) continue;
    const NodeProto& np = gp.node(i);
    Node n;
    n.op_type = np.op_type();
    n.domain = normalize_domain(np.domain());
    n.name = np.name();
    if (n.name.empty()) {
      n.name = np.op_type() + "_" + std::to_string(i);
      for (int k = 1; explicit_names.count(n.name); ++k)
        n.name = np.op_type() + "_" + std::to_string(i) + "_" + std::to_string(k);
    }
    const std::string ctx_line = "while importing node " + n.describe() + " of " + gname;
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(kNoValue);
        continue;
      }
      const ValueId id = g.find_value(in);
      n.inputs.push_back(id != kNoValue ? id : capture(in));
    }
    for (const std::string& out : np.output())
      n.outputs.push_back(out.empty() ? kNoValue : g.find_value(out));
    for (const AttributeProto& a : np.attribute()) {
      if (a.name().empty())
        return fail(Error(ErrorCode::kCorrupt, "an attribute has no name").add_context(ctx_line));
      if (n.attrs.count(a.name()))
        return fail(Error(ErrorCode::kCorrupt, "attribute '" + a.name() + "' appears twice")
                        .add_context(ctx_line));
      auto attr = convert_attribute(a, ctx, &scope);
      if (!attr) return fail(std::move(attr).error().add_context(ctx_line));
      n.attrs.emplace(a.name(), std::move(*attr));
    }
    g.add_node_with_outputs(std::move(n));
  }

  std::vector<ValueId> outputs;
  for (int i = 0; i < gp.output_size(); ++i) {
    const ValueInfoProto& vi = gp.output(i);
    if (vi.name().empty())
      return fail(ErrorCode::kCorrupt,
                  gname + " has output #" + std::to_string(i) + " without a name");
    ValueId id = g.find_value(vi.name());
    if (id == kNoValue) {
      if (outer == nullptr || lookup_outer(outer, vi.name()) == nullptr)
        return fail(ErrorCode::kInvalidArgument,
                    "graph output '" + vi.name() + "' of " + gname +
                        " is not produced by any node, input or initializer");
      id = capture(vi.name());
    }
    if (!g.value(id).initializer)
      HONE_CHECK_OK(
          merge_type(vi.type(), "graph output '" + vi.name() + "' of " + gname, g.value(id)));
    outputs.push_back(id);
  }
  g.set_outputs(std::move(outputs));

  if (outer != nullptr) {
    auto valid = g.validate(outer_names(outer));
    if (!valid)
      return fail(std::move(valid).error().add_context("while checking subgraph " + gname));
  }
  return g;
}

/// Runs ONNX shape inference on a model whose structure has been checked,
/// then merges what it found into the imported graphs. Failures only cost the
/// extra types: they are logged at debug level.
void run_shape_inference(ModelProto& model, ImportContext& ctx) {
  if (!detail::infer_shapes_guarded(model, "onnx import")) return;
  for (auto& [proto, graph] : ctx.graphs) {
    apply_value_info(*proto, *graph);
    // Inference also types subgraph inputs (Loop and Scan bodies) and outputs.
    for (const auto* list : {&proto->input(), &proto->output()})
      for (const ValueInfoProto& vi : *list) {
        const ValueId id = graph->find_value(vi.name());
        if (id == kNoValue || graph->value(id).initializer) continue;
        (void)merge_type(vi.type(), "value '" + vi.name() + "'", graph->value(id));
      }
  }
}

Result<Graph> convert_model(ModelProto& model, ImportContext& ctx) {
  if (!model.has_graph()) return fail(ErrorCode::kCorrupt, "the model has no graph");
  // As strict as ONNX Runtime's load: IR and opset ranges, operators,
  // attribute names and types, required attributes, arity.
  HONE_CHECK_OK(detail::check_model_schemas(model));
  auto graph = convert_graph(model.graph(), ctx, nullptr);
  if (!graph) return fail(std::move(graph).error());
  Graph g = std::move(*graph);
  for (const auto& op : model.opset_import()) {
    const std::string domain = normalize_domain(op.domain());
    int64_t& v = g.opsets()[domain];
    v = std::max<int64_t>(v, op.version());
  }
  auto& md = g.metadata();
  md["onnx.ir_version"] = std::to_string(model.ir_version());
  if (!model.producer_name().empty()) md["onnx.producer_name"] = model.producer_name();
  if (!model.producer_version().empty()) md["onnx.producer_version"] = model.producer_version();
  if (!model.doc_string().empty()) md["onnx.doc_string"] = model.doc_string();
  if (!model.domain().empty()) md["onnx.domain"] = model.domain();
  if (model.has_model_version()) md["onnx.model_version"] = std::to_string(model.model_version());
  if (!model.graph().doc_string().empty()) md["onnx.graph_doc_string"] = model.graph().doc_string();
  for (const auto& kv : model.metadata_props()) md[kv.key()] = kv.value();
  HONE_CHECK_OK_CTX(g.validate(), "while checking graph '" + g.name() + "'");
  ctx.graphs.emplace_back(&model.graph(), &g);
  run_shape_inference(model, ctx);
  return g;
}

}  // namespace

namespace {

Result<Graph> load_from_bytes(std::span<const uint8_t> bytes, const std::filesystem::path& base_dir,
                              const LoadModelOptions& options) {
  if (bytes.size() > detail::kMaxModelBytes)
    return fail(ErrorCode::kUnsupported, "the model is " + std::to_string(bytes.size()) +
                                             " bytes; protobuf models are limited to 2 GiB");
  ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return fail(ErrorCode::kCorrupt,
                "not a valid ONNX model: the bytes (" + std::to_string(bytes.size()) +
                    ") do not parse as a ModelProto (truncated, or not protobuf)");
  ImportContext ctx;
  ctx.ext.base_dir = base_dir;
  // No folder, no external data (a package's model, bytes from memory).
  ctx.ext.allowed = !base_dir.empty();
  ctx.ext.read = options.read_external_data;
  return convert_model(model, ctx);
}

}  // namespace

Result<Graph> load_model_from_bytes(std::span<const uint8_t> bytes,
                                    const std::filesystem::path& base_dir) {
  return load_from_bytes(bytes, base_dir, {});
}

Result<Graph> load_model(const std::filesystem::path& file) {
  return load_model(file, LoadModelOptions{});
}

Result<Graph> load_model(const std::filesystem::path& file, const LoadModelOptions& options) {
  HONE_TRY(auto bytes, detail::read_file(file));
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  auto g = load_from_bytes(bytes, dir, options);
  if (!g) return fail(std::move(g).error().add_context("while loading '" + file.string() + "'"));
  return g;
}

}  // namespace hone::onnx
