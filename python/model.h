// hone.Model: a tuned model in Python (from hone.tune or hone.load). Calls
// run with the GIL released, so Python threads infer in parallel.
#pragma once

#include <memory>

#include <pybind11/pybind11.h>

#include "hone/tune.h"

namespace hone::python {

struct Model {
  std::shared_ptr<const TunedModel> tuned;
};

/// Adds the Model class to `m`.
void bind_model(pybind11::module_& m);

}  // namespace hone::python
