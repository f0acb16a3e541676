// CUDA tensors in and out of a Model without host copies: DLPack capsules
// (the producer's DLManagedTensor) read as hone::DeviceTensor views, run
// through TunedModel::infer_on_device on the caller's stream, and the outputs
// handed back as hone.DeviceArray, which exports a DLPack capsule that
// torch.from_dlpack / cupy.from_dlpack wrap without a copy (hone's device
// memory, freed by hone's deleter when the last consumer drops it).
#pragma once

#include <pybind11/pybind11.h>

#include "model.h"

namespace hone::python {

/// hone.DeviceArray; must run before add_device_methods' methods are called.
void bind_device_array(pybind11::module_& m);
/// Model._infer_device, Model.transfers and Model.device.
void add_device_methods(pybind11::class_<Model>& cls);

}  // namespace hone::python
