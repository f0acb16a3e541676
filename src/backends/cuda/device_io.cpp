// CudaBackend's device-resident inference (infer_on_device), its checks and
// its staging through the host, to_device/to_host and the transfer counters.
#include <string>
#include <utility>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_block.h"
#include "backends/cuda/device_pool.h"
#include "core/log.h"
#include "hone/shape.h"

namespace hone::cuda {
namespace {

constexpr int kPointerMemoryType = 2;     // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kPointerDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr unsigned kMemoryTypeHost = 1;   // CU_MEMORYTYPE_HOST

std::string address_text(const void* p) {
  return fmt::format("{}", p);
}

/// Whether `t`'s memory is device memory of `d`'s device; the reason when not.
Result<void> check_memory(const Driver& d, const DeviceTensor& t, const std::string& what) {
  if (t.device != d.ordinal())
    return fail(ErrorCode::kInvalidArgument,
                what + " is on cuda:" + std::to_string(t.device) +
                    "; backend 'cuda' runs on cuda:" + std::to_string(d.ordinal()) +
                    " (HONE_CUDA_DEVICE)");
  if (t.nbytes() == 0) return {};
  const auto ptr = reinterpret_cast<CUdeviceptr>(t.data);
  unsigned type = 0;
  int ordinal = -1;
  const Api& a = d.api();
  if (a.cuPointerGetAttribute(&type, kPointerMemoryType, ptr) != 0)
    return fail(ErrorCode::kInvalidArgument,
                what + " at " + address_text(t.data) +
                    " is not memory CUDA knows (not allocated by CUDA, or freed)");
  if (type == kMemoryTypeHost)
    return fail(ErrorCode::kInvalidArgument,
                what + " at " + address_text(t.data) +
                    " is host memory: give it to infer(), or copy it to the device first");
  if (a.cuPointerGetAttribute(&ordinal, kPointerDeviceOrdinal, ptr) == 0 && ordinal != d.ordinal())
    return fail(ErrorCode::kInvalidArgument,
                what + " says cuda:" + std::to_string(t.device) +
                    " but its memory is on cuda:" + std::to_string(ordinal));
  return {};
}

/// A tensor with `t`'s dtype and shape and no data: for checks that read only those.
Tensor shape_only(const DeviceTensor& t) {
  return Tensor::borrow(t.dtype, t.shape, nullptr);
}

}  // namespace

Result<void> CudaBackend::check_device_inputs(const Driver& d,
                                              const std::vector<DeviceTensor>& inputs,
                                              const DeviceCall& call) const {
  const Graph& g = *planned_graph();
  if (inputs.size() != g.inputs().size())
    return fail(ErrorCode::kInvalidArgument,
                "graph '" + g.name() + "' takes " + std::to_string(g.inputs().size()) +
                    " inputs, got " + std::to_string(inputs.size()) + " device tensors");
  std::vector<Tensor> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HONE_CHECK_OK(check_memory(
        d, inputs[i],
        "device input " + std::to_string(i) + " '" + g.value(g.inputs()[i]).name + "'"));
    shapes.push_back(shape_only(inputs[i]));
  }
  HONE_CHECK_OK(executor()->check_inputs(shapes));  // names the input and axis
  if (!call.outputs.empty() && call.outputs.size() != g.outputs().size())
    return fail(ErrorCode::kInvalidArgument,
                "graph '" + g.name() + "' has " + std::to_string(g.outputs().size()) +
                    " outputs, got " + std::to_string(call.outputs.size()) +
                    " device tensors to write them into");
  for (size_t o = 0; o < call.outputs.size(); ++o)
    HONE_CHECK_OK(check_memory(
        d, call.outputs[o],
        "device output " + std::to_string(o) + " '" + g.value(g.outputs()[o]).name + "'"));
  return {};
}

Result<std::vector<DeviceTensor>> CudaBackend::do_infer_on_device(
    const std::vector<DeviceTensor>& inputs, const DeviceCall& call) const {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  HONE_CHECK_OK(check_device_inputs(*d, inputs, call));
  const runtime::Executor::SoleBlock sole = executor()->sole_block();
  const auto* block = dynamic_cast<const CudaBlock*>(sole.block);
  std::string why;
  if (block == nullptr) {
    const size_t blocks = partition().blocks.size();
    why = blocks == 1 ? "its one block is no cuda block"
                      : "it runs as " + std::to_string(blocks) +
                            " stages (nodes on the reference between cuda blocks)";
  } else {
    std::vector<DeviceTensor> block_inputs;
    for (size_t gi : sole.inputs) block_inputs.push_back(inputs[gi]);
    std::vector<DeviceTensor> block_outputs(call.outputs.empty() ? 0 : block->output_count());
    bool repeated = false;
    for (size_t o = 0; o < call.outputs.size(); ++o) {
      repeated = repeated || block_outputs[sole.outputs[o]].data != nullptr;
      block_outputs[sole.outputs[o]] = call.outputs[o];
    }
    if (repeated) {
      why = "one value is several of its outputs";
    } else {
      HONE_TRY(auto ran, block->run_on_device(block_inputs, static_cast<CUstream>(call.stream),
                                              block_outputs, call.synchronize));
      if (ran) {
        std::vector<DeviceTensor> out;
        for (size_t bo : sole.outputs) out.push_back((*ran)[bo]);
        return out;
      }
      why = "its cuda block has no plan for these inputs (see the debug log)";
    }
  }
  return staged_on_device(*d, inputs, call, why);
}

Result<std::vector<DeviceTensor>> CudaBackend::staged_on_device(
    const Driver& d, const std::vector<DeviceTensor>& inputs, const DeviceCall& call,
    const std::string& why) const {
  if (!staged_logged_.exchange(true))
    HONE_LOG_INFO("cuda: device-resident inference of '{}' goes through host memory: {}",
                  planned_graph()->name(), why);
  const Api& a = d.api();
  const auto s = static_cast<CUstream>(call.stream);
  std::vector<Tensor> host;
  for (const DeviceTensor& t : inputs) {
    HONE_TRY(Tensor h, Tensor::allocate_for_overwrite(t.dtype, t.shape));
    if (t.nbytes() > 0) {
      HONE_CHECK_OK(d.check(
          a.cuMemcpyDtoHAsync(h.raw(), reinterpret_cast<CUdeviceptr>(t.data), t.nbytes(), s),
          "cuMemcpyDtoHAsync"));
      stats_->count_d2h(t.nbytes());
    }
    host.push_back(std::move(h));
  }
  HONE_CHECK_OK(d.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
  HONE_TRY(std::vector<Tensor> outs, do_infer(host));
  HONE_CHECK_OK(d.make_current());
  std::vector<DeviceTensor> result;
  const Graph& g = *planned_graph();
  for (size_t o = 0; o < outs.size(); ++o) {
    const Tensor& h = outs[o];
    DeviceTensor t;
    if (!call.outputs.empty()) {
      t = call.outputs[o];
      if (t.dtype != h.dtype() || t.shape != h.shape())
        return fail(ErrorCode::kInvalidArgument,
                    "device output " + std::to_string(o) + " '" + g.value(g.outputs()[o]).name +
                        "' is " + t.describe() + "; the output is " + h.describe());
    } else {
      t.dtype = h.dtype();
      t.shape = h.shape();
      t.device = d.ordinal();
      HONE_TRY(t.owner, DevicePool::take(d, h.nbytes()));
      t.data = t.owner.get();
    }
    if (h.nbytes() > 0) {
      HONE_CHECK_OK(d.check(
          a.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(t.data), h.raw(), h.nbytes(), s),
          "cuMemcpyHtoDAsync"));
      stats_->count_h2d(h.nbytes());
    }
    result.push_back(std::move(t));
  }
  // The host outputs go when this returns: the copies must be done.
  HONE_CHECK_OK(d.check(a.cuStreamSynchronize(s), "cuStreamSynchronize"));
  return result;
}

Result<DeviceTensor> CudaBackend::to_device(const Tensor& t) const {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  DeviceTensor out{nullptr, t.dtype(), t.shape(), d->ordinal(), nullptr};
  HONE_TRY(out.owner, DevicePool::take(*d, t.nbytes()));
  out.data = out.owner.get();
  if (t.nbytes() > 0) {
    const Api& a = d->api();
    HONE_CHECK_OK(d->check(
        a.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(out.data), t.raw(), t.nbytes(), nullptr),
        "cuMemcpyHtoDAsync"));
    HONE_CHECK_OK(d->check(a.cuStreamSynchronize(nullptr), "cuStreamSynchronize"));
  }
  return out;
}

Result<Tensor> CudaBackend::to_host(const DeviceTensor& t) const {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  HONE_CHECK_OK(check_memory(*d, t, "device tensor " + t.describe()));
  HONE_TRY(Tensor h, Tensor::allocate_for_overwrite(t.dtype, t.shape));
  if (t.nbytes() > 0) {
    const Api& a = d->api();
    HONE_CHECK_OK(d->check(
        a.cuMemcpyDtoHAsync(h.raw(), reinterpret_cast<CUdeviceptr>(t.data), t.nbytes(), nullptr),
        "cuMemcpyDtoHAsync"));
    HONE_CHECK_OK(d->check(a.cuStreamSynchronize(nullptr), "cuStreamSynchronize"));
  }
  return h;
}

std::optional<TransferCounts> CudaBackend::transfers() const {
  TransferCounts c;
  c.host_to_device = stats_->h2d.load();
  c.host_to_device_bytes = stats_->h2d_bytes.load();
  c.device_to_host = stats_->d2h.load();
  c.device_to_host_bytes = stats_->d2h_bytes.load();
  c.device_to_device = stats_->d2d.load();
  c.device_to_device_bytes = stats_->d2d_bytes.load();
  return c;
}

}  // namespace hone::cuda
