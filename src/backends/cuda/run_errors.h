// Private to the cuda backend: a stream's run error word. A kernel that meets
// what the reference refuses (an index out of range) cannot fail, so it sets
// this 8-byte device word instead (kernels/prelude.cu's hone_flag: the first
// error wins, with its kind and its step); the run copies the word back with
// its outputs and fails naming the step's unit. CUDA graphs replay the word's
// pointer: the word lives as long as its stream and that stream's graphs
// (StreamPool::Exec).
//
//   HONE_TRY(RunErrors e, RunErrors::create(d));
//   ExecCtx ctx{..., e.word()};  /* steps */  HONE_CHECK_OK(e.enqueue_read(d, s));
//   /* synchronize s */  HONE_CHECK_OK(e.check(d, s, program));  // the step's error
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/cuda_api.h"

namespace hone::cuda {

struct Program;

/// Error kinds (the high half of the word): an index outside its dim.
inline constexpr uint64_t kRunErrorIndex = 1;

/// The word a kernel of step `step` sets for error `kind`.
inline uint64_t run_error_code(uint64_t kind, size_t step) {
  return kind << 32 | static_cast<uint64_t>(step + 1);
}

/// The error that a set word reports: the step's unit, what its kernel met,
/// and the dims of the data it indexed (the step's input 0).
Error run_error(const Program& program, uint64_t word);

class RunErrors {
 public:
  /// A cleared word and its page-locked host copy.
  [[nodiscard]] static Result<RunErrors> create(const Driver& d);
  RunErrors() = default;
  /// The device word, which launches pass to kernels that can set it.
  CUdeviceptr word() const { return word_.ptr(); }
  /// Enqueues the word's copy to the host on `s`: before the run's synchronize.
  [[nodiscard]] Result<void> enqueue_read(const Driver& d, CUstream s) const;
  /// After that synchronize: the error the word holds, if any; a set word is
  /// cleared (on `s`) for the next run.
  [[nodiscard]] Result<void> check(const Driver& d, CUstream s, const Program& program);
  /// Enqueues the word's clearing: for a run that returns before its kernels
  /// are done, and so cannot report.
  [[nodiscard]] Result<void> clear(const Driver& d, CUstream s) const;

 private:
  DeviceBuffer word_;
  PinnedBuffer seen_;
};

}  // namespace hone::cuda
