// A compiled block for tests of the runtime's wiring: runs its graph through
// the interpreter and counts its runs (tests of the Executor and of
// CompilingBackend share it); and a compiler of such blocks that claims the
// ops it is given.
#pragma once

#include <atomic>
#include <optional>
#include <set>
#include <string>

#include "eval/interpreter.h"
#include "runtime/block_compiler.h"

namespace hone::testing_runtime {

class CountingBlock final : public CompiledBlock {
 public:
  CountingBlock(Graph g, std::atomic<int>* runs) : graph_(std::move(g)), runs_(runs) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    ++*runs_;
    return eval::Interpreter().run_tensors(graph_, inputs);
  }

 private:
  Graph graph_;
  std::atomic<int>* runs_;
};

// Claims the ops it is given; runs its blocks through the interpreter, counting.
class OpsCompiler final : public BlockCompiler {
 public:
  OpsCompiler(std::string name, std::set<std::string> ops)
      : name_(std::move(name)), ops_(std::move(ops)) {}
  std::string_view name() const override { return name_; }
  NodeSupport supports(const Graph&, const Node& n) const override {
    return ops_.contains(n.op_type) ? NodeSupport::yes()
                                    : NodeSupport::no(name_ + " has no " + n.op_type);
  }
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override {
    ++blocks;
    return std::make_unique<CountingBlock>(block, &runs);
  }
  bool ends_block_after(const Graph& g, const Node& n) const override {
    return ends_after ? ends_after->contains(n.op_type) : BlockCompiler::ends_block_after(g, n);
  }
  /// The ops that end a block on this compiler; unset: BlockCompiler's rule.
  std::optional<std::set<std::string>> ends_after;
  int blocks = 0;
  std::atomic<int> runs{0};

 private:
  std::string name_;
  std::set<std::string> ops_;
};

}  // namespace hone::testing_runtime
