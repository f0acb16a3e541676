#include "package/manifest.h"

#include <algorithm>
#include <string>

#include "hone/limits.h"

namespace hone::package {
namespace {

using nlohmann::json;

enum class Kind { kString, kInt, kNumber, kBool, kObject, kArray };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kString:
      return "a string";
    case Kind::kInt:
      return "an integer";
    case Kind::kNumber:
      return "a number";
    case Kind::kBool:
      return "true or false";
    case Kind::kObject:
      return "an object";
    case Kind::kArray:
      return "an array";
  }
  return "?";
}

const char* json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a fraction";
    default:
      return "something else";
  }
}

bool is(const json& j, Kind k) {
  switch (k) {
    case Kind::kString:
      return j.is_string();
    case Kind::kInt:
      // Integers that fit int64 (nlohmann stores large unsigned separately).
      return j.is_number_integer() &&
             (!j.is_number_unsigned() || j.get<uint64_t>() <= uint64_t{INT64_MAX});
    case Kind::kNumber:
      return j.is_number();
    case Kind::kBool:
      return j.is_boolean();
    case Kind::kObject:
      return j.is_object();
    case Kind::kArray:
      return j.is_array();
  }
  return false;
}

std::unexpected<Error> bad(const std::string& field, const std::string& what) {
  return fail(ErrorCode::kCorrupt, "manifest.json: field '" + field + "' " + what);
}

/// The member `key` of object `obj` at `path`: checked for kind; null when
/// absent and optional.
Result<const json*> member(const json& obj, const std::string& path, const char* key, Kind kind,
                           bool required = true) {
  const std::string field = path.empty() ? key : path + "." + key;
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return bad(field, "is missing");
    return nullptr;
  }
  if (!is(*it, kind))
    return bad(field, std::string("must be ") + kind_name(kind) + ", not " + json_type_name(*it));
  return &*it;
}

Result<int64_t> int_in(const json& obj, const std::string& path, const char* key, int64_t lo,
                       int64_t hi, bool required = true) {
  HONE_TRY(const json* j, member(obj, path, key, Kind::kInt, required));
  if (j == nullptr) return lo;
  const int64_t v = j->get<int64_t>();
  if (v < lo || v > hi)
    return bad(path.empty() ? key : path + "." + key, "is " + std::to_string(v) + ", outside " +
                                                          std::to_string(lo) + " to " +
                                                          std::to_string(hi));
  return v;
}

Result<void> all_strings(const json& container, const std::string& field) {
  size_t i = 0;
  for (const auto& [k, v] : container.items()) {
    const std::string at =
        container.is_object() ? field + "." + k : field + "[" + std::to_string(i) + "]";
    if (!v.is_string()) return bad(at, std::string("must be a string, not ") + json_type_name(v));
    ++i;
  }
  return {};
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Result<void> check_decision(const json& d) {
  const std::string p = "decision";
  HONE_TRY(const json* backend, member(d, p, "backend", Kind::kString));
  if (backend->get_ref<const std::string&>().empty()) return bad(p + ".backend", "is empty");
  for (const char* key : {"config_key", "config", "reason"})
    HONE_CHECK_OK(member(d, p, key, Kind::kString, false));
  HONE_CHECK_OK(member(d, p, "baseline_kept", Kind::kBool, false));
  HONE_TRY(const json* fields, member(d, p, "config_fields", Kind::kObject, false));
  if (fields != nullptr) HONE_CHECK_OK(all_strings(*fields, p + ".config_fields"));
  HONE_TRY(const json* plan, member(d, p, "kernel_plan", Kind::kArray, false));
  if (plan != nullptr) HONE_CHECK_OK(all_strings(*plan, p + ".kernel_plan"));
  HONE_TRY(const json* losers, member(d, p, "losers", Kind::kObject, false));
  if (losers != nullptr) HONE_CHECK_OK(all_strings(*losers, p + ".losers"));
  HONE_TRY(const json* figures, member(d, p, "figures", Kind::kArray, false));
  if (figures != nullptr) {
    for (size_t i = 0; i < figures->size(); ++i) {
      const json& f = (*figures)[i];
      const std::string fp = p + ".figures[" + std::to_string(i) + "]";
      if (!f.is_object())
        return bad(fp, std::string("must be an object, not ") + json_type_name(f));
      HONE_CHECK_OK(int_in(f, fp, "batch", 0, int64_t{1} << 40));
      for (const char* key : {"p50_ms", "p90_ms", "p99_ms", "throughput"})
        HONE_CHECK_OK(member(f, fp, key, Kind::kNumber));
      for (const char* key : {"mean_ms", "min_ms", "max_ms"})
        HONE_CHECK_OK(member(f, fp, key, Kind::kNumber, false));
      // null: one figure, no spread (a candidate stopped after its warm-up).
      if (!(f.contains("cv") && f["cv"].is_null()))
        HONE_CHECK_OK(member(f, fp, "cv", Kind::kNumber, false));
      HONE_CHECK_OK(int_in(f, fp, "runs", 0, INT32_MAX, false));
      HONE_CHECK_OK(member(f, fp, "converged", Kind::kBool, false));
    }
  }
  return {};
}

}  // namespace

Result<json> parse_manifest(std::string_view text) {
  json m = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded()) return fail(ErrorCode::kCorrupt, "manifest.json is not valid JSON");
  if (!m.is_object()) return fail(ErrorCode::kCorrupt, "manifest.json is not a JSON object");
  HONE_TRY(const json* format, member(m, "", "format", Kind::kString));
  if (*format != "hone")
    return fail(ErrorCode::kCorrupt,
                "manifest.json is not a hone manifest (\"format\" is not \"hone\")");
  HONE_TRY(const json* hone_version, member(m, "", "hone_version", Kind::kString, false));
  HONE_TRY(const json* version, member(m, "", "format_version", Kind::kInt));
  const int64_t v = version->get<int64_t>();
  if (v > kManifestVersion)
    return fail(ErrorCode::kUnsupported,
                "package format version " + std::to_string(v) +
                    " is not one this hone reads (1 to " + std::to_string(kManifestVersion) +
                    "); it was written by hone " +
                    (hone_version != nullptr ? hone_version->get<std::string>() : "?"));
  if (v < 1) return bad("format_version", "is " + std::to_string(v) + "; versions start at 1");

  HONE_TRY(const json* model, member(m, "", "model", Kind::kObject));
  HONE_CHECK_OK(member(*model, "model", "name", Kind::kString));
  HONE_TRY(const json* sha, member(*model, "model", "sha256", Kind::kString));
  if (!is_hex64(sha->get<std::string>()))
    return bad("model.sha256", "is not 64 lower-case hex digits");
  HONE_TRY(const json* file, member(*model, "model", "file", Kind::kString, false));
  if (file != nullptr && *file != "model.onnx") return bad("model.file", "must be \"model.onnx\"");

  HONE_CHECK_OK(member(m, "", "spec", Kind::kObject));
  HONE_CHECK_OK(member(m, "", "fingerprint", Kind::kObject));
  HONE_TRY(const json* decision, member(m, "", "decision", Kind::kObject));
  HONE_CHECK_OK(check_decision(*decision));
  HONE_CHECK_OK(member(m, "", "strategy", Kind::kString, false));
  HONE_CHECK_OK(int_in(m, "", "threads", 0, kMaxThreads));
  HONE_TRY(const json* batches, member(m, "", "batch_sizes", Kind::kArray, false));
  if (batches != nullptr)
    for (size_t i = 0; i < batches->size(); ++i)
      if (!is((*batches)[i], Kind::kInt) || (*batches)[i].get<int64_t>() < 1)
        return bad("batch_sizes[" + std::to_string(i) + "]", "must be an integer of at least 1");
  return m;
}

}  // namespace hone::package
