#include "onnx/schema_check.h"

#include "onnx/proto_types.h"
#include "ops/signature.h"

#include <onnx/defs/schema.h>
#include <algorithm>

#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace hone::onnx::detail {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::OpSchema;
using ::onnx::OpSchemaRegistry;

/// Operators hone itself writes that libonnx 1.12's registry does not know
/// at the opset the graph imports, as (domain, op_type). Kept explicit and
/// short: each one needs a reason.
const std::set<std::pair<std::string, std::string>>& hone_allowed_ops() {
  static const std::set<std::pair<std::string, std::string>> ops = {
      // ONNX opset 20's Gelu: hone's GELU recognition pass writes it into
      // tuned graphs (and packages) whatever opset the model imports.
      {"", "Gelu"},
  };
  return ops;
}

std::string domain_label(const std::string& d) {
  return d.empty() ? std::string("ai.onnx") : d;
}

std::string node_label(const NodeProto& n, int index, const std::string& graph) {
  const std::string who =
      n.name().empty() ? "node #" + std::to_string(index) : "node '" + n.name() + "'";
  return who + " (" + n.op_type() + ") of graph '" + graph + "'";
}

/// The declared type, else the one its fields hold.
AttributeProto::AttributeType held_type(const AttributeProto& a) {
  return a.type() != AttributeProto::UNDEFINED ? a.type() : held_attribute_type(a);
}

std::string type_name(AttributeProto::AttributeType t) {
  const std::string& n = AttributeProto::AttributeType_Name(t);
  return n.empty() ? "type " + std::to_string(static_cast<int>(t)) : n;
}

struct Checker {
  std::map<std::string, int64_t> opsets;  // normalized domain -> version
  std::set<std::pair<std::string, std::string>> local_functions;
  std::set<std::string> known_domains;  // those libonnx has schemas for
  /// The newest ai.onnx opset libonnx has schemas for (17 in Debian 12's 1.12).
  int64_t onnx_schema_newest = 0;

  Result<void> check_node(const NodeProto& n, int index, const std::string& graph) const {
    const std::string label = node_label(n, index, graph);
    auto bad = [&](const std::string& what) {
      return fail(ErrorCode::kInvalidArgument, label + " " + what);
    };
    if (n.op_type().empty()) return bad("has no op_type");
    const std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    if (local_functions.count({n.domain(), n.op_type()})) return {};
    // Like ONNX's checker: operators of domains libonnx has no schemas for
    // (custom ops) are left to the backends, which refuse what they cannot run.
    if (!known_domains.count(domain)) return check_subgraphs(n, label);
    const auto opset = opsets.find(domain);
    if (opset == opsets.end())
      return bad("uses domain '" + domain_label(domain) +
                 "', which the model does not import (no opset_import entry for it)");
    // Beyond libonnx's newest ai.onnx opset, hone's own rows (src/ops/signature.h)
    // give the op versions that changed since; an op without one keeps the
    // signature of its version at libonnx's newest opset.
    int64_t schema_opset = opset->second;
    if (domain.empty() && opset->second > onnx_schema_newest) {
      const ops::OpSignature* sig = ops::newer_signature(n.op_type(), opset->second);
      if (sig != nullptr && sig->since > onnx_schema_newest) {
        HONE_CHECK_OK(check_signature(n, *sig, label));
        return check_subgraphs(n, label);
      }
      schema_opset = onnx_schema_newest;
    }
    const OpSchema* schema =
        OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(schema_opset), domain);
    if (schema == nullptr) {
      if (hone_allowed_ops().count({domain, n.op_type()})) return {};
      return bad("is not an operator of domain '" + domain_label(domain) + "' at opset " +
                 std::to_string(opset->second));
    }
    if (schema->Deprecated())
      return bad("uses " + n.op_type() + ", deprecated since opset " +
                 std::to_string(schema->SinceVersion()) + " of domain '" + domain_label(domain) +
                 "'");
    std::vector<Declared> declared;
    for (const auto& [name, attr] : schema->attributes())
      declared.push_back({name, attr.type, attr.required});
    HONE_TRY(const bool refers_to_function,
             check_attributes(n, declared, schema->SinceVersion(), label));
    if (refers_to_function) return {};
    // Input and output counts, and whatever else the schema verifies.
    try {
      schema->Verify(n);
    } catch (const std::exception& e) {
      return bad("does not fit its schema: " + std::string(e.what()));
    }
    return check_subgraphs(n, label);
  }

  /// An attribute an op version declares.
  struct Declared {
    std::string name;
    AttributeProto::AttributeType type;
    bool required;
  };

  /// Each attribute of `n` is declared, once, with the declared type, and
  /// every required one is present. True when an attribute refers to an
  /// enclosing function's (the importer refuses those, naming it), which
  /// leaves the required ones unchecked.
  Result<bool> check_attributes(const NodeProto& n, const std::vector<Declared>& declared,
                                int since, const std::string& label) const {
    auto bad = [&](const std::string& what) {
      return fail(ErrorCode::kInvalidArgument, label + " " + what);
    };
    std::set<std::string> seen;
    bool refers_to_function = false;
    for (const AttributeProto& a : n.attribute()) {
      if (!seen.insert(a.name()).second) return bad("has attribute '" + a.name() + "' twice");
      if (!a.ref_attr_name().empty()) {
        refers_to_function = true;
        continue;
      }
      const auto it = std::find_if(declared.begin(), declared.end(),
                                   [&](const Declared& d) { return d.name == a.name(); });
      if (it == declared.end()) {
        std::string known;
        for (const Declared& d : declared) known += (known.empty() ? "" : ", ") + d.name;
        return bad("has attribute '" + a.name() + "', which " + n.op_type() + " (opset " +
                   std::to_string(since) +
                   ") does not take (it takes: " + (known.empty() ? "none" : known) + ")");
      }
      const AttributeProto::AttributeType held = held_type(a);
      if (held != it->type)
        return bad("has attribute '" + a.name() + "' of type " + type_name(held) + "; " +
                   n.op_type() + " takes " + type_name(it->type));
    }
    if (!refers_to_function)
      for (const Declared& d : declared)
        if (d.required && !seen.count(d.name))
          return bad("lacks the required attribute '" + d.name + "'");
    return refers_to_function;
  }

  /// A node of an op version newer than libonnx's schemas, against hone's row.
  Result<void> check_signature(const NodeProto& n, const ops::OpSignature& sig,
                               const std::string& label) const {
    std::vector<Declared> declared;
    for (const ops::AttrSignature& a : sig.attributes)
      declared.push_back({std::string(a.name), proto_type(a.kind), a.required});
    HONE_TRY(const bool refers_to_function, check_attributes(n, declared, sig.since, label));
    (void)refers_to_function;
    auto count = [&](int got, int lo, int hi, const char* what) -> Result<void> {
      if (got >= lo && (hi == ops::kVariadic || got <= hi)) return {};
      const std::string range = hi == ops::kVariadic ? std::to_string(lo) + " or more"
                                : lo == hi           ? std::to_string(lo)
                                           : std::to_string(lo) + " to " + std::to_string(hi);
      return fail(ErrorCode::kInvalidArgument, label + " has " + std::to_string(got) + " " + what +
                                                   "; " + n.op_type() + " (opset " +
                                                   std::to_string(sig.since) + ") takes " + range);
    };
    HONE_CHECK_OK(count(n.input_size(), sig.min_inputs, sig.max_inputs, "inputs"));
    return count(n.output_size(), sig.min_outputs, sig.max_outputs, "outputs");
  }

  /// attr_kind_name() spells each kind as AttributeProto names its type.
  static AttributeProto::AttributeType proto_type(ops::AttrKind kind) {
    AttributeProto::AttributeType t = AttributeProto::UNDEFINED;
    (void)AttributeProto::AttributeType_Parse(std::string(ops::attr_kind_name(kind)), &t);
    return t;
  }

  Result<void> check_subgraphs(const NodeProto& n, const std::string& label) const {
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_g()) HONE_CHECK_OK(check_graph(a.g(), label + " attribute '" + a.name() + "'"));
      for (int g = 0; g < a.graphs_size(); ++g)
        HONE_CHECK_OK(check_graph(a.graphs(g), label + " attribute '" + a.name() + "'"));
    }
    return {};
  }

  Result<void> check_graph(const GraphProto& g, const std::string& where) const {
    const std::string name = g.name().empty() ? where : g.name();
    for (int i = 0; i < g.node_size(); ++i) HONE_CHECK_OK(check_node(g.node(i), i, name));
    return {};
  }
};

}  // namespace

Result<void> check_model_schemas(const ::onnx::ModelProto& model) {
  if (!model.has_ir_version())
    return fail(ErrorCode::kInvalidArgument, "the model has no ir_version");
  if (model.ir_version() < kMinIrVersion || model.ir_version() > kMaxIrVersion)
    return fail(ErrorCode::kUnsupported,
                "the model's IR version " + std::to_string(model.ir_version()) +
                    " is not one hone reads (" + std::to_string(kMinIrVersion) + " to " +
                    std::to_string(kMaxIrVersion) + ")");
  if (model.opset_import_size() == 0)
    return fail(ErrorCode::kInvalidArgument,
                "the model imports no opset (opset_import is empty); every model must import "
                "one for the ai.onnx domain");
  Checker c;
  const auto& ranges = OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& [domain, range] : ranges) {
    c.known_domains.insert(domain == "ai.onnx" ? "" : domain);
    if (domain.empty() || domain == "ai.onnx") c.onnx_schema_newest = range.second;
  }
  for (const auto& op : model.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? std::string() : op.domain();
    if (c.opsets.count(domain))
      return fail(ErrorCode::kInvalidArgument,
                  "the model imports domain '" + domain_label(domain) + "' twice");
    const auto range = ranges.find(domain);
    if (op.version() < 1)
      return fail(ErrorCode::kInvalidArgument, "the model imports opset " +
                                                   std::to_string(op.version()) + " of domain '" +
                                                   domain_label(domain) + "'; opsets start at 1");
    if (range != ranges.end()) {
      // ai.onnx goes up to ops::kNewestOnnxOpset, newer than the libonnx hone
      // is built with: hone's own rows cover the op versions after it.
      const int64_t newest = domain.empty()
                                 ? std::max<int64_t>(range->second.second, ops::kNewestOnnxOpset)
                                 : range->second.second;
      if (op.version() < range->second.first || op.version() > newest)
        return fail(ErrorCode::kUnsupported,
                    "the model imports opset " + std::to_string(op.version()) + " of domain '" +
                        domain_label(domain) + "'; hone reads " +
                        std::to_string(range->second.first) + " to " + std::to_string(newest));
    }
    c.opsets[domain] = op.version();
  }
  for (const auto& f : model.functions()) c.local_functions.insert({f.domain(), f.name()});
  return c.check_graph(model.graph(), "main");
}

}  // namespace hone::onnx::detail
