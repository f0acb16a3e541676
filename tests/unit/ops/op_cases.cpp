// The op-case table's graph and input making; the rows live in
// op_cases_eltwise.cpp, op_cases_nn.cpp, op_cases_tensor.cpp and op_cases_index.cpp.
#include "ops/op_cases.h"

#include <cmath>
#include <limits>
#include <random>

#include "eval/kernel_util.h"
#include "hone/graph_builder.h"

namespace hone::op_cases {
namespace {

std::vector<double> fill_values(const OpInput& in, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : in.shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  if (in.fill == Fill::kValues) return in.values;
  std::uniform_real_distribution<double> u(-1.0, 1.0), p(0.1, 2.0), wide(-4.0, 4.0);
  static const std::vector<double> kEdges = {0.0, -0.0, 0.5, -0.5, 1.0,  -1.0,
                                             2.5, -2.5, 30., -30., 1e-7, -1e-7};
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> nan_edges = {std::nan(""), inf, -inf};
  for (size_t i = 0; i < v.size(); ++i) {
    switch (in.fill) {
      case Fill::kUniform:
        v[i] = u(rng);
        break;
      case Fill::kPositive:
        v[i] = p(rng);
        break;
      case Fill::kBool:
        v[i] = (i + rng() % 3) % 2 == 0 ? 1.0 : 0.0;
        break;
      case Fill::kEdgeNan:
        if (i < nan_edges.size()) {
          v[i] = nan_edges[i];
          break;
        }
        [[fallthrough]];
      case Fill::kEdge: {
        const size_t k = in.fill == Fill::kEdgeNan ? i - nan_edges.size() : i;
        v[i] = k < kEdges.size() ? kEdges[k] : wide(rng);
        break;
      }
      case Fill::kValues:
        break;
    }
  }
  return v;
}

Tensor make_tensor(const OpInput& in, std::mt19937& rng) {
  const std::vector<double> v = fill_values(in, rng);
  return eval::from_doubles(in.dtype, in.shape, v);
}

}  // namespace

const std::vector<OpCase>& all_cases() {
  static const std::vector<OpCase> kAll = [] {
    std::vector<OpCase> all;
    for (auto part : {eltwise_cases, nn_cases, tensor_cases, index_cases})
      for (OpCase& c : part()) all.push_back(std::move(c));
    return all;
  }();
  return kAll;
}

Result<Graph> build_case_graph(const OpCase& c) {
  GraphBuilder b(c.name, c.opset);
  std::mt19937 rng(7);  // constants are the same in every run
  std::vector<ValueId> ins;
  int k = 0;
  for (const OpInput& in : c.inputs) {
    const std::string name = "x" + std::to_string(k++);
    if (in.absent)
      ins.push_back(kNoValue);
    else if (in.constant)
      ins.push_back(b.constant(name, make_tensor(in, rng)));
    else
      ins.push_back(b.input(name, in.dtype, Shape::of(in.shape)));
  }
  std::vector<ValueId> outs = b.op_n(c.op, ins, c.outputs, c.attrs, c.name);
  for (size_t i = 0; i < outs.size(); ++i) b.output(outs[i], "y" + std::to_string(i));
  return std::move(b).build();
}

std::vector<Tensor> case_inputs(const OpCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> out;
  for (const OpInput& in : c.inputs)
    if (!in.absent && !in.constant) out.push_back(make_tensor(in, rng));
  return out;
}

}  // namespace hone::op_cases
