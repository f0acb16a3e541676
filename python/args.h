// Python arguments as hone values, shared by hone.tune, hone.jit and
// hone.Pipeline: model sources, backend lists, dim declarations, samples,
// the tuning options, and a model call's positional and keyword inputs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert.h"
#include "hone/graph.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone::python {

/// An ONNX model: a path (str or os.PathLike), its bytes, or an object with
/// SerializeToString() (onnx.ModelProto). hone.Error when it does not import.
Graph load_graph(py::handle model);

/// ["a", "b"] or "a,b" (None: empty); TypeError naming `what` for a non-string.
std::vector<std::string> string_list(py::handle obj, const char* what);

/// dims={"batch": (1, 8, 32), "seq": 16} or ["batch=1:8:32", "seq=16"].
std::vector<DimDeclaration> dim_declarations(py::handle dims);

/// One sample as tune() wants it: a dict is the tree itself; an array is the
/// only input; a tuple (or list of arrays) gives the inputs in order.
Sample sample_of(py::handle obj, const Graph& g, Keep& keep);

/// A strategy by name ('max-throughput', ...) over `backends` (list or 'a,b').
std::shared_ptr<const Strategy> strategy_of(const std::string& strategy, py::handle backends);

/// The options hone.tune, hone.jit and Pipeline.tune_stage share. precision:
/// 'fp32' or 'auto' (ValueError otherwise).
TuneOptions tune_options(int threads, bool cache, uint64_t seed,
                         std::map<std::string, std::map<std::string, std::string>> configs,
                         const std::string& precision);

/// A graph's inputs, for calls by position or name.
struct InputNames {
  std::vector<std::string> names;
  std::vector<std::optional<DType>> dtypes;  // nullopt: any
};
/// model(x), model(x, y), model(x=..., y=...): the inputs in graph order.
/// TypeError for a wrong count, an unknown name or one given twice.
std::vector<Tensor> call_inputs(const InputNames& in, const py::args& args,
                                const py::kwargs& kwargs, Keep& keep);
/// One output as an array, several as a tuple in graph order.
py::object call_outputs(const std::vector<Tensor>& outputs);

}  // namespace hone::python
