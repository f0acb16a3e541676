// Private to the cuda backend: device memory for the outputs of
// device-resident inferences (CudaBackend::infer_on_device) and to_device().
// cuMemAlloc costs tens of microseconds and cuMemFree waits for the whole
// device, too slow for every call of a model that runs in a millisecond, so
// a block goes back to a process-wide pool when its last owner drops it and
// is reused for the next request of its size class (core/block_cache.h:
// eight per doubling, at least 64 KiB apart). The pool keeps at most 1 GiB
// of free blocks; past that the oldest are freed.
//
//   HONE_TRY(std::shared_ptr<void> mem, DevicePool::take(d, bytes));
//   auto ptr = reinterpret_cast<CUdeviceptr>(mem.get());
//
// A block handed out again is written by work on hone's streams, which
// start after the work already queued on the stream of the call that asks;
// a caller still using an output on another stream keeps its owner alive.
#pragma once

#include <cstddef>
#include <memory>

#include "backends/cuda/cuda_api.h"

namespace hone::cuda {

class DevicePool {
 public:
  /// At least `bytes` of device memory, its contents unspecified; null for 0
  /// bytes. The shared handle gives the block back to the pool.
  [[nodiscard]] static Result<std::shared_ptr<void>> take(const Driver& d, size_t bytes);
  /// Frees every free block; the bytes released.
  static size_t trim(const Driver& d);
};

}  // namespace hone::cuda
