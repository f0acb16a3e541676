// GraphSpec as data: validation, JSON, its cache key and a description.
#include <cstdint>
#include <cstdio>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "hone/graph_spec.h"
#include "tune/graph_spec_internal.h"
#include "tune/sample_path.h"

namespace hone {
namespace {

using nlohmann::json;
using tuning::where;

constexpr int kJsonVersion = 1;

const char* kind_name(DimSpec::Kind k) {
  switch (k) {
    case DimSpec::Kind::kStatic:
      return "static";
    case DimSpec::Kind::kBatch:
      return "batch";
    case DimSpec::Kind::kDynamic:
      return "dynamic";
  }
  return "static";
}

json tensor_json(const TensorSpec& t) {
  json dims = json::array();
  for (const DimSpec& d : t.dims) {
    if (d.kind == DimSpec::Kind::kStatic)
      dims.push_back({{"kind", "static"}, {"size", d.size}});
    else
      dims.push_back({{"kind", kind_name(d.kind)}, {"name", d.name}});
  }
  return {{"path", t.path},
          {"name", t.name},
          {"dtype", std::string(dtype_name(t.dtype))},
          {"scalar_leaf", t.scalar_leaf},
          {"rank_known", t.rank_known},
          {"dims", std::move(dims)},
          {"batch_axis", t.batch_axis}};
}

// Reads fields of untrusted JSON; every error names the field's location.
struct Reader {
  const json& j;
  std::string at;

  Result<const json*> field(const char* key, json::value_t type, const char* type_word) const {
    if (!j.is_object())
      return fail(ErrorCode::kCorrupt,
                  (at.empty() ? std::string("the document") : at) + " is not a JSON object");
    auto it = j.find(key);
    if (it == j.end())
      return fail(ErrorCode::kCorrupt, (at.empty() ? "" : at + ".") + key + " is missing");
    const bool ok =
        type == json::value_t::number_integer ? it->is_number_integer() : it->type() == type;
    if (!ok)
      return fail(ErrorCode::kCorrupt, (at.empty() ? "" : at + ".") + key + " is not " + type_word);
    return &*it;
  }
  Result<std::string> str(const char* key) const {
    HONE_TRY(const json* v, field(key, json::value_t::string, "a string"));
    return v->get<std::string>();
  }
  Result<int64_t> integer(const char* key) const {
    HONE_TRY(const json* v, field(key, json::value_t::number_integer, "an integer"));
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX})
      return fail(ErrorCode::kCorrupt, sub(key) + " is too large");
    return v->get<int64_t>();
  }
  Result<bool> boolean(const char* key) const {
    HONE_TRY(const json* v, field(key, json::value_t::boolean, "true or false"));
    return v->get<bool>();
  }
  std::string sub(const char* key) const { return (at.empty() ? "" : at + ".") + key; }
};

Result<TensorSpec> tensor_from_json(const json& j, const std::string& at) {
  Reader r{j, at};
  TensorSpec t;
  HONE_TRY(t.path, r.str("path"));
  HONE_TRY(t.name, r.str("name"));
  HONE_TRY(std::string dtype, r.str("dtype"));
  auto dt = dtype_from_string(dtype);
  if (!dt && dtype != "undefined")
    return fail(ErrorCode::kCorrupt, at + ".dtype '" + dtype + "' is not a dtype");
  t.dtype = dt ? *dt : DType::kUndefined;
  HONE_TRY(t.scalar_leaf, r.boolean("scalar_leaf"));
  HONE_TRY(t.rank_known, r.boolean("rank_known"));
  HONE_TRY(int64_t batch_axis, r.integer("batch_axis"));
  if (batch_axis < -1 || batch_axis > 64)
    return fail(ErrorCode::kCorrupt,
                at + ".batch_axis " + std::to_string(batch_axis) + " is out of range");
  t.batch_axis = static_cast<int>(batch_axis);
  HONE_TRY(const json* dims, r.field("dims", json::value_t::array, "an array"));
  for (size_t a = 0; a < dims->size(); ++a) {
    Reader d{(*dims)[a], at + ".dims[" + std::to_string(a) + "]"};
    HONE_TRY(std::string kind, d.str("kind"));
    DimSpec ds;
    if (kind == "static") {
      HONE_TRY(ds.size, d.integer("size"));
    } else if (kind == "batch" || kind == "dynamic") {
      ds.kind = kind == "batch" ? DimSpec::Kind::kBatch : DimSpec::Kind::kDynamic;
      HONE_TRY(ds.name, d.str("name"));
    } else {
      return fail(ErrorCode::kCorrupt,
                  d.at + ".kind '" + kind + "' is not static, batch or dynamic");
    }
    t.dims.push_back(std::move(ds));
  }
  return t;
}

Result<void> validate_tensor(const GraphSpec& spec, const TensorSpec& t, bool is_input) {
  const char* role = is_input ? "input" : "output";
  const std::string at = where(t, role);
  if (t.name.empty())
    return fail(ErrorCode::kInvalidArgument,
                std::string(role) + " at " + tuning::quote_path(t.path) + " has an empty name");
  if (is_input && t.dtype == DType::kUndefined)
    return fail(ErrorCode::kInvalidArgument, at + " has no dtype");
  if (is_input && !t.rank_known)
    return fail(ErrorCode::kInvalidArgument, at + " has an unknown rank");
  if (!t.rank_known && !t.dims.empty())
    return fail(ErrorCode::kInvalidArgument, at + " has dims but an unknown rank");
  if (t.scalar_leaf && !t.dims.empty())
    return fail(ErrorCode::kInvalidArgument, at + " is a number leaf but has dims");
  for (size_t a = 0; a < t.dims.size(); ++a) {
    const DimSpec& d = t.dims[a];
    const std::string axis = at + " axis " + std::to_string(a);
    if (d.kind == DimSpec::Kind::kStatic) {
      if (d.size < 0)
        return fail(ErrorCode::kInvalidArgument,
                    axis + " has negative size " + std::to_string(d.size));
      continue;
    }
    if (d.kind == DimSpec::Kind::kBatch && (d.name.empty() || d.name != spec.batch_dim))
      return fail(ErrorCode::kInvalidArgument, axis + " is a batch axis named '" + d.name +
                                                   "' but the batch dim is '" + spec.batch_dim +
                                                   "'");
    if (d.kind == DimSpec::Kind::kDynamic && !d.name.empty() && d.name == spec.batch_dim)
      return fail(ErrorCode::kInvalidArgument,
                  axis + " is the batch dim '" + d.name + "' but not marked as batch");
    if (is_input && (d.name.empty() || !spec.bounds.count(d.name)))
      return fail(ErrorCode::kInvalidArgument,
                  axis + " is dynamic ('" + d.name + "') but has no bounds");
  }
  if (t.batch_axis != tuning::first_batch_axis(t))
    return fail(ErrorCode::kInvalidArgument,
                at + " has batch_axis " + std::to_string(t.batch_axis) +
                    ", but its first batch axis is " + std::to_string(tuning::first_batch_axis(t)));
  return {};
}

}  // namespace

Result<void> GraphSpec::validate() const {
  std::vector<std::pair<std::string, SampleValue>> leaves;
  std::set<std::string> names;
  for (const TensorSpec& t : inputs) {
    HONE_CHECK_OK(validate_tensor(*this, t, true));
    if (!names.insert(t.name).second)
      return fail(ErrorCode::kInvalidArgument, "input '" + t.name + "' appears twice");
    leaves.emplace_back(t.path, SampleValue(0.0));
  }
  HONE_CHECK_OK_CTX(sample_from_leaves(leaves), "in the input paths");
  leaves.clear();
  names.clear();
  for (const TensorSpec& t : outputs) {
    HONE_CHECK_OK(validate_tensor(*this, t, false));
    if (!names.insert(t.name).second)
      return fail(ErrorCode::kInvalidArgument, "output '" + t.name + "' appears twice");
    leaves.emplace_back(t.path, SampleValue(0.0));
  }
  HONE_CHECK_OK_CTX(sample_from_leaves(leaves), "in the output paths");
  for (const auto& [name, b] : bounds)
    if (name.empty() || b.min < 0 || b.min > b.opt || b.opt > b.max)
      return fail(ErrorCode::kInvalidArgument,
                  "dim '" + name + "' has bounds " + std::to_string(b.min) + ":" +
                      std::to_string(b.opt) + ":" + std::to_string(b.max) +
                      " (need a name and 0 <= min <= opt <= max)");
  if (!batch_dim.empty() && !bounds.count(batch_dim))
    return fail(ErrorCode::kInvalidArgument, "batch dim '" + batch_dim + "' has no bounds");
  return {};
}

std::string GraphSpec::to_json() const {
  json j;
  j["format"] = "hone.graph_spec";
  j["version"] = kJsonVersion;
  j["batch_dim"] = batch_dim;
  j["bounds"] = json::object();
  for (const auto& [name, b] : bounds)
    j["bounds"][name] = {{"min", b.min}, {"opt", b.opt}, {"max", b.max}};
  j["inputs"] = json::array();
  for (const TensorSpec& t : inputs) j["inputs"].push_back(tensor_json(t));
  j["outputs"] = json::array();
  for (const TensorSpec& t : outputs) j["outputs"].push_back(tensor_json(t));
  return j.dump(2) + "\n";
}

Result<GraphSpec> GraphSpec::from_json(std::string_view text) {
  const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  auto corrupt = [](Error e) {
    return fail(std::move(e).add_context("while reading a GraphSpec"));
  };
  if (j.is_discarded()) return corrupt(Error(ErrorCode::kCorrupt, "the text is not valid JSON"));
  Reader r{j, ""};
  auto run = [&]() -> Result<GraphSpec> {
    HONE_TRY(std::string format, r.str("format"));
    if (format != "hone.graph_spec")
      return fail(ErrorCode::kCorrupt, "format is '" + format + "', not 'hone.graph_spec'");
    HONE_TRY(int64_t version, r.integer("version"));
    if (version != kJsonVersion)
      return fail(ErrorCode::kCorrupt, "version " + std::to_string(version) +
                                           " is not supported (this build reads " +
                                           std::to_string(kJsonVersion) + ")");
    GraphSpec spec;
    HONE_TRY(spec.batch_dim, r.str("batch_dim"));
    HONE_TRY(const json* bounds, r.field("bounds", json::value_t::object, "an object"));
    for (const auto& [name, b] : bounds->items()) {
      Reader br{b, "bounds." + name};
      DimBounds db;
      HONE_TRY(db.min, br.integer("min"));
      HONE_TRY(db.opt, br.integer("opt"));
      HONE_TRY(db.max, br.integer("max"));
      spec.bounds[name] = db;
    }
    for (const char* key : {"inputs", "outputs"}) {
      HONE_TRY(const json* list, r.field(key, json::value_t::array, "an array"));
      for (size_t i = 0; i < list->size(); ++i) {
        HONE_TRY(TensorSpec t,
                 tensor_from_json((*list)[i], std::string(key) + "[" + std::to_string(i) + "]"));
        (std::string(key) == "inputs" ? spec.inputs : spec.outputs).push_back(std::move(t));
      }
    }
    if (auto ok = spec.validate(); !ok)
      return fail(Error(ErrorCode::kCorrupt, ok.error().to_string()));
    return spec;
  };
  auto spec = run();
  if (!spec) return corrupt(std::move(spec).error());
  return spec;
}

std::string GraphSpec::key() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64: stable across builds and platforms
  for (unsigned char c : to_json()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string GraphSpec::describe() const {
  std::string out;
  auto tensor_line = [&](const TensorSpec& t, const char* role) {
    out += fmt::format("  {:<20} {} '{}'  {}", t.path.empty() ? "(root)" : t.path, role, t.name,
                       tuning::describe_tensor_spec(t));
    if (t.batch_axis >= 0) out += fmt::format("  batch axis {}", t.batch_axis);
    out += "\n";
  };
  out += fmt::format("inputs ({}):\n", inputs.size());
  for (const TensorSpec& t : inputs) tensor_line(t, "input");
  out += fmt::format("outputs ({}):\n", outputs.size());
  for (const TensorSpec& t : outputs) tensor_line(t, "output");
  out += "dims:";
  if (bounds.empty()) out += " none (every input is static)";
  out += "\n";
  for (const auto& [name, b] : bounds)
    out += fmt::format("  {:<20} min {}  opt {}  max {}{}\n", name, b.min, b.opt, b.max,
                       name == batch_dim ? "  (batch)" : "");
  return out;
}

}  // namespace hone
