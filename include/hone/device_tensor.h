// hone::DeviceTensor: a dense, contiguous, row-major tensor in a GPU's
// memory, for device-resident inference (Backend::infer_on_device): inputs
// already on the device go in and outputs stay there, with no host copy.
//
//   hone::DeviceTensor x{ptr, hone::DType::kF32, {1, 3, 224, 224}, /*device=*/0};
//   HONE_TRY(auto ys, backend.infer_on_device({x}, {.stream = my_cuda_stream}));
//   use(ys[0].data);  // device memory hone owns until the last copy of ys[0] goes
//
// A DeviceTensor either borrows (owner is null: the caller keeps the memory
// alive and unchanged until the work enqueued on the call's stream is done)
// or owns its memory through `owner`, a shared handle whose deleter gives the
// memory back; copying a DeviceTensor shares it. Nothing here reads or
// writes the bytes: only a backend that runs on that device does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hone/dtype.h"

namespace hone {

struct DeviceTensor {
  /// The first element, a device address (a CUdeviceptr / what cudaMalloc
  /// gives); may be null only for a tensor of no elements.
  void* data = nullptr;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  /// The CUDA device ordinal the memory belongs to.
  int device = 0;
  /// Set when this tensor owns its memory (the deleter frees it); null for a
  /// borrowed view.
  std::shared_ptr<void> owner;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  /// "f32[1,3,224,224] on cuda:0"
  std::string describe() const;
};

/// How one device-resident call runs (Backend::infer_on_device).
struct DeviceCall {
  /// The caller's CUDA stream (a CUstream or cudaStream_t; the same ABI), or
  /// null for the legacy default stream. The backend's work starts after what
  /// the caller enqueued on it so far, and what the caller enqueues on it
  /// after the call starts after the backend's work (CUDA events both ways);
  /// the call returns without waiting for the device unless `synchronize`.
  void* stream = nullptr;
  /// Caller-provided outputs, one per graph output in order, written in
  /// place (shape and dtype must be the outputs'); empty: the backend
  /// allocates the outputs and the returned tensors own them.
  std::vector<DeviceTensor> outputs;
  /// Wait until the device has finished the call before returning (for
  /// timing, and for callers without a stream to wait on).
  bool synchronize = false;
};

/// Copies a backend made between host and device memory for the inputs and
/// outputs of inferences (and of the blocks inside a partitioned graph),
/// since it was built: a device-resident inference that makes none proves
/// no host copy was needed. Copies device to device (into and out of the
/// backend's own arena) are counted apart.
struct TransferCounts {
  uint64_t host_to_device = 0;
  uint64_t host_to_device_bytes = 0;
  uint64_t device_to_host = 0;
  uint64_t device_to_host_bytes = 0;
  uint64_t device_to_device = 0;
  uint64_t device_to_device_bytes = 0;
};

}  // namespace hone
