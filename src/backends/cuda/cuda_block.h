// Private to the cuda backend: one compiled block. init() creates its units,
// compiles its element-wise chains into one module and uploads its
// constants; each input-shape signature is built into a Program
// (cuda_block_build.cpp) and run on a stream of the pool (cuda_block.cpp).
// The signature cache, its failure memo and the reference fallback are
// BlockRuntime's (backends/common/block_runtime.h).
//
//   auto b = std::make_unique<CudaBlock>(graph, driver, fixed, stats, streams, settings);
//   HONE_CHECK_OK(b->init());
//   HONE_TRY(auto outputs, b->run(inputs));  // thread-safe
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/block_runtime.h"
#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/op.h"
#include "backends/cuda/program.h"
#include "backends/cuda/stream_pool.h"
#include "hone/device_tensor.h"

namespace hone::cuda {

/// The dtype a block input's slot holds: integer and bool inputs (token ids a
/// Gather reads, a mask a Cast or Where reads) keep theirs, the rest is f32.
DType input_dtype(DType declared);

class CudaBlock final : public BlockRuntime<Program> {
 public:
  CudaBlock(std::shared_ptr<const Graph> g, const Driver& d, const Module& fixed,
            std::shared_ptr<Stats> stats, std::shared_ptr<StreamPool> pool, BuildSettings conv);

  /// Creates the units, compiles the block's chains, uploads its constants.
  [[nodiscard]] Result<void> init();

  /// Makes the device's context current on this thread first: building a
  /// Program looks up kernels in modules, not only the launches need it.
  [[nodiscard]] Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override;

  /// Device-resident run (cuda_block_device.cpp): `inputs` (block order) on
  /// the device are copied device to device into the arena of a pooled
  /// stream that first waits for `caller`; the outputs (block order) go into
  /// `outs[i]` where its data is set (checked against the output's dtype and
  /// shape), else into new memory from the DevicePool; `caller` then waits
  /// for the pooled stream. Nothing (no value) when this block has no Program
  /// for these dtypes and dims: the caller stages through the host instead.
  [[nodiscard]] Result<std::optional<std::vector<DeviceTensor>>> run_on_device(
      const std::vector<DeviceTensor>& inputs, CUstream caller,
      const std::vector<DeviceTensor>& outs, bool synchronize) const;
  size_t output_count() const { return graph().outputs().size(); }

 private:
  /// The inputs' dims, when each input has the dtype its slot keeps
  /// (input_dtype); else no key, and the run goes to the reference (logged).
  std::optional<ShapeSignature> key_of(const std::vector<Tensor>& inputs) const override;

  // cuda_block_build.cpp: slots, steps (each unit's op planned for its input
  // dims), the arena and workspace sizes; under activations=auto, build_auto().
  Result<std::shared_ptr<const Program>> build(const ShapeSignature& sig) const override;
  /// One Program and its kernel plan lines (not yet published to stats_).
  struct Built {
    std::shared_ptr<const Program> program;
    std::vector<std::string> lines;
    bool any_half = false;  // some slot holds bf16/f16 (storage.h)
  };
  /// The Program of `sig` with half activations (storage.h) or without.
  Result<Built> build_as(const ShapeSignature& sig, bool half_acts) const;
  /// Adds `lines` to the backend's kernel plan (each distinct line once).
  void publish(const std::vector<std::string>& lines) const;
  // activations_auto.cpp: the recorded storage, or both Programs timed and
  // the faster kept (its kernel choices committed, the other's dropped).
  Result<std::shared_ptr<const Program>> build_auto(const ShapeSignature& sig) const;
  /// Median milliseconds of one run of `program`'s steps on `ex`'s stream,
  /// its arena at `arena` (zeros, f32 inputs 0.01), as runs replay them.
  Result<double> time_program(const Program& program, StreamPool::Exec& ex,
                              CUdeviceptr arena) const;

  // cuda_block.cpp: one inference on a stream taken from the pool.
  Result<std::vector<Tensor>> execute(const Program& program,
                                      const std::vector<Tensor>& inputs) const override;
  Result<std::vector<Tensor>> execute_on(const Program& program, StreamPool::Exec& ex,
                                         const std::vector<Tensor>& inputs) const;
  /// Gives `ex` an arena of at least the program's size.
  Result<void> ensure_arena(const Program& program, StreamPool::Exec& ex) const;
  Result<std::vector<DeviceTensor>> execute_on_device(const Program& program, StreamPool::Exec& ex,
                                                      const std::vector<DeviceTensor>& inputs,
                                                      CUstream caller,
                                                      const std::vector<DeviceTensor>& outs,
                                                      bool synchronize) const;
  /// Copies the inputs into their slots (through the stream's pinned staging).
  Result<void> upload_inputs(const Program& program, StreamPool::Exec& ex,
                             const std::vector<Tensor>& inputs) const;
  /// Enqueues the steps: replayed as a CUDA graph once captured, else one by one.
  Result<void> launch_steps(const Program& program, StreamPool::Exec& ex, const ExecCtx& ctx) const;
  Result<void> run_steps(const Program& program, const ExecCtx& ctx, CUdeviceptr base) const;
  /// HONE_CUDA_PROFILE=1: each step timed with events and logged.
  Result<void> profile_steps(const Program& program, const ExecCtx& ctx, CUdeviceptr base) const;
  /// Downloads the outputs (page-locked, staged or direct) and synchronizes.
  Result<std::vector<Tensor>> download_outputs(const Program& program, StreamPool::Exec& ex) const;

  const Driver& d_;
  const Module& fixed_;
  std::shared_ptr<Stats> stats_;
  std::shared_ptr<StreamPool> pool_;
  BuildSettings settings_;  // its choices: a layer over the backend's record (build_auto)
  std::vector<Unit> units_;
  std::map<ValueId, DeviceBuffer> constants_;
  std::map<ValueId, DeviceBuffer> half_constants_;  // bf16/f16 copies of GEMM weights
};

}  // namespace hone::cuda
