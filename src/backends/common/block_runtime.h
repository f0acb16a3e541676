// BlockRuntime: what every compiled block of a compiling backend does around
// its own code (blas, onednn, cuda). A block is built once per input-shape
// signature into a Program (the backend's type: slots, steps, arena layout),
// which is cached; a signature whose build failed is remembered with its
// Error and runs on the reference interpreter, as does any call with a
// non-f32 input; each such run counts as a fallback run. A build that ran
// out of memory is the exception: the run fails with that error (a batch
// that does not fit is the caller's to shrink, not a reason to run it on the
// host) and is not remembered, so the signature builds once memory is back. A backend whose
// Program depends on some inputs' values widens the cache key (key_of).
//
//   class MyBlock final : public BlockRuntime<MyProgram> {
//     Result<std::shared_ptr<const MyProgram>> build(const ShapeSignature&) const override;
//     Result<std::vector<Tensor>> execute(const MyProgram&, const std::vector<Tensor>&) const
//     override;
//   };
//
// Thread-safety: run() may be called from many threads at once; build() is
// called under the block's lock, at most once per signature; execute() is
// called concurrently with the same Program (a Program is immutable once
// built).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/static_dims.h"
#include "core/log.h"
#include "eval/interpreter.h"
#include "hone/graph.h"
#include "hone/tensor.h"
#include "runtime/block_compiler.h"

namespace hone {

template <class Program>
class BlockRuntime : public CompiledBlock {
 public:
  /// Runs `inputs` on the Program of their signature (built now on first
  /// use), or on the reference interpreter when there is none.
  [[nodiscard]] Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    std::shared_ptr<const Program> program;
    if (std::optional<ShapeSignature> key = key_of(inputs)) {
      std::lock_guard lock(mu_);
      auto p = program_locked(*key);
      if (p)
        program = *p;
      else if (p.error().code() == ErrorCode::kOutOfMemory)
        return fail(std::move(p).error());  // the caller's to handle, not the reference's
    }
    if (!program) {
      fallback_runs_->fetch_add(1, std::memory_order_relaxed);
      return fallback_.run_tensors(*graph_, inputs);
    }
    return execute(*program, inputs);
  }

  /// Builds the Program of `sig` now (a static block, at compile time). A
  /// failure is logged and remembered: that signature runs on the reference.
  void prepare(const ShapeSignature& sig) const {
    std::lock_guard lock(mu_);
    (void)program_locked(sig);
  }

 protected:
  /// `backend` names the logs ("cuda"); `fallback_runs` counts the runs on
  /// the reference and must outlive the block (the backend's shared stats).
  BlockRuntime(std::string backend, std::shared_ptr<const Graph> graph,
               std::atomic<uint64_t>* fallback_runs)
      : backend_(std::move(backend)), graph_(std::move(graph)), fallback_runs_(fallback_runs) {}

  const Graph& graph() const { return *graph_; }
  const std::shared_ptr<const Graph>& shared_graph() const { return graph_; }

  /// The Program of `key` (built now on first use), or null when it cannot
  /// be built (the reason was logged; such runs go to the reference).
  [[nodiscard]] std::shared_ptr<const Program> program_for(const ShapeSignature& key) const {
    std::lock_guard lock(mu_);
    auto p = program_locked(key);
    return p ? *p : nullptr;
  }

  /// The key one run's Program is cached under, or nullopt to run `inputs`
  /// on the reference. By default the inputs' dims, when every input is f32.
  /// A backend whose Program depends on more than dims overrides it (onednn
  /// plans small integer inputs another block computed as constants): the key
  /// must then hold all that build() reads, as build() sees only the key and
  /// runs sharing a key share a Program.
  [[nodiscard]] virtual std::optional<ShapeSignature> key_of(
      const std::vector<Tensor>& inputs) const {
    if (!all_f32(inputs)) return std::nullopt;
    return signature_of(inputs);
  }

  /// The Program for one key (key_of's; by default a signature); its error
  /// says why this backend cannot run those shapes (they then run on the
  /// reference).
  [[nodiscard]] virtual Result<std::shared_ptr<const Program>> build(
      const ShapeSignature& sig) const = 0;
  /// Runs `inputs` (of the Program's signature, all f32) on `program`.
  [[nodiscard]] virtual Result<std::vector<Tensor>> execute(
      const Program& program, const std::vector<Tensor>& inputs) const = 0;

 private:
  Result<std::shared_ptr<const Program>> program_locked(const ShapeSignature& sig) const {
    if (auto it = built_.find(sig); it != built_.end()) return it->second;
    if (auto it = failed_.find(sig); it != failed_.end()) return fail(it->second);
    auto program = build(sig);
    if (!program) {
      // Out of memory passes (a smaller batch, another process done): tried again next time.
      if (program.error().code() == ErrorCode::kOutOfMemory) {
        HONE_LOG_DEBUG("{}: block '{}' for {} does not fit: {}", backend_, graph_->name(),
                       signature_text(sig), program.error().to_string());
        return fail(std::move(program).error());
      }
      HONE_LOG_DEBUG("{}: block '{}' for {} runs on the reference: {}", backend_, graph_->name(),
                     signature_text(sig), program.error().to_string());
      failed_.emplace(sig, program.error());
      return fail(std::move(program).error());
    }
    built_.emplace(sig, *program);
    return *program;
  }

  std::string backend_;
  std::shared_ptr<const Graph> graph_;
  std::atomic<uint64_t>* fallback_runs_;  // not owned
  eval::Interpreter fallback_;
  mutable std::mutex mu_;
  mutable std::map<ShapeSignature, std::shared_ptr<const Program>> built_;
  mutable std::map<ShapeSignature, Error> failed_;  // builds that failed, with why
};

}  // namespace hone
