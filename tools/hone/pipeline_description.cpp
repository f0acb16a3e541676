#include "pipeline_description.h"

#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

namespace hone::cli {

namespace {

using nlohmann::json;

Result<void> only_keys(const json& j, const std::set<std::string>& allowed,
                       const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!allowed.count(it.key())) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: unknown key '{}' (known: {})", where, it.key(), list));
    }
  return {};
}

}  // namespace

Result<PipelineDescription> load_pipeline_description(const std::filesystem::path& file) {
  const std::string ctx = "while reading the pipeline description '" + file.string() + "'";
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(Error(ErrorCode::kNotFound, "cannot open the file").add_context(ctx));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return fail(Error(ErrorCode::kCorrupt, std::string("not JSON: ") + e.what()).add_context(ctx));
  }
  auto bad = [&](const std::string& what) {
    return fail(Error(ErrorCode::kInvalidArgument, what).add_context(ctx));
  };
  if (!j.is_object()) return bad("the top level must be an object");
  if (auto ok =
          only_keys(j, {"name", "min_time_share", "calls", "seed", "dims", "stages"}, "top level");
      !ok)
    return fail(std::move(ok).error().add_context(ctx));
  PipelineDescription d;
  try {
    if (j.contains("name")) d.name = j["name"].get<std::string>();
    if (j.contains("min_time_share")) d.min_time_share = j["min_time_share"].get<double>();
    if (d.min_time_share < 0 || d.min_time_share > 1)
      return bad("min_time_share must be between 0 and 1");
    if (j.contains("calls")) {
      const int64_t c = j["calls"].get<int64_t>();
      if (c < 1) return bad("calls must be at least 1");
      d.calls = static_cast<size_t>(c);
    }
    if (j.contains("seed")) d.seed = j["seed"].get<uint64_t>();
    if (j.contains("dims")) {
      if (!j["dims"].is_object()) return bad("dims must map a dim name to a list of sizes");
      for (auto it = j["dims"].begin(); it != j["dims"].end(); ++it) {
        auto v = it.value().get<std::vector<int64_t>>();
        if (v.empty()) return bad("dims." + it.key() + " is empty");
        for (int64_t x : v)
          if (x < 0) return bad("dims." + it.key() + " has a negative size");
        d.dims[it.key()] = std::move(v);
      }
    }
    if (!j.contains("stages") || !j["stages"].is_array() || j["stages"].empty())
      return bad("'stages' must be a non-empty list");
    size_t k = 0;
    for (const auto& s : j["stages"]) {
      const std::string where = fmt::format("stages[{}]", k++);
      if (!s.is_object()) return bad(where + " must be an object");
      if (auto ok = only_keys(
              s, {"name", "model", "mode", "min_samples", "batch_axis_required", "backend"}, where);
          !ok)
        return fail(std::move(ok).error().add_context(ctx));
      StageDescription st;
      if (!s.contains("name") || !s.contains("model"))
        return bad(where + " needs 'name' and 'model'");
      st.name = s["name"].get<std::string>();
      st.model = file.parent_path() / s["model"].get<std::string>();
      if (s.contains("mode")) st.mode = s["mode"].get<std::string>();
      if (st.mode != "eager" && st.mode != "deferred" && st.mode != "inspect" && st.mode != "plain")
        return bad(where + ".mode '" + st.mode + "': eager, deferred, inspect or plain");
      if (s.contains("min_samples")) {
        const int64_t m = s["min_samples"].get<int64_t>();
        if (m < 1) return bad(where + ".min_samples must be at least 1");
        st.min_samples = static_cast<size_t>(m);
      }
      if (s.contains("batch_axis_required"))
        st.batch_axis_required = s["batch_axis_required"].get<bool>();
      if (s.contains("backend")) st.backend = s["backend"].get<std::string>();
      d.stages.push_back(std::move(st));
    }
  } catch (const json::exception& e) {
    // get<T>() on a value of the wrong type.
    return bad(std::string("a value has the wrong type: ") + e.what());
  }
  return d;
}

}  // namespace hone::cli
