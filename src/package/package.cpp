// hone::save / hone::load: TunedModel <-> .hone package (see hone/package.h).
#include "hone/package.h"

#include <stdlib.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "core/log.h"
#include "hone/onnx.h"
#include "hone/thread_pool.h"
#include "hone/version.h"
#include "package/archive.h"
#include "tune/machine.h"
#include "tune/report_json.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "hone";
constexpr int kManifestVersion = 1;

/// A private temporary folder, removed with everything in it when it goes.
class TempDir {
 public:
  static Result<TempDir> create() {
    std::string tmpl = (fs::temp_directory_path() / "hone-pkg-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr)
      return fail(ErrorCode::kIo,
                  "cannot create a temporary folder under " + fs::temp_directory_path().string());
    return TempDir(tmpl);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit TempDir(fs::path p) : path_(std::move(p)) {}
  fs::path path_;
};

const package::Entry* find_entry(const std::vector<package::Entry>& entries,
                                 std::string_view path) {
  for (const auto& e : entries)
    if (e.path == path) return &e;
  return nullptr;
}

struct Opened {
  std::vector<package::Entry> entries;
  json manifest;
};

/// Reads, verifies and parses the manifest; errors name the file.
Result<Opened> open_package(const fs::path& file) {
  const std::string where = "while reading package '" + file.string() + "'";
  auto entries = package::read_archive(file);
  if (!entries) return fail(std::move(entries).error().add_context(where));
  Opened o{std::move(*entries), {}};
  const package::Entry* m = find_entry(o.entries, "manifest.json");
  if (m == nullptr)
    return fail(Error(ErrorCode::kCorrupt, "the package has no manifest.json").add_context(where));
  try {
    o.manifest = json::parse(m->bytes);
  } catch (const json::exception& e) {
    return fail(Error(ErrorCode::kCorrupt, std::string("manifest.json is not JSON: ") + e.what())
                    .add_context(where));
  }
  if (!o.manifest.is_object() || o.manifest.value("format", "") != kFormat)
    return fail(
        Error(ErrorCode::kCorrupt, "manifest.json is not a hone manifest (no \"format\": \"hone\")")
            .add_context(where));
  const int version = o.manifest.value("format_version", -1);
  if (version < 1 || version > kManifestVersion)
    return fail(Error(ErrorCode::kUnsupported,
                      fmt::format("package format version {} is not one this hone reads (1 to {}); "
                                  "it was written by hone {}",
                                  version, kManifestVersion,
                                  o.manifest.value("hone_version", std::string("?"))))
                    .add_context(where));
  return o;
}

}  // namespace

Result<void> save(const TunedModel& model, const fs::path& file) {
  const std::string where = "while saving package '" + file.string() + "'";
  std::vector<package::Entry> entries;
  HONE_TRY(auto onnx_bytes, onnx::save_model_to_bytes(model.graph()));
  std::string model_bytes(onnx_bytes.begin(), onnx_bytes.end());
  const std::string model_hash = sha256_hex(model_bytes);
  entries.push_back({"model.onnx", std::move(model_bytes)});

  HONE_TRY(TempDir tmp, TempDir::create());
  HONE_CHECK_OK_CTX(model.backend().save(tmp.path()), where);
  HONE_TRY(auto backend_entries, package::collect_entries(tmp.path(), "backend/"));
  for (auto& e : backend_entries) entries.push_back(std::move(e));

  const TuneReport& r = model.report();
  entries.push_back({"report.json", r.json() + "\n"});
  json manifest = {
      {"format", kFormat},
      {"format_version", kManifestVersion},
      {"hone_version", kVersion},
      {"model", {{"name", model.graph().name()}, {"sha256", model_hash}, {"file", "model.onnx"}}},
      {"spec", json::parse(model.spec().to_json())},
      {"decision", tune_internal::decision_json(r.decision)},
      {"strategy", r.strategy},
      {"threads", r.threads},
      {"batch_sizes", r.batch_sizes},
      {"fingerprint", json::parse(machine_fingerprint(r.threads).to_json())},
  };
  entries.push_back({"manifest.json", manifest.dump(2) + "\n"});
  HONE_CHECK_OK_CTX(package::write_archive(file, std::move(entries)), where);
  return {};
}

Result<TunedModel> load(const fs::path& file, const LoadOptions& options) {
  const std::string where = "while loading package '" + file.string() + "'";
  HONE_TRY(Opened pkg, open_package(file));
  const json& m = pkg.manifest;
  try {
    const package::Entry* model_entry = find_entry(pkg.entries, "model.onnx");
    if (model_entry == nullptr)
      return fail(Error(ErrorCode::kCorrupt, "the package has no model.onnx").add_context(where));
    if (sha256_hex(model_entry->bytes) != m.at("model").at("sha256").get<std::string>())
      return fail(
          Error(ErrorCode::kCorrupt, "model.onnx does not match the model hash in manifest.json")
              .add_context(where));
    const std::string& mb = model_entry->bytes;
    auto graph = onnx::load_model_from_bytes(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(mb.data()), mb.size()),
        fs::temp_directory_path());
    if (!graph)
      return fail(
          std::move(graph).error().add_context("while importing model.onnx").add_context(where));
    auto spec = GraphSpec::from_json(m.at("spec").dump());
    if (!spec)
      return fail(std::move(spec)
                      .error()
                      .add_context("while reading the spec in manifest.json")
                      .add_context(where));
    const package::Entry* report_entry = find_entry(pkg.entries, "report.json");
    if (report_entry == nullptr)
      return fail(Error(ErrorCode::kCorrupt, "the package has no report.json").add_context(where));
    auto report = TuneReport::from_json(report_entry->bytes);
    if (!report) return fail(std::move(report).error().add_context(where));

    const int tuned_threads = m.at("threads").get<int>();
    const int threads = options.threads >= 0 ? options.threads : tuned_threads;
    auto pkg_fp = Fingerprint::from_json(m.at("fingerprint").dump());
    if (!pkg_fp)
      return fail(std::move(pkg_fp)
                      .error()
                      .add_context("while reading the fingerprint")
                      .add_context(where));
    const auto here = machine_fingerprint(threads);
    const auto diffs = fingerprint_differences(*pkg_fp, here);
    std::string diff_text;
    for (const auto& d : diffs) diff_text += (diff_text.empty() ? "" : "; ") + d;
    if (!diffs.empty() && !options.allow_env_mismatch)
      return fail(
          Error(ErrorCode::kUnsupportedHardware,
                "the package was tuned on another machine: " + diff_text +
                    " (allow it with --allow-env-mismatch: the backend is then rebuilt here)")
              .add_context(where));

    const BackendRegistry& reg =
        options.registry != nullptr ? *options.registry : default_registry();
    const std::string backend_name = m.at("decision").at("backend").get<std::string>();
    auto be = reg.create(backend_name);
    if (!be) return fail(std::move(be).error().add_context(where));
    for (const auto& [field, value] : m.at("decision").at("config_fields").items()) {
      const std::string v = field == "threads" ? std::to_string(threads) : value.get<std::string>();
      if (auto c = (*be)->configure(field, v); !c)
        return fail(std::move(c).error().add_context(where));
    }
    if (threads > 0) ThreadPool::set_global_threads(threads);
    if (diffs.empty()) {
      HONE_TRY(TempDir tmp, TempDir::create());
      std::vector<package::Entry> saved;
      for (const auto& e : pkg.entries)
        if (e.path.rfind("backend/", 0) == 0) saved.push_back(e);
      HONE_CHECK_OK_CTX(package::extract_entries(saved, "backend/", tmp.path()), where);
      HONE_CHECK_OK_CTX((*be)->load(*graph, tmp.path()), where);
      HONE_CHECK_OK_CTX((*be)->activate(), where);
    } else {
      HONE_LOG_WARN("{}: tuned on another machine ({}); rebuilding backend '{}' here",
                    file.string(), diff_text, backend_name);
      HONE_CHECK_OK_CTX((*be)->build(*graph), where);
    }
    return TunedModel(std::move(*graph), std::move(*spec), std::move(*be), std::move(*report));
  } catch (const json::exception& e) {
    return fail(Error(ErrorCode::kCorrupt,
                      std::string("manifest.json lacks a field or has a wrong type: ") + e.what())
                    .add_context(where));
  }
}

Result<std::string> package_manifest(const fs::path& file) {
  HONE_TRY(Opened pkg, open_package(file));
  return pkg.manifest.dump(2);
}

Result<std::string> describe_package(const fs::path& file) {
  HONE_TRY(Opened pkg, open_package(file));
  const json& m = pkg.manifest;
  try {
    std::string o;
    const json& d = m.at("decision");
    o += fmt::format("package {}: format {} (hone {})\n", file.string(),
                     m.at("format_version").get<int>(), m.value("hone_version", "?"));
    o += fmt::format("model   {} (sha256 {})\n", m.at("model").at("name").get<std::string>(),
                     m.at("model").at("sha256").get<std::string>().substr(0, 16));
    o += fmt::format("backend {} (config {}: {})\n", d.at("backend").get<std::string>(),
                     d.value("config_key", ""), d.value("config", ""));
    o += fmt::format("chosen  by {}: {}\n", m.value("strategy", "?"), d.value("reason", ""));
    const json losers = d.value("losers", json::object());
    for (const auto& [loser, why] : losers.items())
      o += fmt::format("  {} lost: {}\n", loser, why.get<std::string>());
    o += "figures (" + std::to_string(m.value("threads", 0)) + " threads):\n";
    for (const auto& f : d.value("figures", json::array()))
      o += fmt::format(
          "  batch {:>4}: p50 {:.3f} ms  p90 {:.3f} ms  p99 {:.3f} ms  {:.1f} samples/s\n",
          f.at("batch").get<int64_t>(), f.at("p50_ms").get<double>(), f.at("p90_ms").get<double>(),
          f.at("p99_ms").get<double>(), f.at("throughput").get<double>());
    const auto plan = d.value("kernel_plan", std::vector<std::string>{});
    if (!plan.empty()) {
      o += "kernel plan:\n";
      for (const auto& k : plan) o += "  " + k + "\n";
    }
    auto spec = GraphSpec::from_json(m.at("spec").dump());
    if (spec) o += spec->describe() + (spec->describe().ends_with('\n') ? "" : "\n");
    auto fp = Fingerprint::from_json(m.at("fingerprint").dump());
    if (fp) {
      std::string isa;
      for (const auto& f : fp->isa) isa += (isa.empty() ? "" : " ") + f;
      o += fmt::format("tuned on {} ({}), {} threads\n", fp->cpu_model, isa, fp->threads);
      const auto diffs =
          fingerprint_differences(*fp, machine_fingerprint(fp->threads));
      o += diffs.empty() ? "this machine matches the fingerprint\n" : "this machine differs:\n";
      for (const auto& x : diffs) o += "  " + x + "\n";
    }
    o += "entries:\n";
    for (const auto& e : pkg.entries)
      o += fmt::format("  {:<40} {:>10} bytes\n", e.path, e.bytes.size());
    return o;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kCorrupt,
                "manifest.json of '" + file.string() + "' lacks a field: " + e.what());
  }
}

}  // namespace hone
