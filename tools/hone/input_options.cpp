#include "input_options.h"

#include <charconv>
#include <cmath>
#include <set>

#include <fmt/core.h>

#include "cli_common.h"
#include "hone/sample.h"

namespace hone::cli {
namespace {

const Value* find_input(const Graph& g, const std::string& name) {
  for (ValueId id : g.inputs())
    if (g.value(id).name == name) return &g.value(id);
  return nullptr;
}

std::string input_names(const Graph& g) {
  std::string s;
  for (ValueId id : g.inputs()) s += (s.empty() ? "'" : ", '") + g.value(id).name + "'";
  return s.empty() ? "none" : s;
}

// "NAME=REST" split at the last '=' (input names such as "x.1" or
// "onnx::Flatten_0" hold no '=', but ':' and '.' are common in them).
Result<std::pair<std::string, std::string>> split_binding(const std::string& option,
                                                          const std::string& text,
                                                          const std::string& example) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return fail(ErrorCode::kInvalidArgument, option + " '" + text + "' is not NAME=" + example +
                                                 " (for example " + option + " x=" +
                                                 (example == "AxBxC"   ? "1x3x224x224"
                                                  : example == "VALUE" ? "16000"
                                                                       : "0:1") +
                                                 ")");
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

Result<const Value*> named_input(const Graph& g, const std::string& option,
                                 const std::string& name) {
  const Value* v = find_input(g, name);
  if (v == nullptr)
    return fail(ErrorCode::kInvalidArgument, option + " " + name + ": the model has no input '" +
                                                 name + "' (its inputs: " + input_names(g) + ")");
  if (v->kind != ValueKind::kTensor)
    return fail(ErrorCode::kUnsupported,
                option + " " + name + ": input '" + name +
                    "' is a sequence or optional; only tensors are generated");
  return v;
}

Result<double> parse_number(const std::string& option, const std::string& name,
                            const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v))
    return fail(ErrorCode::kInvalidArgument,
                option + " " + name + ": '" + text + "' is not a finite number");
  return v;
}

Result<std::vector<int64_t>> parse_shape(const std::string& name, const std::string& text) {
  std::vector<int64_t> dims;
  if (text == "scalar" || text.empty()) return dims;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t x = text.find('x', start);
    const std::string part =
        text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    int64_t d = -1;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || d < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "--shape " + name + "=" + text + ": '" + part +
                      "' is not a non-negative dim (write dims as AxBxC, or 'scalar')");
    dims.push_back(d);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return dims;
}

Result<void> check_value_fits(const std::string& option, const Value& v, double value) {
  if (is_floating(v.dtype)) return {};
  if (v.dtype == DType::kBool && value != 0 && value != 1)
    return fail(ErrorCode::kInvalidArgument,
                option + " " + v.name + ": input '" + v.name + "' is bool; its values are 0 or 1");
  if (value != std::floor(value))
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} {}: input '{}' is {}; {} is not an integer", option, v.name, v.name,
                            dtype_name(v.dtype), format_number(value)));
  return {};
}

Result<std::pair<double, double>> parse_range(const std::string& where, const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    return fail(ErrorCode::kInvalidArgument, "--range " + where + ": '" + text + "' is not LO:HI");
  HONE_TRY(double lo, parse_number("--range", where, text.substr(0, colon)));
  HONE_TRY(double hi, parse_number("--range", where, text.substr(colon + 1)));
  if (!(lo < hi))
    return fail(ErrorCode::kInvalidArgument, "--range " + where + ": LO (" + format_number(lo) +
                                                 ") must be below HI (" + format_number(hi) + ")");
  return std::pair{lo, hi};
}

}  // namespace

void add_input_value_options(CLI::App& sub, InputValueOptions& o) {
  sub.add_option("--shape", o.shapes, "shape of one random input (repeatable; 'scalar' for rank 0)")
      ->type_name("NAME=AxBxC");
  sub.add_option("--fill", o.fills, "every element of one input set to VALUE (repeatable)")
      ->type_name("NAME=VALUE");
  sub.add_option("--range", o.ranges,
                 "random values in [LO, HI) (integers: [LO, HI]) for one input, or for every input "
                 "without a NAME (repeatable)")
      ->type_name("[NAME=]LO:HI");
}

Result<InputPlan> parse_input_plan(const InputValueOptions& o, const Graph& g,
                                   std::map<std::string, int64_t>& dims) {
  InputPlan plan;
  // The input that bound each symbol, so a conflict names both.
  std::map<std::string, std::string> bound_by;
  for (const std::string& text : o.shapes) {
    HONE_TRY(auto kv, split_binding("--shape", text, "AxBxC"));
    const auto& [name, value] = kv;
    HONE_TRY(const Value* v, named_input(g, "--shape", name));
    HONE_TRY(std::vector<int64_t> shape, parse_shape(name, value));
    if (plan.shapes.count(name))
      return fail(ErrorCode::kInvalidArgument, "--shape " + name + " is given twice");
    if (v->shape && v->shape->rank() != shape.size())
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("--shape {}={}: input '{}' has rank {} ({}), not {}", name, value,
                              name, v->shape->rank(), describe_value_type(*v), shape.size()));
    if (v->shape) {
      for (size_t j = 0; j < shape.size(); ++j) {
        const Dim& d = v->shape->dims()[j];
        if (d.is_static() && d.value() != shape[j])
          return fail(
              ErrorCode::kInvalidArgument,
              fmt::format("--shape {}={}: dim {} of input '{}' is {} in the model ({}), not {}",
                          name, value, j, name, d.value(), describe_value_type(*v), shape[j]));
        if (!d.is_symbolic()) continue;
        const std::string& sym = d.symbol_name();
        auto it = dims.find(sym);
        if (it != dims.end() && it->second != shape[j])
          return fail(
              ErrorCode::kInvalidArgument,
              fmt::format("--shape {}={}: dim {} of input '{}' is '{}', which is already {} ({})",
                          name, value, j, name, sym, it->second,
                          bound_by.count(sym) ? "from --shape " + bound_by[sym] : "from --dim"));
        dims[sym] = shape[j];
        bound_by.emplace(sym, name);
      }
    }
    plan.shapes[name] = std::move(shape);
  }
  for (const std::string& text : o.fills) {
    HONE_TRY(auto kv, split_binding("--fill", text, "VALUE"));
    const auto& [name, value] = kv;
    HONE_TRY(const Value* v, named_input(g, "--fill", name));
    HONE_TRY(double x, parse_number("--fill", name, value));
    HONE_CHECK_OK(check_value_fits("--fill", *v, x));
    if (plan.fills.count(name))
      return fail(ErrorCode::kInvalidArgument, "--fill " + name + " is given twice");
    plan.fills[name] = x;
  }
  for (const std::string& text : o.ranges) {
    const size_t eq = text.rfind('=');
    if (eq == std::string::npos) {
      HONE_TRY(auto r, parse_range("(every input)", text));
      if (plan.default_range)
        return fail(ErrorCode::kInvalidArgument, "--range LO:HI without a NAME is given twice");
      plan.default_range = r;
      continue;
    }
    const std::string name = text.substr(0, eq);
    HONE_TRY(const Value* v, named_input(g, "--range", name));
    HONE_TRY(auto r, parse_range(name, text.substr(eq + 1)));
    if (v->dtype == DType::kBool)
      return fail(ErrorCode::kInvalidArgument, "--range " + name + ": input '" + name +
                                                   "' is bool; give it with --fill or files");
    HONE_CHECK_OK(check_value_fits("--range", *v, r.first));
    HONE_CHECK_OK(check_value_fits("--range", *v, r.second));
    if (plan.fills.count(name))
      return fail(ErrorCode::kInvalidArgument,
                  "input '" + name + "' has both --fill and --range; give one");
    if (plan.ranges.count(name))
      return fail(ErrorCode::kInvalidArgument, "--range " + name + " is given twice");
    plan.ranges[name] = r;
  }
  return plan;
}

Result<Tensor> make_input(const Value& v, const InputPlan& plan,
                          const std::map<std::string, int64_t>& dims, std::mt19937_64& rng) {
  if (v.kind != ValueKind::kTensor)
    return fail(ErrorCode::kUnsupported,
                "input '" + v.name + "' is a sequence or optional; random inputs are tensors only");
  const auto given = plan.shapes.find(v.name);
  if (!v.shape && given == plan.shapes.end())
    return fail(ErrorCode::kInvalidArgument,
                "input '" + v.name + "' has unknown rank; give its shape with --shape " + v.name +
                    "=AxBxC or its values with --inputs DIR");
  std::vector<int64_t> shape;
  if (!v.shape) {
    shape = given->second;
  } else {
    const auto& ds = v.shape->dims();
    for (size_t j = 0; j < ds.size(); ++j) {
      const Dim& d = ds[j];
      if (d.is_static())
        shape.push_back(d.value());
      else if (d.is_symbolic() && dims.count(d.symbol_name()))
        shape.push_back(dims.at(d.symbol_name()));
      else if (given != plan.shapes.end())
        shape.push_back(given->second[j]);
      else
        shape.push_back(1);
    }
  }
  auto fill = plan.fills.find(v.name);
  auto range = plan.ranges.find(v.name);
  std::optional<std::pair<double, double>> r;
  if (range != plan.ranges.end()) r = range->second;
  // The unnamed --range applies to the numeric inputs it fits (a float range
  // such as -1:1 is not forced onto an integer input's ids).
  else if (plan.default_range && v.dtype != DType::kBool &&
           (is_floating(v.dtype) ||
            (plan.default_range->first == std::floor(plan.default_range->first) &&
             plan.default_range->second == std::floor(plan.default_range->second))))
    r = plan.default_range;
  if (fill == plan.fills.end() && !r) {
    auto t = random_tensor(v.dtype, shape, rng);
    if (!t) return fail(std::move(t).error().add_context("for input '" + v.name + "'"));
    return t;
  }
  auto t = Tensor::allocate(v.dtype, shape);
  if (!t) return fail(std::move(t).error().add_context("for input '" + v.name + "'"));
  if (fill != plan.fills.end()) {
    for (int64_t i = 0; i < t->numel(); ++i) tensor_set_element_from_double(*t, i, fill->second);
  } else if (is_floating(v.dtype)) {
    std::uniform_real_distribution<double> u(r->first, r->second);
    for (int64_t i = 0; i < t->numel(); ++i) tensor_set_element_from_double(*t, i, u(rng));
  } else {
    std::uniform_int_distribution<int64_t> u(static_cast<int64_t>(r->first),
                                             static_cast<int64_t>(r->second));
    for (int64_t i = 0; i < t->numel(); ++i)
      tensor_set_element_from_double(*t, i, static_cast<double>(u(rng)));
  }
  return t;
}

Result<std::vector<Tensor>> read_input_files(const std::string& dir, const Graph& g) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (v.kind != ValueKind::kTensor)
      return fail(ErrorCode::kUnsupported,
                  "input " + std::to_string(i) + " '" + v.name +
                      "' is a sequence or optional; only tensors are read");
    auto t = load_input_file(dir, i);
    if (!t)
      return fail(std::move(t).error().add_context("while reading input " + std::to_string(i) +
                                                   " '" + v.name + "'"));
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

}  // namespace hone::cli
