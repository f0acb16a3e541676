#include "hone/optimize.h"

#include <functional>

#include "core/log.h"
#include "hone/passes.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

using PassFn = std::function<Result<Graph>(const Graph&, PassStats*, const OptimizeOptions&)>;

struct Pass {
  const char* name;
  PassFn fn;
};

// Order matters within a round: shapes first so constant folding finishes
// what they start, dead code out before the pattern matchers (they insist on
// single readers), BN folded before bias fusion sees the Conv it made.
const std::vector<Pass>& pipeline() {
  static const std::vector<Pass> k = {
      // Before the folders: they would fold its offsets where the batch is a number.
      {"lower_embedding_bag", [](const Graph& g, PassStats* s,
                                 const OptimizeOptions&) { return lower_embedding_bag(g, s); }},
      // Before the folders too: the pieces it unrolls are Slices they fold.
      {"lower_control_flow", [](const Graph& g, PassStats* s,
                                const OptimizeOptions&) { return lower_control_flow(g, s); }},
      {"fold_shapes",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return fold_shapes(g, s); }},
      {"fold_reshape_targets", [](const Graph& g, PassStats* s,
                                  const OptimizeOptions&) { return fold_reshape_targets(g, s); }},
      {"fold_slice_bounds", [](const Graph& g, PassStats* s,
                               const OptimizeOptions&) { return fold_slice_bounds(g, s); }},
      {"fold_constants",
       [](const Graph& g, PassStats* s, const OptimizeOptions& o) {
         return fold_constants(g, s, o.fold_max_bytes);
       }},
      {"eliminate_dead_code", [](const Graph& g, PassStats* s,
                                 const OptimizeOptions&) { return eliminate_dead_code(g, s); }},
      {"lower_einsum",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return lower_einsum(g, s); }},
      {"lower_depth_to_space", [](const Graph& g, PassStats* s,
                                  const OptimizeOptions&) { return lower_depth_to_space(g, s); }},
      {"lower_tile",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return lower_tile(g, s); }},
      {"eliminate_transposes", [](const Graph& g, PassStats* s,
                                  const OptimizeOptions&) { return eliminate_transposes(g, s); }},
      {"fold_batch_norm",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return fold_batch_norm(g, s); }},
      {"fuse_bias",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return fuse_bias(g, s); }},
      {"fuse_pad",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return fuse_pad(g, s); }},
      {"fuse_layer_norm",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return fuse_layer_norm(g, s); }},
      {"fuse_gelu",
       [](const Graph& g, PassStats* s, const OptimizeOptions&) { return fuse_gelu(g, s); }},
  };
  return k;
}

/// pipeline()'s passes before the shape folders (lower_embedding_bag,
/// lower_control_flow), then up to kShapeFolders the passes that fold
/// computed shapes: fold_shapes, fold_reshape_targets, fold_slice_bounds,
/// fold_constants.
constexpr size_t kFirstFolder = 2;
constexpr size_t kShapeFolders = 6;

int applied(const PassStats& s) {
  return s.folded + s.removed + s.rewritten;
}

}  // namespace

const std::vector<std::string>& optimize_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Pass& p : pipeline()) n.push_back(p.name);
    return n;
  }();
  return names;
}

std::string OptimizeReport::describe() const {
  std::string s = std::to_string(nodes_before) + " -> " + std::to_string(nodes_after) +
                  " nodes in " + std::to_string(rounds) + " round" + (rounds == 1 ? "" : "s");
  std::string parts;
  for (const PassReport& p : passes) {
    if (p.applied == 0 && p.nodes_removed == 0) continue;
    parts += (parts.empty() ? "" : ", ") + p.name + " " + std::to_string(p.applied) + " (" +
             (p.nodes_removed >= 0 ? "-" : "+") + std::to_string(std::abs(p.nodes_removed)) + ")";
  }
  s += parts.empty() ? ": nothing to change" : ": " + parts;
  s += "; " + std::to_string(elementwise_chains) + " element-wise chain" +
       (elementwise_chains == 1 ? "" : "s") + ", " + std::to_string(attention_blocks) +
       " attention block" + (attention_blocks == 1 ? "" : "s");
  return s;
}

Result<OptimizeReport> optimize(Graph& g, const OptimizeOptions& options) {
  for (const std::string& name : options.disabled) {
    bool known = false;
    for (const Pass& p : pipeline()) known |= name == p.name;
    if (!known) {
      std::string all;
      for (const Pass& p : pipeline()) all += (all.empty() ? "" : ", ") + std::string(p.name);
      return fail(ErrorCode::kInvalidArgument,
                  "unknown graph pass '" + name + "' to disable (passes: " + all + ")");
    }
  }
  if (options.max_rounds < 1)
    return fail(ErrorCode::kInvalidArgument, "optimize: max_rounds must be at least 1, got " +
                                                 std::to_string(options.max_rounds));
  OptimizeReport report;
  report.nodes_before = g.nodes().size();
  for (const Pass& p : pipeline()) report.passes.push_back({p.name, 0, 0});
  Graph cur = g;
  // One pass on `cur`; true when it changed something.
  auto run_pass = [&](size_t i, int round) -> Result<bool> {
    const Pass& p = pipeline()[i];
    if (options.disabled.count(p.name)) return false;
    PassStats st;
    const size_t before = cur.nodes().size();
    auto next = p.fn(cur, &st, options);
    if (!next)
      return fail(std::move(next).error().add_context(std::string("while running graph pass ") +
                                                      p.name + " on '" + g.name() + "'"));
    const int removed = static_cast<int>(before) - static_cast<int>(next->nodes().size());
    report.passes[i].applied += applied(st);
    report.passes[i].nodes_removed += removed;
    cur = std::move(*next);
    if (applied(st) == 0 && removed == 0) return false;
    HONE_LOG_DEBUG("optimize '{}' round {}: {} applied {} ({} -> {} nodes)", g.name(), round + 1,
                   p.name, applied(st), before, cur.nodes().size());
    return true;
  };
  for (int round = 0; round < options.max_rounds; ++round) {
    bool changed = false;
    for (size_t i = 0; i < kFirstFolder; ++i) {
      HONE_TRY(const bool c, run_pass(i, round));
      changed |= c;
    }
    // The shape folders first, to their fixpoint: each step of a chain of
    // computed shapes (a Slice whose bounds fold once the Reshape before it
    // has a shape, unit after unit of a ShuffleNet) needs the one before it,
    // so one step per round would stop after max_rounds units. Each step
    // removes nodes or gives a Reshape a constant target, so the loop ends.
    for (bool folding = true; folding;) {
      folding = false;
      for (size_t i = kFirstFolder; i < kShapeFolders; ++i) {
        HONE_TRY(const bool c, run_pass(i, round));
        folding |= c;
      }
      changed |= folding;
    }
    for (size_t i = kShapeFolders; i < pipeline().size(); ++i) {
      HONE_TRY(const bool c, run_pass(i, round));
      changed |= c;
    }
    report.rounds = round + 1;
    if (!changed) break;
  }
  // Every dtype and shape the rules can tell, also where no pass rewrote
  // anything: a graph built in C++ has none past its inputs, and a backend
  // plans a block input by its dtype (an i64 Cast output, a bool mask).
  passes::propagate_shapes(cur);
  report.nodes_after = cur.nodes().size();
  report.elementwise_chains = find_elementwise_chains(cur).size();
  report.attention_blocks = find_attention(cur).size();
  HONE_LOG_DEBUG("optimize '{}': {}", g.name(), report.describe());
  g = std::move(cur);
  return report;
}

Result<std::shared_ptr<const OptimizedGraph>> optimize_shared(const Graph& g,
                                                              const OptimizeOptions& options) {
  auto copy = std::make_shared<Graph>(g);
  HONE_TRY(OptimizeReport report, optimize(*copy, options));
  auto out = std::make_shared<OptimizedGraph>();
  out->graph = std::move(copy);
  out->report = std::move(report);
  out->source = &g;
  out->source_nodes = g.nodes().size();
  out->source_values = g.values().size();
  return std::shared_ptr<const OptimizedGraph>(std::move(out));
}

}  // namespace hone
