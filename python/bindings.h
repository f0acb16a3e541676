// The parts of hone._hone beyond tune, load and Model, each adding its names
// to the module (module.cpp calls them at import).
#pragma once

#include <pybind11/pybind11.h>

namespace hone::python {

/// hone.jit and hone.JitModel (jit.cpp).
void bind_jit(pybind11::module_& m);
/// hone.Pipeline (pipeline.cpp).
void bind_pipeline(pybind11::module_& m);
/// hone.export, hone.generate_key, hone.sign, hone.verify (package.cpp).
void bind_package(pybind11::module_& m);

}  // namespace hone::python
