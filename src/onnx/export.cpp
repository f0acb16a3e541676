// hone::Graph -> ONNX ModelProto, inline or with external data.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <set>
#include <type_traits>

#include "core/log.h"
#include "hone/file_io.h"
#include "hone/onnx.h"
#include "hone/version.h"
#include "onnx/proto_tensor.h"
#include "onnx/proto_types.h"
#include "onnx/shape_infer.h"

namespace hone::onnx {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::TensorProto;

constexpr size_t kExternalAlignment = 64;

struct ExportContext {
  const std::map<std::string, int64_t>* opsets = nullptr;
  std::set<std::string> used_domains;
};

std::string value_name(const Graph& g, ValueId id) {
  const Value& v = g.value(id);
  return v.name.empty() ? "hone_value_" + std::to_string(id) : v.name;
}

/// The attribute type the op's schema declares for `key`, or UNDEFINED.
AttributeProto::AttributeType schema_attr_type(const Node& n, const std::string& key,
                                               const ExportContext& ctx) {
  const std::string domain = n.domain;
  auto it = ctx.opsets->find(domain);
  const int version =
      static_cast<int>(it != ctx.opsets->end() ? it->second : (domain.empty() ? 17 : 1));
  const ::onnx::OpSchema* schema = ::onnx::OpSchemaRegistry::Schema(n.op_type, version, domain);
  if (schema == nullptr) return AttributeProto::UNDEFINED;
  auto a = schema->attributes().find(key);
  return a == schema->attributes().end() ? AttributeProto::UNDEFINED : a->second.type;
}

Result<void> graph_to_proto(const Graph& g, GraphProto* gp, ExportContext& ctx, bool is_main);

Result<void> attribute_to_proto(const Node& n, const std::string& key, const Attribute& attr,
                                ExportContext& ctx, AttributeProto* ap) {
  ap->set_name(key);
  return std::visit(
      [&](const auto& v) -> Result<void> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          ap->set_type(AttributeProto::INT);
          ap->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          ap->set_type(AttributeProto::FLOAT);
          ap->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (schema_attr_type(n, key, ctx) == AttributeProto::TYPE_PROTO) {
            ap->set_type(AttributeProto::TYPE_PROTO);
            HONE_CHECK_OK(detail::type_proto_from_string(v, ap->mutable_tp()));
          } else {
            ap->set_type(AttributeProto::STRING);
            ap->set_s(v);
          }
        } else if constexpr (std::is_same_v<T, Tensor>) {
          ap->set_type(AttributeProto::TENSOR);
          HONE_CHECK_OK(detail::tensor_to_proto(v, "", ap->mutable_t()));
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
          if (!v) return fail(ErrorCode::kInvalidArgument, "graph attribute is null");
          ap->set_type(AttributeProto::GRAPH);
          HONE_CHECK_OK(graph_to_proto(*v, ap->mutable_g(), ctx, false));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          ap->set_type(AttributeProto::INTS);
          for (int64_t x : v) ap->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          ap->set_type(AttributeProto::FLOATS);
          for (float x : v) ap->add_floats(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          if (schema_attr_type(n, key, ctx) == AttributeProto::TYPE_PROTOS) {
            ap->set_type(AttributeProto::TYPE_PROTOS);
            for (const auto& s : v)
              HONE_CHECK_OK(detail::type_proto_from_string(s, ap->add_type_protos()));
          } else {
            ap->set_type(AttributeProto::STRINGS);
            for (const auto& s : v) ap->add_strings(s);
          }
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          ap->set_type(AttributeProto::TENSORS);
          for (const auto& t : v) HONE_CHECK_OK(detail::tensor_to_proto(t, "", ap->add_tensors()));
        } else {
          ap->set_type(AttributeProto::GRAPHS);
          for (const auto& sub : v) {
            if (!sub) return fail(ErrorCode::kInvalidArgument, "graph attribute is null");
            HONE_CHECK_OK(graph_to_proto(*sub, ap->add_graphs(), ctx, false));
          }
        }
        return {};
      },
      attr);
}

void add_value_info(const Graph& g, ValueId id, ::onnx::ValueInfoProto* vi) {
  vi->set_name(value_name(g, id));
  const Value& v = g.value(id);
  if (!v.doc.empty()) vi->set_doc_string(v.doc);
  detail::value_type_to_proto(v, vi->mutable_type());
}

Result<void> graph_to_proto(const Graph& g, GraphProto* gp, ExportContext& ctx, bool is_main) {
  gp->set_name(g.name());
  HONE_TRY(auto order, g.topological_order());
  for (ValueId id : g.inputs()) add_value_info(g, id, gp->add_input());
  for (ValueId id : g.outputs()) add_value_info(g, id, gp->add_output());
  const std::set<ValueId> outputs(g.outputs().begin(), g.outputs().end());
  for (size_t i = 0; i < g.values().size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Value& v = g.value(id);
    if (v.initializer) {
      HONE_CHECK_OK_CTX(
          detail::tensor_to_proto(*v.initializer, value_name(g, id), gp->add_initializer()),
          "while exporting initializer '" + v.name + "'");
    } else if (v.producer >= 0 && !outputs.count(id)) {
      ::onnx::TypeProto type;
      if (detail::value_type_to_proto(v, &type)) {
        auto* vi = gp->add_value_info();
        vi->set_name(value_name(g, id));
        *vi->mutable_type() = std::move(type);
      }
    }
  }
  for (NodeId nid : order) {
    const Node& n = g.node(nid);
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    ctx.used_domains.insert(n.domain);
    for (ValueId in : n.inputs) np->add_input(in == kNoValue ? std::string() : value_name(g, in));
    for (ValueId out : n.outputs)
      np->add_output(out == kNoValue ? std::string() : value_name(g, out));
    for (const auto& [key, attr] : n.attrs)
      HONE_CHECK_OK_CTX(attribute_to_proto(n, key, attr, ctx, np->add_attribute()),
                        "while exporting attribute '" + key + "' of node " + n.describe());
  }
  if (is_main) {
    auto it = g.metadata().find("onnx.graph_doc_string");
    if (it != g.metadata().end()) gp->set_doc_string(it->second);
  }
  return {};
}

int64_t parse_int_or(const std::string& s, int64_t fallback) {
  int64_t v = fallback;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() ? v : fallback;
}

Result<ModelProto> graph_to_model(const Graph& graph) {
  HONE_CHECK_OK_CTX(graph.validate(), "while exporting graph '" + graph.name() + "'");
  ModelProto model;
  std::map<std::string, int64_t> opsets = graph.opsets();
  if (!opsets.count("")) opsets[""] = graph.opset("");
  ExportContext ctx;
  ctx.opsets = &opsets;
  HONE_CHECK_OK(graph_to_proto(graph, model.mutable_graph(), ctx, true));
  for (const std::string& d : ctx.used_domains)
    if (!opsets.count(d)) opsets[d] = 1;
  for (const auto& [domain, version] : opsets) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  int64_t ir = ::onnx::IR_VERSION;
  const auto& md = graph.metadata();
  for (const auto& [key, value] : md) {
    if (key == "onnx.ir_version") {
      ir = parse_int_or(value, ir);
    } else if (key == "onnx.producer_name") {
      model.set_producer_name(value);
    } else if (key == "onnx.producer_version") {
      model.set_producer_version(value);
    } else if (key == "onnx.doc_string") {
      model.set_doc_string(value);
    } else if (key == "onnx.domain") {
      model.set_domain(value);
    } else if (key == "onnx.model_version") {
      model.set_model_version(parse_int_or(value, 0));
    } else if (key == "onnx.graph_doc_string") {
      // written into the graph
    } else {
      auto* kv = model.add_metadata_props();
      kv->set_key(key);
      kv->set_value(value);
    }
  }
  // IR 4 is the first where initializers need not be graph inputs.
  model.set_ir_version(std::clamp<int64_t>(ir, 4, ::onnx::IR_VERSION));
  if (model.producer_name().empty()) {
    model.set_producer_name("hone");
    model.set_producer_version(kVersion);
  }
  // Fill dtypes and shapes of values the graph left untyped (graph outputs
  // of GraphBuilder graphs, say): the checker wants typed main-graph outputs.
  // Only when needed: ONNX's inference functions are not hardened against
  // odd graphs (the fuzzer crashed ConvTranspose's on an unknown weight dim).
  bool outputs_typed = true;
  for (ValueId id : graph.outputs())
    outputs_typed = outputs_typed && graph.value(id).dtype != DType::kUndefined;
  if (!outputs_typed) (void)detail::infer_shapes_guarded(model, "onnx export");
  return model;
}

void collect_initializers(GraphProto* gp, std::vector<TensorProto*>& out) {
  for (auto& t : *gp->mutable_initializer()) out.push_back(&t);
  for (auto& n : *gp->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) collect_initializers(a.mutable_g(), out);
      for (auto& sub : *a.mutable_graphs()) collect_initializers(&sub, out);
    }
}

}  // namespace

Result<std::vector<uint8_t>> save_model_to_bytes(const Graph& graph) {
  HONE_TRY(ModelProto model, graph_to_model(graph));
  const size_t size = model.ByteSizeLong();
  if (size > detail::kMaxModelBytes)
    return fail(ErrorCode::kUnsupported, "the model would be " + std::to_string(size) +
                                             " bytes; protobuf models are limited to 2 GiB");
  std::vector<uint8_t> bytes(size);
  if (!model.SerializeToArray(bytes.data(), static_cast<int>(size)))
    return fail(ErrorCode::kInternal, "cannot serialize the model");
  return bytes;
}

Result<void> save_model(const Graph& graph, const std::filesystem::path& file,
                        const SaveOptions& options) {
  auto model = graph_to_model(graph);
  if (!model)
    return fail(std::move(model).error().add_context("while saving '" + file.string() + "'"));
  if (options.external_data) {
    const std::string weights_name =
        options.external_file.empty() ? file.stem().string() + ".weights" : options.external_file;
    const std::filesystem::path rel(weights_name);
    if (rel.is_absolute() || rel.has_root_name() || weights_name.find("..") != std::string::npos ||
        rel.has_parent_path() || weights_name.empty())
      return fail(ErrorCode::kInvalidArgument, "external data file '" + weights_name +
                                                   "' must be a plain file name next to the model");
    std::vector<TensorProto*> tensors;
    collect_initializers(model->mutable_graph(), tensors);
    std::vector<uint8_t> weights;
    for (TensorProto* t : tensors) {
      if (t->raw_data().size() < options.external_threshold_bytes || t->raw_data().empty())
        continue;
      const size_t offset =
          (weights.size() + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
      weights.resize(offset);
      weights.insert(weights.end(), t->raw_data().begin(), t->raw_data().end());
      t->set_data_location(TensorProto::EXTERNAL);
      auto add = [&](const char* k, std::string v) {
        auto* kv = t->add_external_data();
        kv->set_key(k);
        kv->set_value(std::move(v));
      };
      add("location", weights_name);
      add("offset", std::to_string(offset));
      add("length", std::to_string(t->raw_data().size()));
      t->clear_raw_data();
    }
    HONE_CHECK_OK_CTX(hone::write_file_atomic(file.parent_path() / rel, weights),
                      "while saving the weights of '" + file.string() + "'");
  }
  HONE_CHECK_OK_CTX(detail::write_message_atomic(*model, file),
                    "while saving '" + file.string() + "'");
  return {};
}

}  // namespace hone::onnx
