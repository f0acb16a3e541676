// Pipeline::save/load (one package per tuned stage, by stage name) and the
// pipeline's inspection tree.
#include <fmt/core.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "hone/file_io.h"
#include "hone/package.h"
#include "hone/pipeline.h"
#include "pipeline/pipeline_internal.h"

namespace hone {

namespace fs = std::filesystem;

namespace {

// A stage name becomes a file name: letters, digits, '-', '_' and '.', not
// starting with '.'.
Result<void> check_file_name(const std::string& stage) {
  bool ok = !stage.empty() && stage[0] != '.';
  for (char c : stage)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (ok) return {};
  return fail(ErrorCode::kInvalidArgument,
              "stage '" + stage +
                  "' cannot be saved: its name must be letters, digits, '-', '_' or '.' (not "
                  "first) to name its package file");
}

}  // namespace

Result<void> Pipeline::save(const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(ErrorCode::kIo,
                fmt::format("cannot create the folder '{}': {}", dir.string(), ec.message()));
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : stages_) {
    const TunedModel* t = s->jit ? s->jit->tuned() : s->tuned.get();
    nlohmann::json j{{"name", s->name}, {"backend", s->runner_name()}};
    if (t != nullptr) {
      HONE_CHECK_OK(check_file_name(s->name));
      const std::string file = s->name + ".hone";
      HONE_CHECK_OK_CTX(hone::save(*t, dir / file),
                        "while saving pipeline stage '" + s->name + "'");
      j["package"] = file;
    }
    stages.push_back(std::move(j));
  }
  nlohmann::json doc{{"format", "hone-pipeline"}, {"version", 1}, {"stages", stages}};
  return write_file_atomic(dir / "pipeline.json", doc.dump(1));
}

Result<size_t> Pipeline::load(const fs::path& dir, const LoadOptions& options) {
  const fs::path index = dir / "pipeline.json";
  std::ifstream in(index, std::ios::binary);
  if (!in)
    return fail(ErrorCode::kNotFound,
                "'" + index.string() + "' does not exist: not a folder Pipeline::save wrote");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "hone-pipeline" ||
      !doc.contains("stages") || !doc["stages"].is_array())
    return fail(ErrorCode::kCorrupt, "'" + index.string() + "' is not a hone pipeline index");
  // Every named stage must exist before anything is installed.
  std::vector<std::pair<Stage*, std::string>> todo;
  for (const auto& j : doc["stages"]) {
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
      return fail(ErrorCode::kCorrupt, "'" + index.string() + "' has a stage without a name");
    const std::string name = j["name"].get<std::string>();
    if (!j.contains("package")) continue;  // saved untuned
    Stage* s = find(name);
    if (s == nullptr)
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' holds stage '{}', which this pipeline does not have",
                              index.string(), name));
    const std::string file = j["package"].is_string() ? j["package"].get<std::string>() : "";
    if (auto ok = check_file_name(fs::path(file).stem().string()); !ok || file != name + ".hone")
      return fail(ErrorCode::kCorrupt, fmt::format("'{}' names the package '{}' for stage '{}'",
                                                   index.string(), file, name));
    todo.emplace_back(s, file);
  }
  // Load and check every package before installing any, so a bad one leaves
  // the pipeline as it was.
  std::vector<TunedModel> models;
  for (auto& [s, file] : todo) {
    const std::string ctx = "while loading pipeline stage '" + s->name + "'";
    auto t = hone::load(dir / file, options);
    if (!t) return fail(std::move(t).error().add_context(ctx));
    HONE_TRY(std::string mine, graph_hash(s->graph));
    HONE_TRY(std::string theirs, graph_hash(t->graph()));
    if (mine != theirs)
      return fail(Error(ErrorCode::kInvalidArgument,
                        "the package '" + file + "' holds another graph than the stage's")
                      .add_context(ctx));
    models.push_back(std::move(*t));
  }
  size_t loaded = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    Stage* s = todo[i].first;
    if (s->jit)
      HONE_CHECK_OK_CTX(s->jit->adopt(std::move(models[i])),
                        "while installing pipeline stage '" + s->name + "'");
    else
      s->tuned = std::make_unique<TunedModel>(std::move(models[i]));
    ++loaded;
  }
  return loaded;
}

InspectionNode Pipeline::inspect(const std::string& name) const {
  InspectionNode root;
  root.name = name;
  root.kind = "pipeline";
  timing_->pipeline.fill(root);
  for (const auto& s : stages_) {
    InspectionNode n;
    if (s->jit) {
      n = s->jit->inspect(s->name);
    } else {
      n.name = s->name;
      n.state = s->tuned ? "tuned" : "reference";
      n.backend = s->runner_name();
    }
    n.kind = "stage";
    s->stats->fill(n);  // the pipeline's clock, so the stages add up within the root
    root.children.push_back(std::move(n));
  }
  finish_inspection(root);
  return root;
}

Result<void> Pipeline::save_report(const fs::path& path) const {
  return save_inspection_report(inspect(), path);
}

}  // namespace hone
