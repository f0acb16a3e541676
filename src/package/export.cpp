#include "hone/export.h"

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "hone/file_io.h"
#include "hone/onnx.h"
#include "hone/sha256.h"
#include "hone/temp_paths.h"
#include "package/archive.h"
#include "package/folder_path.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Result<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return fail(ErrorCode::kIo, "cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// What wrote the artifact: a backend's name and its config fields, or hone's
/// ONNX exporter (with the tuned backend's config, which the graph runs under).
struct Producer {
  std::string name;
  std::vector<std::pair<std::string, std::string>> config;
};

/// Writes the artifact's files into `tmp`.
Result<Producer> write_files(const TunedModel& model, const fs::path& tmp, const ExportOptions& o,
                             const std::string& format) {
  if (format == "onnx") {
    onnx::SaveOptions so;
    so.external_data =
        static_cast<size_t>(model.graph().parameter_bytes()) >= o.external_threshold_bytes;
    so.external_threshold_bytes = o.external_threshold_bytes;
    so.external_file = "model.weights";
    HONE_CHECK_OK(onnx::save_model(model.graph(), tmp / "model.onnx", so));
    return Producer{"onnx exporter", model.decision().config_fields};
  }
  const Backend* be = &model.backend();
  std::unique_ptr<Backend> built;
  if (!o.backend.empty() && o.backend != be->name()) {
    const BackendRegistry& reg = o.registry != nullptr ? *o.registry : default_registry();
    HONE_TRY(built, reg.create(o.backend));
    // As in tuning: a backend that sizes its buffers by the dims' bounds gets the spec's.
    if (built->config().has("dim_bounds") && !model.spec().bounds.empty())
      HONE_CHECK_OK(built->configure("dim_bounds", model.spec().max_bounds_text()));
    HONE_CHECK_OK_CTX(built->build(model.graph()),
                      "while building backend '" + o.backend + "' for the artifact");
    be = built.get();
  }
  const BackendCapabilities& caps = be->capabilities();
  if (!caps.has_artifact || caps.artifact_format != format)
    return fail(
        ErrorCode::kUnsupported,
        fmt::format("backend '{}' has no '{}' artifact{}; pass --backend with one that has (see "
                    "`hone backends`)",
                    be->name(), format,
                    caps.has_artifact ? " (its format is '" + caps.artifact_format + "')" : ""));
  HONE_CHECK_OK(be->export_artifact(tmp));
  Producer p{std::string(be->name()), {}};
  for (const auto& f : be->config().fields())
    p.config.emplace_back(f.name, BackendConfig::to_string(f.value));
  return p;
}

json tensor_specs(const std::vector<TensorSpec>& ts, const GraphSpec& spec) {
  json out = json::array();
  for (const TensorSpec& t : ts) {
    json dims = json::array();
    for (const DimSpec& d : t.dims) {
      if (d.kind == DimSpec::Kind::kStatic) {
        dims.push_back(d.size);
        continue;
      }
      json dd = {{"name", d.name}};
      if (auto it = spec.bounds.find(d.name); it != spec.bounds.end())
        dd.update({{"min", it->second.min}, {"opt", it->second.opt}, {"max", it->second.max}});
      dims.push_back(dd);
    }
    out.push_back({{"name", t.name},
                   {"path", t.path},
                   {"dtype", std::string(dtype_name(t.dtype))},
                   {"dims", dims},
                   {"batch_axis", t.batch_axis}});
  }
  return out;
}

}  // namespace

Result<ExportRecord> export_artifact(const TunedModel& model, const fs::path& dir_given,
                                     const ExportOptions& o) {
  const fs::path dir = package::folder_path(dir_given);
  const std::string where = "while exporting to '" + dir.string() + "'";
  std::string format = o.format;
  if (format.empty()) {
    const BackendCapabilities& caps = model.backend().capabilities();
    format = caps.has_artifact ? caps.artifact_format : "onnx";
  }
  std::error_code ec;
  if (fs::exists(dir, ec) && (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)))
    return fail(
        Error(ErrorCode::kFailedPrecondition, "'" + dir.string() +
                                                  "' already exists and is not an empty folder; "
                                                  "choose a new one (nothing was changed)")
            .add_context(where));
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    return fail(Error(ErrorCode::kNotFound, "folder '" + parent.string() + "' does not exist")
                    .add_context(where));
  std::string tmpl = (parent / ("." + dir.filename().string() + ".tmp-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr)
    return fail(
        Error(ErrorCode::kIo, "cannot create a temporary folder in '" + parent.string() + "'")
            .add_context(where));
  const fs::path tmp(tmpl);
  const TempPathGuard guard(tmp);  // removed on SIGINT/SIGTERM too
  auto cleanup = [&] { fs::remove_all(tmp, ec); };

  auto producer = write_files(model, tmp, o, format);
  if (!producer) {
    cleanup();
    return fail(std::move(producer).error().add_context(where));
  }
  ExportRecord rec;
  rec.format = format;
  rec.backend = producer->name;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(tmp))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  json file_list = json::object();
  for (const fs::path& f : files) {
    auto bytes = read_file(f);
    if (!bytes) {
      cleanup();
      return fail(std::move(bytes).error().add_context(where));
    }
    const std::string rel = fs::relative(f, tmp).generic_string();
    rec.files.emplace_back(rel, sha256_hex(*bytes));
    file_list[rel] = rec.files.back().second;
  }
  for (const auto& f : model.decision().figures)
    rec.max_batch_measured = std::max(rec.max_batch_measured, f.batch);
  json runtime = json::object();
  for (const auto& [k, v] : producer->config) runtime[k] = v;
  json record = {{"format", format},
                 {"produced_by", rec.backend},
                 {"tuned_backend", model.decision().backend},
                 {"model", model.graph().name()},
                 {"files", file_list},
                 {"runtime", runtime},
                 {"inputs", tensor_specs(model.spec().inputs, model.spec())},
                 {"outputs", tensor_specs(model.spec().outputs, model.spec())},
                 {"max_batch_measured", rec.max_batch_measured}};
  rec.json = record.dump(2) + "\n";
  if (auto w = write_file_atomic(tmp / "deploy.json", rec.json); !w) {
    cleanup();
    return fail(std::move(w).error().add_context(where));
  }
  if (fs::exists(dir, ec)) fs::remove(dir, ec);  // an empty folder, checked above
  fs::rename(tmp, dir, ec);
  if (ec) {
    cleanup();
    return fail(Error(ErrorCode::kIo, "cannot move the export into place: " + ec.message())
                    .add_context(where));
  }
  return rec;
}

}  // namespace hone
