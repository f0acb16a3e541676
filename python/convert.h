// Between Python and hone: numpy arrays and tensors, Python trees (dicts,
// lists, arrays, numbers) and sample trees, and hone errors as Python
// exceptions (hone.Error, carrying the code, message and context chain).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "hone/error.h"
#include "hone/graph_spec.h"
#include "hone/sample.h"
#include "hone/tensor.h"

namespace hone::python {

namespace py = pybind11;

/// Creates hone.Error in `m`; must run before raise().
void register_error(py::module_& m);
/// Raises hone.Error for `e` (throws py::error_already_set).
[[noreturn]] void raise(const Error& e);

template <class T>
T unwrap(Result<T> r) {
  if (!r) raise(r.error());
  if constexpr (!std::is_void_v<T>) return std::move(*r);
}

/// numpy dtype of a hone dtype (TypeError for bf16, which numpy lacks).
py::dtype numpy_dtype(DType t);

/// Python values kept alive while borrowed tensors point into them.
using Keep = std::vector<py::object>;

/// An array (or anything numpy.asarray takes) as a tensor. A C-contiguous
/// array of the wanted dtype is borrowed, not copied (kept alive in `keep`);
/// others are copied into C order. An ndarray of another dtype than `want`
/// is a TypeError naming `what`; lists and numbers become `want`.
Tensor to_tensor(py::handle obj, std::optional<DType> want, const std::string& what, Keep& keep);
/// A tensor as a numpy array sharing its bytes (no copy).
py::array to_numpy(const Tensor& t);

/// A Python tree as a sample: dict -> map, list/tuple of arrays or trees ->
/// list, array -> tensor, int/float -> scalar. `wants` gives the dtype by
/// path where known (a spec's inputs).
SampleValue to_sample(py::handle obj, const std::map<std::string, DType>& wants, Keep& keep,
                      const std::string& path = "");
/// A sample tree as Python: maps -> dict, lists -> list, tensors -> arrays.
py::object from_sample(const SampleValue& v);

/// Path -> dtype of every input leaf of a spec.
std::map<std::string, DType> input_dtypes(const GraphSpec& spec);

/// "f32[batch,4]"-style shape of a spec tensor: ints and dim names.
py::list spec_shape(const TensorSpec& t);

}  // namespace hone::python
