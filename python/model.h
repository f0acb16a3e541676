// hone.Model: a tuned model in Python (from hone.tune or hone.load). Calls
// run with the GIL released, so Python threads infer in parallel.
#pragma once

#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "hone/tune.h"

namespace hone::python {

struct Model {
  std::shared_ptr<const TunedModel> tuned;
};

/// Model.export: an artifact (hone/export.h) or a Triton model folder in `dir`.
pybind11::dict export_model(const Model& self, const std::string& dir, const std::string& format,
                            const std::string& backend, const std::string& name);

/// Adds the Model class to `m`.
void bind_model(pybind11::module_& m);

}  // namespace hone::python
