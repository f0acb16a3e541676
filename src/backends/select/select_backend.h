// select: per-op kernel selection on the CPU (STYLE.md rule 9). Every heavy
// node (Conv, ConvTranspose, MatMul, Gemm, LSTM, GRU) is built as a one-node
// block by each CPU backend that accepts it (onednn, blas, aot: each through
// the registry, as a backend of its own), timed on the problem's shapes, and
// run by the winner; the rest of the graph runs on onednn. One executor
// (src/runtime) holds the blocks of all of them.
//
//   HONE_TRY(auto be, default_registry().create("select"));
//   HONE_CHECK_OK(be->build(graph));                 // times, then records
//   be->config().get<std::string>("kernel_choices", "");   // "conv1=aot(aot+blas+onednn);..."
//
// The choice is made once and recorded in the config field kernel_choices
// ("NODE=WINNER(ACCEPTED+...)", ';'-separated, in graph order; "-" when there
// is nothing to choose; nodes whose names hold ';' are not selected). A build whose config already
// holds choices (a loaded package, a rank given rank 0's choices) replays them without timing, so
// two builds of one config never differ. A challenger wins only when its median is at least
// `select_margin` percent faster than onednn's, so noise does not move a node off onednn. Problem
// shapes: the graph's static dims, and for symbolic ones their bound in dim_bounds ("batch=8"),
// else 1. The blocks' backends keep the choices they time (onednn's forms and layouts, also at a
// new shape's first run) in one record, the field timed_choices (onednn's text): each block is
// given it and replays it untimed, and choice_records() merges back what they timed since, so a
// package saves it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/compiling_backend.h"

namespace hone::select {

/// A backend from the registry, as a BlockCompiler: supports() from its
/// plan() of the graph, compile() builds a one-block backend of it, given the
/// owner's value of each record of timed choices (BackendConfig::
/// declare_record) the two declare by the same name, and built() hands those
/// backends back so that the owner can collect what they timed.
class RegistryCompiler final : public BlockCompiler {
 public:
  RegistryCompiler(std::string backend, const BackendConfig* owner)
      : backend_(std::move(backend)), owner_(owner) {}
  std::string_view name() const override { return backend_; }
  NodeSupport supports(const Graph& g, const Node& node) const override;
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
  /// Created and configured (threads from the owner, one block, no passes).
  Result<std::unique_ptr<Backend>> create() const;
  /// The backends compile() built that are still alive (thread-safe).
  std::vector<std::shared_ptr<const Backend>> built() const;

 private:
  std::string backend_;
  const BackendConfig* owner_;
  mutable std::mutex mu_;
  struct Planned {
    std::vector<std::string> names;         // the graph's node names, to recognise it
    std::map<NodeId, std::string> refused;  // what plan() left to the fallback
  };
  mutable std::map<const Graph*, Planned> refused_;
  mutable std::mutex built_mu_;
  std::vector<std::weak_ptr<const Backend>> built_;
};

class SelectBackend final : public CompilingBackend {
 public:
  SelectBackend();
  std::string_view name() const override { return "select"; }
  const BackendCapabilities& capabilities() const override { return caps(); }
  static const BackendCapabilities& caps();
  std::vector<std::string> describe_kernels() const override;
  /// Heavy nodes timed by this build (0 when it replayed recorded choices).
  int timed_nodes() const { return timed_nodes_; }
  /// kernel_choices, and timed_choices with the entries its blocks' backends
  /// (onednn's) have timed since they were built merged in.
  std::vector<std::pair<std::string, std::string>> choice_records() const override;

 protected:
  NodeSupport supports(const Graph& g, const Node& node) const override;
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
  std::vector<BlockCompiler*> compilers() override;
  Result<runtime::ExecutorOptions> executor_options(const Graph& g) const override;
  Result<void> do_build(const Graph& graph) override;

 private:
  struct Choice {
    std::string node;
    std::string winner;
    std::vector<std::string> accepted;
  };
  Result<std::vector<Choice>> choose(const Graph& planned);
  Result<std::vector<Choice>> parse_choices(const std::string& text) const;

  RegistryCompiler onednn_, blas_, aot_;
  std::shared_ptr<const OptimizedGraph> planned_;
  std::vector<Choice> choices_;
  std::map<std::string, std::string> ops_;  // node -> "Conv 'name'"
  int timed_nodes_ = 0;
};

}  // namespace hone::select

namespace hone {
class BackendRegistry;
/// Adds "select" (declared here, not in hone/registry.h: only the one list
/// in src/backends/registry.cpp calls it).
void register_select(BackendRegistry& registry);
}  // namespace hone
