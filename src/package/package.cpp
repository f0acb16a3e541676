// hone::save / hone::load: TunedModel <-> .hone package (see hone/package.h).
#include "hone/package.h"

#include <stdlib.h>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/log.h"
#include "hone/limits.h"
#include "hone/npy.h"
#include "hone/onnx.h"
#include "hone/sha256.h"
#include "hone/signing.h"
#include "hone/temp_paths.h"
#include "hone/thread_pool.h"
#include "hone/version.h"
#include "package/archive.h"
#include "package/manifest.h"
#include "package/signature.h"
#include "tune/machine.h"
#include "tune/report_json.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "hone";
constexpr const char* kStagingPrefix = "hone-pkg-";

/// A private temporary folder ("hone-pkg-<pid>-XXXXXX"), removed with
/// everything in it when it goes, on SIGINT/SIGTERM too; folders of dead
/// pids (a kill -9) are swept when the next one is created.
class TempDir {
 public:
  static Result<TempDir> create() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    if (ec) return fail(ErrorCode::kIo, "no temporary folder: " + ec.message());
    sweep_stale_temp_paths(base, kStagingPrefix);
    std::string tmpl = (base / (kStagingPrefix + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr)
      return fail(ErrorCode::kIo, "cannot create a temporary folder under " + base.string());
    return TempDir(tmpl);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)), guard_(std::move(o.guard_)) {
    o.path_.clear();
  }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit TempDir(fs::path p) : path_(std::move(p)), guard_(path_) {}
  fs::path path_;
  TempPathGuard guard_;
};

const package::Entry* find_entry(const std::vector<package::Entry>& entries,
                                 std::string_view path) {
  for (const auto& e : entries)
    if (e.path == path) return &e;
  return nullptr;
}

/// A package whose every part has been checked: the archive's sums, the
/// manifest's schema, the model against its hash, the report, the spec and
/// the fingerprint. `load` and `describe` both go through it, so describe
/// never calls a package fine that load would refuse.
struct Opened {
  std::vector<package::Entry> entries;
  std::string checksums;
  std::optional<std::string> signature;
  json manifest;
  const package::Entry* model = nullptr;
  Graph graph;
  GraphSpec spec;
  TuneReport report;
  Fingerprint fingerprint;
};

Result<Opened> open_package(const fs::path& file) {
  const std::string where = "while reading package '" + file.string() + "'";
  auto contents = package::read_archive_contents(file);
  if (!contents) return fail(std::move(contents).error().add_context(where));
  Opened o;
  o.entries = std::move(contents->entries);
  o.checksums = std::move(contents->checksums);
  o.signature = std::move(contents->signature);
  const package::Entry* m = find_entry(o.entries, "manifest.json");
  if (m == nullptr)
    return fail(Error(ErrorCode::kCorrupt, "the package has no manifest.json").add_context(where));
  auto manifest = package::parse_manifest(m->bytes);
  if (!manifest) return fail(std::move(manifest).error().add_context(where));
  o.manifest = std::move(*manifest);
  o.model = find_entry(o.entries, "model.onnx");
  if (o.model == nullptr)
    return fail(Error(ErrorCode::kCorrupt, "the package has no model.onnx").add_context(where));
  if (sha256_hex(o.model->bytes) != o.manifest["model"]["sha256"].get<std::string>())
    return fail(
        Error(ErrorCode::kCorrupt, "model.onnx does not match the model hash in manifest.json")
            .add_context(where));
  // A package's model never refers to files outside it: hone writes every
  // weight inline, and external data would resolve against some folder of
  // this machine, so it is refused (an empty base folder forbids it).
  const std::string& mb = o.model->bytes;
  auto graph = onnx::load_model_from_bytes(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(mb.data()), mb.size()), {});
  if (!graph)
    return fail(
        std::move(graph).error().add_context("while importing model.onnx").add_context(where));
  o.graph = std::move(*graph);
  auto spec = GraphSpec::from_json(o.manifest["spec"].dump());
  if (!spec)
    return fail(std::move(spec)
                    .error()
                    .add_context("while reading the spec in manifest.json")
                    .add_context(where));
  o.spec = std::move(*spec);
  const package::Entry* report_entry = find_entry(o.entries, "report.json");
  if (report_entry == nullptr)
    return fail(Error(ErrorCode::kCorrupt, "the package has no report.json").add_context(where));
  auto report = TuneReport::from_json(report_entry->bytes);
  if (!report) return fail(std::move(report).error().add_context(where));
  o.report = std::move(*report);
  auto fp = Fingerprint::from_json(o.manifest["fingerprint"].dump());
  if (!fp)
    return fail(
        std::move(fp).error().add_context("while reading the fingerprint").add_context(where));
  o.fingerprint = std::move(*fp);
  return o;
}

/// Whether the package's native code may be loaded: signed by a trusted
/// key, or the caller allows unsigned native code. A signature that does
/// not verify is an error whatever the options say.
Result<bool> native_code_allowed(const Opened& pkg, const LoadOptions& options,
                                 const fs::path& file) {
  const std::string where = "while loading package '" + file.string() + "'";
  bool has_native = false;
  for (const auto& e : pkg.entries) has_native |= package::is_native_code(e.bytes);
  package::ArchiveContents contents{{}, pkg.checksums, pkg.signature};
  auto st = package::verify_signature(contents, trusted_key_files(options.trusted_keys));
  if (!st) return fail(std::move(st).error().add_context(where));
  if (!has_native) return true;
  if (st->trusted) {
    HONE_LOG_DEBUG("{}: signed by trusted key {} ({})", file.string(), st->key_id, st->trusted_by);
    return true;
  }
  const std::string who =
      st->is_signed ? "signed by key " + st->key_id + ", which is not trusted" : "not signed";
  if (options.allow_unsigned_native) {
    HONE_LOG_WARN("{}: {}; loading its native code anyway (--allow-unsigned-native)", file.string(),
                  who);
    return true;
  }
  HONE_LOG_INFO("{}: {}; its native code is not loaded, the backend rebuilds it from source",
                file.string(), who);
  return false;
}

}  // namespace

Result<void> save(const TunedModel& model, const fs::path& file, const SaveOptions& options) {
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
  json samples = json::array();
  for (size_t i = 0; i < options.sample_inputs.size(); ++i) {
    auto bytes = serialize_npy(options.sample_inputs[i]);
    if (!bytes)
      return fail(std::move(bytes)
                      .error()
                      .add_context("while storing sample input " + std::to_string(i))
                      .add_context(where));
    const std::string path = "samples/input_" + std::to_string(i) + ".npy";
    entries.push_back({path, std::string(bytes->begin(), bytes->end())});
    samples.push_back(path);
  }
  // The backend's records of timed choices as they stand now: a shape first
  // run after the tune (its checks, a caller's inference) was timed then, and
  // its entries are saved too, so the load replays every one untimed. The
  // report keeps the decision as the tune made it.
  json decision = tune_internal::decision_json(r.decision);
  for (const auto& [field, value] : model.backend().choice_records())
    decision["config_fields"][field] = value;
  json manifest = {
      {"format", kFormat},
      {"format_version", package::kManifestVersion},
      {"hone_version", kVersion},
      {"model", {{"name", model.graph().name()}, {"sha256", model_hash}, {"file", "model.onnx"}}},
      {"spec", json::parse(model.spec().to_json())},
      {"decision", decision},
      {"strategy", r.strategy},
      {"threads", r.threads},
      {"batch_sizes", r.batch_sizes},
      {"fingerprint", json::parse(machine_fingerprint(r.threads).to_json())},
  };
  if (!samples.empty()) manifest["samples"] = samples;
  entries.push_back({"manifest.json", manifest.dump(2) + "\n"});
  HONE_CHECK_OK_CTX(package::write_archive(file, std::move(entries)), where);
  return {};
}

Result<TunedModel> load(const fs::path& file, const LoadOptions& options) {
  const std::string where = "while loading package '" + file.string() + "'";
  HONE_TRY(Opened pkg, open_package(file));
  const json& m = pkg.manifest;  // every field used below has been checked
  if (options.threads > kMaxThreads)
    return fail(
        Error(ErrorCode::kInvalidArgument, "thread count " + std::to_string(options.threads) +
                                               " is more than " + std::to_string(kMaxThreads))
            .add_context(where));
  const int tuned_threads = m["threads"].get<int>();
  const int threads = options.threads >= 0 ? options.threads : tuned_threads;
  const auto here = machine_fingerprint(threads);
  const auto diffs = fingerprint_differences(pkg.fingerprint, here);
  std::string diff_text;
  for (const auto& d : diffs) diff_text += (diff_text.empty() ? "" : "; ") + d;
  if (!diffs.empty() && !options.allow_env_mismatch)
    return fail(Error(ErrorCode::kUnsupportedHardware,
                      "the package was tuned on another machine: " + diff_text +
                          " (allow it with --allow-env-mismatch: the backend is then rebuilt here)")
                    .add_context(where));

  const BackendRegistry& reg = options.registry != nullptr ? *options.registry : default_registry();
  const json& decision = m["decision"];
  const std::string backend_name = decision["backend"].get<std::string>();
  auto be = reg.create(backend_name);
  if (!be) return fail(std::move(be).error().add_context(where));
  const json fields = decision.value("config_fields", json::object());
  for (const auto& [field, value] : fields.items()) {
    const std::string v = field == "threads" ? std::to_string(threads) : value.get<std::string>();
    if (auto c = (*be)->configure(field, v); !c)
      return fail(std::move(c).error().add_context(where));
  }
  if (threads > 0) ThreadPool::set_global_threads(threads);
  if (diffs.empty()) {
    HONE_TRY(bool native_ok, native_code_allowed(pkg, options, file));
    HONE_TRY(TempDir tmp, TempDir::create());
    std::vector<package::Entry> saved;
    for (const auto& e : pkg.entries) {
      if (e.path.rfind("backend/", 0) != 0) continue;
      // Withheld native code is never written out, so nothing can load it.
      if (!native_ok && package::is_native_code(e.bytes)) continue;
      saved.push_back(e);
    }
    HONE_CHECK_OK_CTX(package::extract_entries(saved, "backend/", tmp.path()), where);
    HONE_CHECK_OK_CTX((*be)->load(pkg.graph, tmp.path()), where);
    HONE_CHECK_OK_CTX((*be)->activate(), where);
  } else {
    HONE_LOG_WARN("{}: tuned on another machine ({}); rebuilding backend '{}' here", file.string(),
                  diff_text, backend_name);
    HONE_CHECK_OK_CTX((*be)->build(pkg.graph), where);
  }
  return TunedModel(std::move(pkg.graph), std::move(pkg.spec), std::move(*be),
                    std::move(pkg.report));
}

Result<std::vector<Tensor>> load_package_samples(const fs::path& file) {
  const std::string where = "while reading the samples of package '" + file.string() + "'";
  HONE_TRY(Opened pkg, open_package(file));
  const json samples = pkg.manifest.value("samples", json::array());
  if (!samples.is_array() || samples.empty())
    return fail(
        Error(ErrorCode::kNotFound, "the package stores no input sample").add_context(where));
  std::vector<Tensor> out;
  for (const json& p : samples) {
    if (!p.is_string())
      return fail(Error(ErrorCode::kCorrupt, "manifest.json 'samples' holds a non-string")
                      .add_context(where));
    const package::Entry* e = find_entry(pkg.entries, p.get<std::string>());
    if (e == nullptr)
      return fail(Error(ErrorCode::kCorrupt, "manifest.json lists '" + p.get<std::string>() +
                                                 "', which the package does not hold")
                      .add_context(where));
    auto t = parse_npy(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(e->bytes.data()),
                                                e->bytes.size()),
                       e->path);
    if (!t) return fail(std::move(t).error().add_context(where));
    out.push_back(std::move(*t));
  }
  return out;
}

Result<std::string> package_manifest(const fs::path& file) {
  HONE_TRY(Opened pkg, open_package(file));
  return pkg.manifest.dump(2);
}

Result<std::string> describe_package(const fs::path& file) {
  HONE_TRY(Opened pkg, open_package(file));
  const json& m = pkg.manifest;  // checked by parse_manifest
  std::string o;
  const json& d = m["decision"];
  o += fmt::format("package {}: format {} (hone {})\n", file.string(),
                   m["format_version"].get<int>(), m.value("hone_version", "?"));
  o += fmt::format("model   {} (sha256 {})\n", m["model"]["name"].get<std::string>(),
                   m["model"]["sha256"].get<std::string>().substr(0, 16));
  o += fmt::format("backend {} (config {}: {})\n", d["backend"].get<std::string>(),
                   d.value("config_key", ""), d.value("config", ""));
  o += fmt::format("chosen  by {}: {}\n", m.value("strategy", "?"), d.value("reason", ""));
  const json losers = d.value("losers", json::object());
  for (const auto& [loser, why] : losers.items())
    o += fmt::format("  {} lost: {}\n", loser, why.get<std::string>());
  o += "figures (" + std::to_string(m["threads"].get<int>()) + " threads):\n";
  for (const auto& f : d.value("figures", json::array()))
    o += fmt::format(
        "  batch {:>4}: p50 {:.3f} ms  p90 {:.3f} ms  p99 {:.3f} ms  {:.1f} samples/s\n",
        f["batch"].get<int64_t>(), f["p50_ms"].get<double>(), f["p90_ms"].get<double>(),
        f["p99_ms"].get<double>(), f["throughput"].get<double>());
  const auto plan = d.value("kernel_plan", std::vector<std::string>{});
  if (!plan.empty()) {
    o += "kernel plan:\n";
    for (const auto& k : plan) o += "  " + k + "\n";
  }
  const std::string spec_text = pkg.spec.describe();
  o += spec_text + (spec_text.ends_with('\n') ? "" : "\n");
  const Fingerprint& fp = pkg.fingerprint;
  std::string isa;
  for (const auto& f : fp.isa) isa += (isa.empty() ? "" : " ") + f;
  o += fmt::format("tuned on {} ({}), {} threads\n", fp.cpu_model, isa, fp.threads);
  const auto diffs = fingerprint_differences(fp, machine_fingerprint(fp.threads));
  o += diffs.empty() ? "this machine matches the fingerprint\n" : "this machine differs:\n";
  for (const auto& x : diffs) o += "  " + x + "\n";
  package::ArchiveContents contents{{}, pkg.checksums, pkg.signature};
  auto sig = package::verify_signature(contents, trusted_key_files({}));
  if (!sig)
    return fail(std::move(sig).error().add_context("while describing '" + file.string() + "'"));
  o += !sig->is_signed ? std::string("signature: none\n")
                       : "signature: key " + sig->key_id +
                             (sig->trusted ? " (trusted: " + sig->trusted_by + ")\n"
                                           : " (not a trusted key)\n");
  o += "entries:\n";
  for (const auto& e : pkg.entries)
    o += fmt::format("  {:<40} {:>10} bytes\n", e.path, e.bytes.size());
  return o;
}

}  // namespace hone
