// hone/reference.h and hone/platform.h: the reference interpreter and its
// OpenBLAS behind the public calls.
#include "hone/reference.h"

#include "eval/interpreter.h"
#include "eval/openblas.h"
#include "hone/platform.h"

namespace hone {

Result<void> check_inputs(const Graph& graph, const std::vector<RunValue>& inputs) {
  return eval::check_inputs(graph, inputs);
}

Result<void> check_inputs(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<RunValue> values;
  values.reserve(inputs.size());
  for (const Tensor& t : inputs) values.push_back(RunValue::of(t));
  return eval::check_inputs(graph, values);
}

Result<std::vector<RunValue>> run_reference(const Graph& graph, std::vector<RunValue> inputs) {
  const eval::Interpreter interpreter;
  return interpreter.run(graph, std::move(inputs));
}

std::string better_openblas_core() {
  return eval::better_openblas_core_here();
}

}  // namespace hone
