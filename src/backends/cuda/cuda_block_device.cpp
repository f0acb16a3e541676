// CudaBlock's device-resident runs: inputs and outputs in device memory, the
// caller's stream ordered before and after hone's with events, no host copy.
#include <string>
#include <utility>

#include "backends/cuda/cuda_block.h"
#include "backends/cuda/device_pool.h"
#include "core/log.h"

namespace hone::cuda {

Result<std::optional<std::vector<DeviceTensor>>> CudaBlock::run_on_device(
    const std::vector<DeviceTensor>& inputs, CUstream caller, const std::vector<DeviceTensor>& outs,
    bool synchronize) const {
  HONE_CHECK_OK(d_.make_current());
  const Graph& g = graph();
  if (inputs.size() != g.inputs().size())
    return fail(ErrorCode::kInternal, "cuda block '" + g.name() + "' takes " +
                                          std::to_string(g.inputs().size()) + " inputs, got " +
                                          std::to_string(inputs.size()));
  // The key execute() would use (key_of): each input at its slot's dtype.
  ShapeSignature key;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType want = input_dtype(g.value(g.inputs()[i]).dtype);
    if (inputs[i].dtype != want) {
      HONE_LOG_DEBUG("cuda: block '{}' has no device-resident run: input '{}' is {}, its slot {}",
                     g.name(), g.value(g.inputs()[i]).name, dtype_name(inputs[i].dtype),
                     dtype_name(want));
      return std::optional<std::vector<DeviceTensor>>();
    }
    key.push_back(inputs[i].shape);
  }
  std::shared_ptr<const Program> program = program_for(key);
  if (!program) return std::optional<std::vector<DeviceTensor>>();
  if (!program->counted_outputs.empty()) {
    // A run-length output's length must come to the host, which the host run does.
    HONE_LOG_DEBUG(
        "cuda: block '{}' has no device-resident run: it ends with a NonZero or NonMaxSuppression",
        g.name());
    return std::optional<std::vector<DeviceTensor>>();
  }
  auto ex = pool_->take();
  if (!ex)
    return fail(std::move(ex).error().add_context("while running cuda block '" + g.name() + "'"));
  auto out = execute_on_device(*program, **ex, inputs, caller, outs, synchronize);
  if (!out)
    return fail(std::move(out).error().add_context("while running cuda block '" + g.name() + "'"));
  pool_->give(std::move(*ex));
  stats_->kernel_executions.fetch_add(program->launches, std::memory_order_relaxed);
  return std::optional<std::vector<DeviceTensor>>(std::move(*out));
}

Result<std::vector<DeviceTensor>> CudaBlock::execute_on_device(
    const Program& program, StreamPool::Exec& ex, const std::vector<DeviceTensor>& inputs,
    CUstream caller, const std::vector<DeviceTensor>& outs, bool synchronize) const {
  const Graph& g = graph();
  const Api& a = d_.api();
  const CUstream s = ex.stream.get();
  HONE_CHECK_OK(ensure_arena(program, ex));
  const CUdeviceptr base = ex.arena.ptr();
  // hone's stream starts after what the caller queued on theirs so far.
  HONE_CHECK_OK(d_.check(a.cuEventRecord(ex.handoff.begin(), caller), "cuEventRecord"));
  HONE_CHECK_OK(d_.check(a.cuStreamWaitEvent(s, ex.handoff.begin(), 0), "cuStreamWaitEvent"));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DeviceTensor& t = inputs[i];
    const size_t nb = t.nbytes();
    if (nb == 0) continue;
    const CUdeviceptr dst = program.address(program.input_slots[i], base);
    HONE_CHECK_OK(d_.check(a.cuMemcpyDtoDAsync(dst, reinterpret_cast<CUdeviceptr>(t.data), nb, s),
                           "cuMemcpyDtoDAsync"));
    stats_->count_d2d(nb);
  }
  const ExecCtx ctx{d_, fixed_, s, ex.stream.blas(), ex.stream.dnn(), ex.errors.word()};
  HONE_CHECK_OK(launch_steps(program, ex, ctx));
  std::vector<DeviceTensor> results;
  results.reserve(program.output_slots.size());
  for (size_t o = 0; o < program.output_slots.size(); ++o) {
    const size_t slot = program.output_slots[o];
    const Program::Slot& sl = program.slots[slot];
    const std::string name = g.value(g.outputs()[o]).name;
    DeviceTensor t;
    if (o < outs.size() && outs[o].data != nullptr) {
      t = outs[o];
      if (t.dtype != sl.dtype || t.shape != std::vector<int64_t>(sl.dims.begin(), sl.dims.end()))
        return fail(ErrorCode::kInvalidArgument,
                    "device output for '" + name + "' is " + t.describe() + "; the output is " +
                        std::string(dtype_name(sl.dtype)) + shape_to_string(sl.dims));
      if (t.device != d_.ordinal())
        return fail(ErrorCode::kInvalidArgument,
                    "device output for '" + name + "' is on cuda:" + std::to_string(t.device) +
                        "; this backend runs on cuda:" + std::to_string(d_.ordinal()));
    } else {
      t.dtype = sl.dtype;
      t.shape.assign(sl.dims.begin(), sl.dims.end());
      t.device = d_.ordinal();
      HONE_TRY(t.owner, DevicePool::take(d_, t.nbytes()));
      t.data = t.owner.get();
    }
    const size_t nb = t.nbytes();
    const auto dst = reinterpret_cast<CUdeviceptr>(t.data);
    if (nb > 0 && sl.host) {  // computed on the host when built: its one copy up
      HONE_CHECK_OK(d_.check(a.cuMemcpyHtoDAsync(dst, sl.host->raw(), nb, s), "cuMemcpyHtoDAsync"));
      stats_->count_h2d(nb);
    } else if (nb > 0) {
      HONE_CHECK_OK(d_.check(a.cuMemcpyDtoDAsync(dst, program.address(slot, base), nb, s),
                             "cuMemcpyDtoDAsync"));
      stats_->count_d2d(nb);
    }
    results.push_back(std::move(t));
  }
  // The caller's later work starts after hone's.
  HONE_CHECK_OK(d_.check(a.cuEventRecord(ex.handoff.end(), s), "cuEventRecord"));
  HONE_CHECK_OK(d_.check(a.cuStreamWaitEvent(caller, ex.handoff.end(), 0), "cuStreamWaitEvent"));
  if (synchronize) {
    HONE_CHECK_OK(ex.errors.enqueue_read(d_, s));
    HONE_CHECK_OK(d_.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
    HONE_CHECK_OK(ex.errors.check(d_, s, program));  // an index out of range, naming its node
    float steps_ms = 0.0f;
    if (d_.check(a.cuEventElapsedTime(&steps_ms, ex.steps.begin(), ex.steps.end()),
                 "cuEventElapsedTime"))
      stats_->device_ns.fetch_add(static_cast<uint64_t>(static_cast<double>(steps_ms) * 1e6),
                                  std::memory_order_relaxed);
  } else {
    // This call returns before its kernels run, so it cannot report a bad
    // index (its outputs hold NaN there, as the kernels write): the word is
    // cleared behind it, so that the next call on this stream starts clean.
    HONE_CHECK_OK(ex.errors.clear(d_, s));
  }
  return results;
}

}  // namespace hone::cuda
