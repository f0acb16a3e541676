// A compiled block for tests of the runtime's wiring: runs its graph through
// the interpreter and counts its runs (tests of the Executor and of
// CompilingBackend share it).
#pragma once

#include <atomic>

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

}  // namespace hone::testing_runtime
