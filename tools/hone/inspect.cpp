// `hone inspect MODEL.onnx [--backend NAME [--config F=V]] [--json]`: what a
// model takes, gives and holds, and how a backend would partition it.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "hone/onnx.h"
#include "hone/onnx_load_options.h"
#include "hone/optimize.h"
#include "hone/registry.h"

namespace hone::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::string backend;              // empty: no partition shown
  std::vector<std::string> config;  // FIELD=VALUE for that backend
  bool json = false;
  bool passes = false;  // also run the graph passes and show what they make
  bool nodes = false;   // list every node with its operands' shapes
};

// Op counts over the graph and every subgraph (If/Loop/Scan bodies); ops from
// other domains are keyed "domain::Op".
void count_ops(const Graph& g, std::map<std::string, int64_t>& counts, int64_t& total) {
  for (const Node& n : g.nodes()) {
    ++counts[n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "::" + n.op_type];
    ++total;
    for (const auto& [key, attr] : n.attrs) {
      if (const auto* sub = std::get_if<std::shared_ptr<const Graph>>(&attr)) {
        if (*sub) count_ops(**sub, counts, total);
      } else if (const auto* subs = std::get_if<std::vector<std::shared_ptr<const Graph>>>(&attr)) {
        for (const auto& s : *subs)
          if (s) count_ops(*s, counts, total);
      }
    }
  }
}

std::vector<std::pair<std::string, int64_t>> sorted_counts(
    const std::map<std::string, int64_t>& m) {
  std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

nlohmann::json value_json(const Value& v) {
  nlohmann::json j;
  j["name"] = v.name;
  j["kind"] = v.kind == ValueKind::kTensor     ? "tensor"
              : v.kind == ValueKind::kSequence ? "sequence"
                                               : "optional";
  j["dtype"] = std::string(dtype_name(v.dtype));
  if (v.shape) {
    nlohmann::json dims = nlohmann::json::array();
    for (const Dim& d : v.shape->dims()) {
      if (d.is_static())
        dims.push_back(d.value());
      else if (d.is_symbolic())
        dims.push_back(d.symbol_name());
      else
        dims.push_back(nullptr);
    }
    j["shape"] = dims;
  } else {
    j["shape"] = nullptr;
  }
  return j;
}

std::string metadata_or(const Graph& g, std::initializer_list<const char*> keys,
                        const std::string& fallback) {
  for (const char* k : keys) {
    auto it = g.metadata().find(k);
    if (it != g.metadata().end() && !it->second.empty()) return it->second;
  }
  return fallback;
}

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

/// "Conv x3, Relu x2" for the nodes of one block.
std::string block_ops(const Graph& g, const Block& b) {
  std::map<std::string, int64_t> counts;
  for (NodeId id : b.nodes) ++counts[g.node(id).op_type];
  std::string s;
  for (const auto& [op, n] : sorted_counts(counts))
    s += (s.empty() ? "" : ", ") + op + (n > 1 ? " x" + std::to_string(n) : "");
  return s;
}

/// Where block `b` runs: the executor (control flow), the fallback, or a backend.
std::string runs_on(const Block& b, const std::string& backend) {
  if (b.control) return "control";
  if (!b.on_backend) return "fallback";
  return b.placed_on.empty() ? backend : b.placed_on;
}

nlohmann::json partition_json(const Graph& given, const std::string& backend, const Partition& p) {
  const Graph& g = p.graph ? *p.graph : given;  // node ids refer to the planned graph
  nlohmann::json j;
  j["backend"] = backend;
  j["nodes_on_backend"] = p.nodes_on_backend();
  j["planned_nodes"] = g.nodes().size();
  if (!p.notes.empty()) j["notes"] = p.notes;
  j["blocks"] = nlohmann::json::array();
  for (const Block& b : p.blocks) {
    nlohmann::json nodes = nlohmann::json::array();
    for (NodeId id : b.nodes) nodes.push_back(g.node(id).name);
    j["blocks"].push_back(
        {{"runs_on", runs_on(b, backend)}, {"nodes", std::move(nodes)}, {"ops", block_ops(g, b)}});
  }
  j["fallbacks"] = nlohmann::json::array();
  for (const auto& [id, why] : p.fallbacks)
    j["fallbacks"].push_back(
        {{"node", g.node(id).name}, {"op", g.node(id).op_type}, {"reason", why}});
  for (const Partition::BodyFallback& f : p.body_fallbacks)
    j["fallbacks"].push_back({{"node", f.path}, {"op", f.op}, {"reason", f.reason}});
  j["controls"] = nlohmann::json::array();
  for (const auto& [id, how] : p.controls)
    j["controls"].push_back({{"node", g.node(id).name}, {"op", g.node(id).op_type}, {"how", how}});
  return j;
}

void print_partition(const Graph& given, const std::string& backend, const Partition& p) {
  const Graph& g = p.graph ? *p.graph : given;  // node ids refer to the planned graph
  if (!p.notes.empty()) fmt::print("{}\n", p.notes);
  fmt::print("partition on {}: {} of {} nodes, {} block{}\n", backend, p.nodes_on_backend(),
             g.nodes().size(), p.blocks.size(), p.blocks.size() == 1 ? "" : "s");
  for (size_t i = 0; i < p.blocks.size(); ++i) {
    const Block& b = p.blocks[i];
    fmt::print("  [{}] {:<10} {:>4} node{}  {}\n", i, runs_on(b, backend), b.nodes.size(),
               b.nodes.size() == 1 ? " " : "s", block_ops(g, b));
  }
  if (p.fallback_count() > 0) fmt::print("fallbacks ({})\n", p.fallback_count());
  for (const auto& [id, why] : p.fallbacks) fmt::print("  {}: {}\n", g.node(id).describe(), why);
  for (const Partition::BodyFallback& f : p.body_fallbacks)
    fmt::print("  '{}' ({}): {}\n", f.path, f.op, f.reason);
  for (const auto& [id, how] : p.controls)
    fmt::print("control {}: {}\n", g.node(id).describe(), how);
}

/// The partition `o.backend` would build for `g`, under `o.config`.
Result<Partition> plan_partition(const InspectOptions& o, const Graph& g) {
  HONE_TRY(std::unique_ptr<Backend> be, default_registry().create(o.backend));
  HONE_CHECK_OK(apply_configs(*be, o.config));
  return be->plan(g);
}

int run_inspect(const InspectOptions& o) {
  // Without a backend nothing reads the weights: external data is checked
  // but not loaded (a 20 GB initializer costs nothing).
  hone::onnx::LoadModelOptions lo;
  lo.read_external_data = !o.backend.empty() || o.passes;
  auto loaded = hone::onnx::load_model(o.model, lo);
  if (!loaded) return report(loaded.error());
  const Graph& g = *loaded;
  std::optional<Partition> partition;
  if (!o.backend.empty()) {
    auto p = plan_partition(o, g);
    if (!p) return report(p.error());
    partition = std::move(*p);
  }
  // The graph passes as tune() runs them: once, the result shared by every
  // candidate that optimizes.
  std::shared_ptr<const OptimizedGraph> optimized;
  std::map<std::string, int64_t> optimized_counts;
  int64_t optimized_total = 0;
  if (o.passes) {
    auto opt = optimize_shared(g);
    if (!opt) return report(opt.error());
    optimized = std::move(*opt);
    count_ops(*optimized->graph, optimized_counts, optimized_total);
  }
  std::map<std::string, int64_t> counts;
  int64_t total = 0;
  count_ops(g, counts, total);
  const auto ops = sorted_counts(counts);
  const std::string producer = metadata_or(g, {"onnx.producer_name", "producer_name"}, "");
  const std::string producer_version =
      metadata_or(g, {"onnx.producer_version", "producer_version"}, "");
  const std::string ir_version = metadata_or(g, {"onnx.ir_version", "ir_version"}, "");

  if (o.json) {
    nlohmann::json j;
    j["model"] = o.model;
    j["graph"] = g.name();
    j["inputs"] = nlohmann::json::array();
    for (ValueId id : g.inputs()) j["inputs"].push_back(value_json(g.value(id)));
    j["outputs"] = nlohmann::json::array();
    for (ValueId id : g.outputs()) j["outputs"].push_back(value_json(g.value(id)));
    j["nodes"] = total;
    j["ops"] = nlohmann::json::array();
    for (const auto& [op, n] : ops) j["ops"].push_back({{"op", op}, {"count", n}});
    j["parameters"] = {{"count", g.parameter_count()}, {"bytes", g.parameter_bytes()}};
    j["opsets"] = nlohmann::json::object();
    for (const auto& [domain, v] : g.opsets()) j["opsets"][domain.empty() ? "ai.onnx" : domain] = v;
    j["producer"] = producer;
    j["producer_version"] = producer_version;
    j["ir_version"] = ir_version;
    j["metadata"] = g.metadata();
    if (partition) j["partition"] = partition_json(g, o.backend, *partition);
    if (optimized) {
      nlohmann::json po = nlohmann::json::array();
      for (const auto& [op, n] : sorted_counts(optimized_counts))
        po.push_back({{"op", op}, {"count", n}});
      j["optimized"] = {{"report", optimized->report.describe()},
                        {"nodes", optimized_total},
                        {"ops", std::move(po)}};
    }
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  fmt::print("model    {}\n", o.model);
  fmt::print("graph    {}\n", g.name());
  if (!producer.empty())
    fmt::print("producer {}{}\n", producer, producer_version.empty() ? "" : " " + producer_version);
  if (!ir_version.empty()) fmt::print("ir       {}\n", ir_version);
  std::string opsets;
  for (const auto& [domain, v] : g.opsets())
    opsets += (opsets.empty() ? "" : ", ") + (domain.empty() ? std::string("ai.onnx") : domain) +
              " " + std::to_string(v);
  fmt::print("opsets   {}\n", opsets.empty() ? "(none)" : opsets);
  fmt::print("inputs   ({})\n", g.inputs().size());
  for (ValueId id : g.inputs())
    fmt::print("  {:<24} {}\n", g.value(id).name, describe_value_type(g.value(id)));
  fmt::print("outputs  ({})\n", g.outputs().size());
  for (ValueId id : g.outputs())
    fmt::print("  {:<24} {}\n", g.value(id).name, describe_value_type(g.value(id)));
  fmt::print("params   {} ({})\n", g.parameter_count(), human_bytes(g.parameter_bytes()));
  fmt::print("nodes    {} ({} op types)\n", total, ops.size());
  for (const auto& [op, n] : ops) fmt::print("  {:<24} {}\n", op, n);
  if (optimized) {
    fmt::print("optimized (the graph every tune candidate that optimizes starts from)\n");
    fmt::print("  passes {}\n", optimized->report.describe());
    fmt::print("  nodes  {} ({} op types)\n", optimized_total, optimized_counts.size());
    for (const auto& [op, n] : sorted_counts(optimized_counts))
      fmt::print("    {:<22} {}\n", op, n);
  }
  if (o.nodes) {
    // The graph the backends start from (after the passes when asked), one
    // node a line: operands and results with what is known of their shapes.
    const Graph& shown = optimized ? *optimized->graph : g;
    fmt::print("nodes of the {} graph\n", optimized ? "optimized" : "loaded");
    auto operand = [&](ValueId v) {
      if (v < 0) return std::string("-");
      const Value& val = shown.value(v);
      return (val.name.empty() ? "?" : val.name) + (val.initializer ? " (constant) " : " ") +
             describe_value_type(val);
    };
    for (const Node& n : shown.nodes()) {
      std::string in, out;
      for (ValueId v : n.inputs) in += (in.empty() ? "" : ", ") + operand(v);
      for (ValueId v : n.outputs) out += (out.empty() ? "" : ", ") + operand(v);
      fmt::print("  {}: {} -> {}\n", n.describe(), in, out);
    }
  }
  if (partition) print_partition(g, o.backend, *partition);
  return kExitOk;
}

}  // namespace

void add_inspect_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* sub =
      root.add_subcommand("inspect", "show a model's inputs, outputs, ops and parameters");
  sub->footer(
      "Examples:\n"
      "  hone inspect models/cnn.onnx\n"
      "  hone inspect models/cnn.onnx --backend onednn --config min_block_size=5\n"
      "  hone inspect models/cnn.onnx --passes\n"
      "  hone inspect models/mlp.onnx --json");
  sub->add_option("model", o->model, "the .onnx file")->required()->type_name("MODEL.onnx");
  sub->add_option("--backend", o->backend,
                  "also show how this backend would partition the graph (see `hone backends`)")
      ->type_name("NAME");
  sub->add_option("--config", o->config, "a backend config field for --backend (repeatable)")
      ->type_name("FIELD=VALUE");
  sub->add_flag("--passes", o->passes,
                "also run the graph passes once, as tune() does for all its candidates, and show "
                "what they make");
  sub->add_flag("--nodes", o->nodes,
                "also list every node (of the optimized graph with --passes) with its operands' "
                "and results' shapes");
  sub->add_flag("--json", o->json, "machine-readable output");
  commands.push_back({sub, [o] { return run_inspect(*o); }});
}

}  // namespace hone::cli
