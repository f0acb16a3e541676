#include "cli_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "hone/npy.h"
#include "hone/sample.h"
#include "hone/thread_pool.h"

namespace hone::cli {
namespace {
int g_requested_threads = -1;
}  // namespace

void set_requested_threads(int threads) {
  g_requested_threads = threads;
}

int requested_threads() {
  return g_requested_threads;
}

TrustOptions& trust_options() {
  static TrustOptions options;
  return options;
}

void add_io_options(CLI::App& sub, IoOptions& io) {
  sub.add_option("--inputs", io.inputs_dir, "folder with input_<i>.pb or input_<i>.npy")
      ->type_name("DIR");
  sub.add_option("--random-inputs", io.seed, "seeded random inputs instead of files")
      ->type_name("SEED");
  sub.add_option("--dim", io.dims, "value of a symbolic dim for random inputs (repeatable)")
      ->type_name("NAME=VALUE");
  sub.add_option("--outputs", io.outputs_dir, "write output_<i>.npy and outputs.json here")
      ->type_name("DIR");
}

Result<void> apply_configs(Backend& be, const std::vector<std::string>& configs) {
  for (const std::string& kv : configs) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(ErrorCode::kInvalidArgument, "--config '" + kv + "': expected FIELD=VALUE");
    HONE_CHECK_OK(be.configure(kv.substr(0, eq), kv.substr(eq + 1)));
  }
  return {};
}

Result<void> bound_dims_by_inputs(Backend& be, const Graph& g, const std::vector<Tensor>& inputs) {
  if (!be.config().has("dim_bounds") || !be.config().get<std::string>("dim_bounds", "").empty())
    return {};
  std::map<std::string, int64_t> bounds;
  for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i)
    if (const auto& shape = g.value(g.inputs()[i]).shape)
      for (size_t a = 0; a < shape->rank() && a < inputs[i].shape().size(); ++a)
        if ((*shape)[a].is_symbolic())
          bounds[(*shape)[a].symbol_name()] = std::max<int64_t>(1, inputs[i].shape()[a]);
  std::string text;
  for (const auto& [name, value] : bounds)
    text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return be.configure("dim_bounds", text);
}

void apply_requested_threads() {
  if (g_requested_threads >= 0) ThreadPool::set_global_threads(g_requested_threads);
}

Result<void> check_dim_bindings(const Graph& g, const std::map<std::string, int64_t>& dims) {
  std::set<std::string> symbols;
  for (ValueId id : g.inputs())
    if (g.value(id).shape)
      for (const Dim& d : g.value(id).shape->dims())
        if (d.is_symbolic()) symbols.insert(d.symbol_name());
  for (const auto& [name, value] : dims) {
    if (symbols.count(name)) continue;
    std::string known;
    for (const auto& s : symbols) known += (known.empty() ? "" : ", ") + s;
    return fail(ErrorCode::kInvalidArgument,
                "--dim " + name + ": the model's inputs have no dimension named '" + name +
                    "' (symbolic dims: " + (known.empty() ? "none" : known) + ")");
  }
  return {};
}

namespace {
std::function<Error(const Error&)>& error_hook() {
  static std::function<Error(const Error&)> hook;
  return hook;
}
}  // namespace

void set_error_hook(std::function<Error(const Error&)> hook) {
  error_hook() = std::move(hook);
}

int report(const Error& error) {
  const Error shown = error_hook() ? error_hook()(error) : error;
  fmt::print(stderr, "error: {}\n", shown.to_string());
  return kExitError;
}

int usage_error(const std::string& message) {
  if (error_hook()) {
    fmt::print(stderr, "error: {}\n",
               error_hook()(Error(ErrorCode::kInvalidArgument, message)).to_string());
    return kExitUsage;
  }
  fmt::print(stderr, "error: {}\n", message);
  return kExitUsage;
}

Result<void> parse_dim_binding(const std::string& text, std::map<std::string, int64_t>& out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return fail(ErrorCode::kInvalidArgument,
                "--dim '" + text + "' is not NAME=VALUE (for example --dim batch=8)");
  const std::string name = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  int64_t v = 0;
  for (char c : value) {
    if (c < '0' || c > '9')
      return fail(ErrorCode::kInvalidArgument,
                  "--dim " + text + ": '" + value + "' is not a non-negative integer");
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10)
      return fail(ErrorCode::kInvalidArgument, "--dim " + text + ": value is too large");
    v = v * 10 + (c - '0');
  }
  if (out.count(name) != 0 && out[name] != v)
    return fail(ErrorCode::kInvalidArgument,
                "--dim " + name + " is given twice with different values");
  out[name] = v;
  return {};
}

std::string describe_value_type(const Value& v) {
  const std::string elem(dtype_name(v.dtype));
  const std::string shape = v.shape ? v.shape->to_string() : "[?...]";
  switch (v.kind) {
    case ValueKind::kTensor:
      return elem + shape;
    case ValueKind::kSequence:
      return "seq<" + elem + ">";
    case ValueKind::kOptional:
      return "optional<" + elem + (v.shape ? shape : "") + ">";
  }
  return elem;
}

TensorStats tensor_stats(const Tensor& t, size_t head) {
  TensorStats s;
  if (!t.defined() || t.numel() == 0) return s;
  double sum = 0;
  bool first = true;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = tensor_element_as_double(t, i);
    if (static_cast<size_t>(i) < head) s.head.push_back(v);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    if (first) {
      s.min = s.max = v;
      first = false;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
  }
  const int64_t counted = t.numel() - s.nan_count;
  s.mean = counted > 0 ? sum / static_cast<double>(counted) : std::nan("");
  if (counted == 0) s.min = s.max = std::nan("");
  return s;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

void print_output_summary(size_t i, const std::string& name, const Tensor& t) {
  const TensorStats s = tensor_stats(t);
  std::string head;
  for (double v : s.head) head += (head.empty() ? "" : ", ") + format_number(v);
  if (t.numel() > static_cast<int64_t>(s.head.size())) head += ", ...";
  fmt::print("output {} '{}': {}", i, name, t.describe());
  if (t.numel() > 0)
    fmt::print("  min {} max {} mean {}{}  [{}]", format_number(s.min), format_number(s.max),
               format_number(s.mean), s.nan_count ? fmt::format(" nan {}", s.nan_count) : "", head);
  fmt::print("\n");
}

Result<void> write_outputs(const std::filesystem::path& dir, const std::vector<Tensor>& outputs,
                           const std::vector<std::string>& names) {
  // Serialize everything first so an unsavable output writes nothing.
  std::vector<std::vector<uint8_t>> files;
  nlohmann::json manifest = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "output_" + std::to_string(i);
    auto bytes = serialize_npy(outputs[i]);
    if (!bytes)
      return fail(std::move(bytes).error().add_context("while saving output " + std::to_string(i) +
                                                       " '" + name + "'"));
    files.push_back(std::move(*bytes));
    manifest.push_back({{"name", name},
                        {"dtype", std::string(dtype_name(outputs[i].dtype()))},
                        {"shape", outputs[i].shape()},
                        {"file", "output_" + std::to_string(i) + ".npy"}});
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::kIo, dir.string() + ": cannot create directory: " + ec.message());
  for (size_t i = 0; i < files.size(); ++i)
    HONE_CHECK_OK(write_file_atomic(dir / ("output_" + std::to_string(i) + ".npy"),
                                    std::span<const uint8_t>(files[i].data(), files[i].size())));
  HONE_CHECK_OK(write_file_atomic(dir / "outputs.json", manifest.dump(2) + "\n"));
  return {};
}

}  // namespace hone::cli
