// The aot backend: lowers blocks of the graph to C (fused element-wise loops;
// GEMMs through oneDNN's dnnl_sgemm with Transposes and scalar/bias epilogues
// folded into its strides, alpha and C; convs as oneDNN convolution primitives
// on channels-last or nChw16c activations (nhwc.h), created by the generated
// code through oneDNN's C API; LSTM as a register-blocked cell kernel
// (lstm.h), GRU through SGEMMs (rnn.h); i64, i32 and bool values where the
// graph has them: token ids, masks, TopK's indices (typed_values.h); one
// arena planned by liveness, weights in a blob), compiles them with the system
// compiler into shared libraries (cached by source hash) and runs them through their C ABI. Refused
// nodes run on the reference through CompilingBackend; a build that covers the whole graph exports
// as a `native-so` folder that runs without hone.
//
//   auto be = std::make_unique<aot::AotBackend>();
//   HONE_CHECK_OK(be->build(graph));                  // generates, compiles, dlopens
//   HONE_CHECK_OK(be->export_artifact("out/model"));  // model.so, weights.bin, model.json
//
// Config: dim_bounds ("batch=32,seq=128": the largest value of each symbolic
// dim the arena is planned for), default_dim_max (64, for input symbols
// without a bound; larger inputs are a clear error at run time). The dims
// inside the graph (the importer's "unk__N") are bounded by what they are
// with the inputs at their bounds (passes/dim_bounds.h). march_native (true:
// compile for this CPU and check its features when the library is created).
// No compiler (HONE_CXX unset and none on PATH, or HONE_CXX not executable):
// build() fails with kUnsupportedHardware. infer() is thread-safe.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/compiling_backend.h"

namespace hone::aot {

class AotBlock;
class RunTimeValues;

class AotBackend final : public CompilingBackend {
 public:
  AotBackend();
  static const BackendCapabilities& caps();

  std::string_view name() const override { return "aot"; }
  const BackendCapabilities& capabilities() const override { return caps(); }

  /// Runs of compiled code (one per block per inference).
  uint64_t kernel_executions() const { return shared_->executions.load(); }
  /// Blocks proposed but not lowered (each runs on the reference), with why.
  const std::vector<std::string>& lowering_fallbacks() const { return fallbacks_; }
  /// One line per fused step of every block: "Conv+Relu [conv.f32.aot.dnnl_nhwc+post_ops]".
  std::vector<std::string> describe_kernels() const override;
  /// Per block: the compiler's log, and whether the library came from the cache.
  std::vector<std::string> compile_logs() const;
  std::vector<bool> cache_hits() const;
  /// Per block: the generated C source.
  std::vector<std::string> sources() const;

  Result<void> export_artifact(const std::filesystem::path& dir) const override;

 protected:
  NodeSupport supports(const Graph& g, const Node& node) const override;
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
  /// compile() of a block without host nodes (host_block.h).
  Result<std::unique_ptr<CompiledBlock>> compile_lowered(const Graph& block);
  Result<void> do_build(const Graph& graph) override;
  void prepare_body(const Graph& body) override;
  Result<void> do_save(const std::filesystem::path& dir) const override;
  Result<void> do_load(const Graph& graph, const std::filesystem::path& dir) override;

 private:
  struct Shared {
    std::atomic<uint64_t> executions{0};
  };
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::vector<const AotBlock*> blocks_;  // owned by CompilingBackend's stages
  std::filesystem::path load_dir_;       // set while do_load() runs
  std::vector<std::string> node_names_;  // describe() of every node, for export errors
  std::vector<std::string> fallbacks_;   // why each block aot could not lower runs on the reference
  int host_blocks_ = 0;                  // blocks with host nodes (host_block.h): no artifact
  /// Bounds of the graph's inner symbolic dims, derived from the inputs'
  /// (passes/dim_bounds.h) when build() starts; dim_bounds still wins.
  std::map<std::string, int64_t> derived_bounds_;
  /// Integer and bool values not computed from dims, of the graph do_build()
  /// is given and of each graph supports() is asked about (host_block.h).
  std::shared_ptr<RunTimeValues> run_time_values_;
};

/// The per-node answer behind AotBackend::supports().
NodeSupport supports_node(const Graph& g, const Node& node);

}  // namespace hone::aot
