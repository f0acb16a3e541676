// Private to the cuda backend: what a block is built into for one input-shape
// signature (CudaBlock::build): the slot of every value (an offset into the
// stream's device arena, or a constant's device pointer), and the planned op
// of every unit as a step reading and writing slots. Immutable once built;
// every stream runs it with its own arena.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/op.h"
#include "ops/nonzero.h"

namespace hone::cuda {

struct Program {
  struct Slot {
    bool constant = false;
    size_t offset = 0;     // into the arena, unless constant
    CUdeviceptr cptr = 0;  // constant (an initializer, or a host value uploaded for this program)
    CUdeviceptr half = 0;  // its bf16/f16 copy (a matrix-product weight under bf16/fp16)
    dims_t dims;
    DType dtype = DType::kF32;
    std::shared_ptr<const Tensor> host;  // a value computed on the host at build time
    bool dims_only = false;              // OpPlan::dims_only: no bytes, only dims for Shape nodes
    Storage storage = Storage::kF32;     // kHalf: dtype is bf16/f16 (op.h)
  };
  struct Step {
    OpPlan op;
    std::vector<size_t> in, out;
    /// Its unit's label, or what a conversion step (storage.h) converts and why.
    std::string label;
  };
  std::vector<Slot> slots;
  std::vector<size_t> input_slots, output_slots;
  /// Outputs whose length the run finds (NonZero, NonMaxSuppression;
  /// OpPlan::counted), `output` the block output's index: the slot holds the
  /// elements, then the length.
  std::vector<ops::CountedOutput> counted_outputs;
  std::vector<Step> steps;
  size_t arena_bytes = 0, workspace_offset = 0;
  std::vector<DeviceBuffer> uploads;          // host values device ops read, copied once
  size_t launches = 0;                        // steps that enqueue work
  mutable std::atomic<bool> no_graph{false};  // a capture failed: run its steps one by one

  /// Where `slot` lives when the arena starts at `base`.
  CUdeviceptr address(size_t slot, CUdeviceptr base) const {
    const Slot& sl = slots[slot];
    return sl.constant ? sl.cptr : base + sl.offset;
  }
  /// The pointers step `k` runs with when the arena starts at `base`.
  Bind bind(size_t k, CUdeviceptr base) const {
    const Step& st = steps[k];
    Bind b;
    for (size_t in : st.in) {
      b.in.push_back(address(in, base));
      b.half.push_back(slots[in].half);
    }
    for (size_t out : st.out) b.out.push_back(address(out, base));
    b.workspace = base + workspace_offset;
    b.step = k;
    return b;
  }
};

}  // namespace hone::cuda
