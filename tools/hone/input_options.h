// What a real model needs fed: per-input shapes, fixed values and value
// ranges for the random inputs of `hone run`, `hone bench` and `hone tune`
// (--shape NAME=AxBxC, --fill NAME=VALUE, --range [NAME=]LO:HI), checked
// against the model's inputs so that every error names the input.
//
//   InputValueOptions o;  add_input_value_options(*sub, o);    // at registration
//   HONE_TRY(InputPlan plan, parse_input_plan(o, graph, dims)); // binds dims from --shape
//   HONE_TRY(Tensor t, make_input(graph.value(id), plan, dims, rng));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/sample.h"
#include "hone/tensor.h"

namespace hone::cli {

/// The options as given on the command line (repeatable each).
struct InputValueOptions {
  std::vector<std::string> shapes;  // NAME=AxBxC ("NAME=scalar" for rank 0)
  std::vector<std::string> fills;   // NAME=VALUE
  std::vector<std::string> ranges;  // [NAME=]LO:HI
  bool any() const { return !shapes.empty() || !fills.empty() || !ranges.empty(); }
};
void add_input_value_options(CLI::App& sub, InputValueOptions& o);

/// The options resolved against a graph's inputs.
struct InputPlan {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, double> fills;
  std::map<std::string, std::pair<double, double>> ranges;
  std::optional<std::pair<double, double>> default_range;  // --range LO:HI without a name
};

/// Parses and checks the options against `g`'s inputs: every NAME is an
/// input, a shape has the input's rank and its static dims, a fill or range
/// fits the input's dtype, LO < HI. A --shape's value for a symbolic dim is
/// bound in `dims` (so inputs sharing the symbol agree), and must agree with a
/// value already there (--dim, another --shape). Errors name the option and input.
[[nodiscard]] Result<InputPlan> parse_input_plan(const InputValueOptions& o, const Graph& g,
                                                 std::map<std::string, int64_t>& dims);

/// A seeded input for `v`: its shape from `dims` for symbolic dims, else the
/// plan's --shape, else 1 (static dims as declared); its values the plan's
/// fill, else uniform in its range (integers in [LO, HI]), else hone's
/// default random values (floats in [-1,1), integers in [0,9], bools 50/50).
[[nodiscard]] Result<Tensor> make_input(const Value& v, const InputPlan& plan,
                                        const std::map<std::string, int64_t>& dims,
                                        std::mt19937_64& rng);

/// Every input of `g` from DIR/input_<i>.pb or .npy, in graph order; an error
/// names the input and the file.
[[nodiscard]] Result<std::vector<Tensor>> read_input_files(const std::string& dir, const Graph& g);

}  // namespace hone::cli
