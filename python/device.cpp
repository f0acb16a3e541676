#include "device.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "convert.h"
#include "hone/device_tensor.h"
#include "hone/shape.h"
#include "hooks.h"

namespace hone::python {

namespace {

// --- DLPack's C ABI ------------------------------------------------------------
// Declared here from the DLPack specification (dlpack.h, v0.8 and its legacy
// DLManagedTensor kept by v1.x; https://dmlc.github.io/dlpack/latest/c_api.html):
// Debian's libdlpack-dev is not installed here nor on the GPU machine, and
// these layouts are the spec's stable ABI. Capsules carry a DLManagedTensor
// under the name "dltensor"; a consumer that takes one renames it
// "used_dltensor" and calls its deleter when done.
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2 };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null: compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

std::optional<DType> dtype_of(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 32   ? std::optional(DType::kF32)
             : t.bits == 16 ? std::optional(DType::kF16)
             : t.bits == 64 ? std::optional(DType::kF64)
                            : std::nullopt;
    case kDLBfloat:
      return t.bits == 16 ? std::optional(DType::kBF16) : std::nullopt;
    case kDLInt:
      return t.bits == 8    ? std::optional(DType::kI8)
             : t.bits == 16 ? std::optional(DType::kI16)
             : t.bits == 32 ? std::optional(DType::kI32)
             : t.bits == 64 ? std::optional(DType::kI64)
                            : std::nullopt;
    case kDLUInt:
      return t.bits == 8    ? std::optional(DType::kU8)
             : t.bits == 16 ? std::optional(DType::kU16)
             : t.bits == 32 ? std::optional(DType::kU32)
             : t.bits == 64 ? std::optional(DType::kU64)
                            : std::nullopt;
    case kDLBool:
      return t.bits == 8 ? std::optional(DType::kBool) : std::nullopt;
    default:
      return std::nullopt;
  }
}

DLDataType dl_dtype(DType t) {
  const auto bits = static_cast<uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::kF32:
    case DType::kF16:
    case DType::kF64:
      return {kDLFloat, bits, 1};
    case DType::kBF16:
      return {kDLBfloat, bits, 1};
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
      return {kDLInt, bits, 1};
    case DType::kBool:
      return {kDLBool, 8, 1};
    default:
      return {kDLUInt, bits, 1};
  }
}

/// A DLManagedTensor a producer handed over; its deleter runs when this goes.
struct Taken {
  DLManagedTensor* mt = nullptr;
  Taken() = default;
  Taken(const Taken&) = delete;
  Taken& operator=(const Taken&) = delete;
  ~Taken() {
    if (mt != nullptr && mt->deleter != nullptr) mt->deleter(mt);
  }
};

/// The DLPack capsule `cap` (what x.__dlpack__() gives) as a device view;
/// the managed tensor is taken (the capsule renamed) and kept in `taken`.
DeviceTensor view_of(py::handle cap, const std::string& what, Taken& taken) {
  PyObject* o = cap.ptr();
  if (!PyCapsule_CheckExact(o) || !PyCapsule_IsValid(o, kCapsule))
    throw py::type_error(what + ": expected a DLPack capsule named 'dltensor' (what __dlpack__() " +
                         "returns, not yet consumed); got " +
                         std::string(py::str(py::type::of(cap))));
  auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(o, kCapsule));
  if (mt == nullptr) throw py::error_already_set();
  PyCapsule_SetName(o, kUsedCapsule);
  taken.mt = mt;
  const DLTensor& t = mt->dl_tensor;
  const std::optional<DType> dt = dtype_of(t.dtype);
  if (!dt)
    throw py::type_error(what + " has DLPack dtype code " + std::to_string(t.dtype.code) +
                         " with " + std::to_string(t.dtype.bits) + " bits and " +
                         std::to_string(t.dtype.lanes) + " lanes, which hone has no dtype for");
  DeviceTensor v;
  v.dtype = *dt;
  v.device = t.device.device_id;
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  if (t.strides != nullptr) {
    // Row-major and dense only; a stride of a dim of size 1 does not matter.
    int64_t want = 1;
    for (int32_t a = t.ndim - 1; a >= 0; --a) {
      if (t.shape[a] != 1 && t.strides[a] != want) {
        std::string strides;
        for (int32_t k = 0; k < t.ndim; ++k)
          strides += (k ? "," : "") + std::to_string(t.strides[k]);
        throw py::value_error(what + " is not contiguous (shape " + shape_to_string(v.shape) +
                              ", strides [" + strides + "] in elements; axis " + std::to_string(a) +
                              " breaks row-major order): hone reads device tensors in place "
                              "and copies none; pass x.contiguous()");
      }
      want *= t.shape[a];
    }
  }
  if (t.device.device_type != kDLCUDA)
    throw py::type_error(what + " is on DLPack device type " +
                         std::to_string(t.device.device_type) +
                         ", not CUDA (2): give CUDA tensors to the device path, host ones to "
                         "the host path");
  return v;
}

/// A device tensor hone made, handed to Python: exports DLPack capsules.
struct DeviceArray {
  DeviceTensor t;
};

/// What a capsule of a DeviceArray owns: the tensor (its memory) and the shape.
struct Export {
  DLManagedTensor mt{};
  DeviceTensor t;
  std::vector<int64_t> shape;
};

py::capsule export_capsule(const DeviceArray& a) {
  auto* e = new Export{{}, a.t, a.t.shape};
  DLTensor& d = e->mt.dl_tensor;
  d.data = a.t.data;
  d.device = {kDLCUDA, a.t.device};
  d.ndim = static_cast<int32_t>(e->shape.size());
  d.dtype = dl_dtype(a.t.dtype);
  d.shape = e->shape.data();
  d.strides = nullptr;
  d.byte_offset = 0;
  e->mt.manager_ctx = e;
  e->mt.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  // An unconsumed capsule frees what it holds; a consumer renamed it and
  // calls the deleter itself.
  PyObject* cap = PyCapsule_New(&e->mt, kCapsule, [](PyObject* o) {
    if (PyCapsule_IsValid(o, kCapsule)) {
      auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(o, kCapsule));
      if (mt != nullptr && mt->deleter != nullptr) mt->deleter(mt);
    }
  });
  if (cap == nullptr) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

/// model._infer_device(capsules, stream, out=None, synchronize=False).
py::object infer_device(const Model& self, const py::list& capsules, uintptr_t stream,
                        const py::object& out, bool synchronize) {
  std::vector<std::unique_ptr<Taken>> taken;
  std::vector<DeviceTensor> inputs;
  for (size_t i = 0; i < capsules.size(); ++i) {
    taken.push_back(std::make_unique<Taken>());
    inputs.push_back(view_of(capsules[i], "input " + std::to_string(i), *taken.back()));
  }
  DeviceCall call;
  call.stream = reinterpret_cast<void*>(stream);
  call.synchronize = synchronize;
  if (!out.is_none()) {
    const auto outs = out.cast<py::list>();
    for (size_t o = 0; o < outs.size(); ++o) {
      taken.push_back(std::make_unique<Taken>());
      call.outputs.push_back(view_of(outs[o], "out[" + std::to_string(o) + "]", *taken.back()));
    }
  }
  Result<std::vector<DeviceTensor>> r = [&] {
    py::gil_scoped_release release;
    return self.tuned->infer_on_device(inputs, call);
  }();
  flush_log();
  std::vector<DeviceTensor> results = unwrap(std::move(r));
  py::list arrays;
  for (DeviceTensor& t : results) arrays.append(py::cast(DeviceArray{std::move(t)}));
  return arrays;
}

py::object transfers(const Model& self) {
  const std::optional<TransferCounts> c = self.tuned->backend().transfers();
  if (!c) return py::none();
  py::dict d;
  d["host_to_device"] = c->host_to_device;
  d["host_to_device_bytes"] = c->host_to_device_bytes;
  d["device_to_host"] = c->device_to_host;
  d["device_to_host_bytes"] = c->device_to_host_bytes;
  d["device_to_device"] = c->device_to_device;
  d["device_to_device_bytes"] = c->device_to_device_bytes;
  return d;
}

}  // namespace

void bind_device_array(py::module_& m) {
  py::class_<DeviceArray>(
      m, "DeviceArray",
      "An output of a model on a GPU, in device memory hone owns. torch.from_dlpack(a) or "
      "cupy.from_dlpack(a) wraps it without a copy; the memory goes back to hone when the last "
      "of them is dropped. Model calls on CUDA tensors return torch or CuPy tensors directly; "
      "a DeviceArray comes back for other CUDA inputs.")
      .def(
          "__dlpack__",
          [](const DeviceArray& a, const py::object& stream, const py::object& max_version,
             const py::object& dl_device, const py::object& copy) {
            (void)stream;       // ready in the order of the call's stream (see Model.__call__)
            (void)max_version;  // the legacy capsule, which every consumer takes
            if (!dl_device.is_none()) {
              auto dev = dl_device.cast<std::pair<int, int>>();
              if (dev.first != kDLCUDA || dev.second != a.t.device)
                throw py::buffer_error("this DeviceArray is on cuda:" + std::to_string(a.t.device) +
                                       "; it cannot be exported to "
                                       "another device");
            }
            if (!copy.is_none() && copy.cast<bool>())
              throw py::buffer_error("hone's DeviceArray exports its memory without a copy only");
            return export_capsule(a);
          },
          py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "A DLPack capsule over the same device memory (no copy).")
      .def(
          "__dlpack_device__",
          [](const DeviceArray& a) {
            return py::make_tuple(static_cast<int>(kDLCUDA), a.t.device);
          },
          "(2, ordinal): DLPack's kDLCUDA and the device.")
      .def_property_readonly(
          "shape", [](const DeviceArray& a) { return py::tuple(py::cast(a.t.shape)); },
          "The dims, as a tuple.")
      .def_property_readonly(
          "dtype", [](const DeviceArray& a) { return std::string(dtype_name(a.t.dtype)); },
          "hone's dtype name ('f32', 'i64', ...).")
      .def_property_readonly(
          "device", [](const DeviceArray& a) { return a.t.device; }, "The CUDA device ordinal.")
      .def("__repr__",
           [](const DeviceArray& a) { return "<hone.DeviceArray " + a.t.describe() + ">"; });
}

void add_device_methods(py::class_<Model>& cls) {
  cls.def("_infer_device", &infer_device, py::arg("inputs"), py::arg("stream"),
          py::arg("out") = py::none(), py::arg("synchronize") = false,
          "Internal (Model.__call__ on CUDA tensors): DLPack capsules of CUDA tensors in graph "
          "order, the caller's CUDA stream as an int (0: the legacy default stream) and "
          "optionally capsules to write the outputs into; returns a list of DeviceArray.")
      .def("transfers", &transfers,
           "The copies between host and device memory the backend made for inputs and outputs "
           "since it was built, as a dict (host_to_device, device_to_host, device_to_device, "
           "each with a _bytes count), or None for a backend that runs on the host. A call on "
           "CUDA tensors of a model that is one cuda block adds none host to device or back.")
      .def_property_readonly(
          "device",
          [](const Model& self) {
            const auto& devices = self.tuned->backend().capabilities().devices;
            for (Device d : devices)
              if (d == Device::kCuda) return std::string("cuda");
            return std::string("cpu");
          },
          "Where the chosen backend runs: 'cuda' (CUDA tensors go in and out without host "
          "copies) or 'cpu'.");
}

}  // namespace hone::python
