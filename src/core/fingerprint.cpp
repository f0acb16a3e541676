#include "core/fingerprint.h"

#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "hone/sha256.h"
#include "hone/version.h"

namespace hone {
namespace {

// The CPU flags that decide which kernels a backend picks (Linux names).
// Everything else in /proc/cpuinfo (virtualisation, power management, bug
// flags) is left out, so two machines that differ only there still match.
const std::set<std::string_view>& isa_that_matters() {
  static const std::set<std::string_view> kIsa = {
      // x86
      "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512cd",
      "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx512vbmi",
      "amx_tile", "amx_bf16", "amx_int8",
      // Arm
      "asimd", "asimdhp", "asimddp", "sve", "sve2", "bf16", "i8mm", "sme"};
  return kIsa;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string compiler_version() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

Result<std::string> string_field(const nlohmann::json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end() || !it->is_string()) {
    return fail(ErrorCode::kCorrupt,
                std::string("fingerprint: '") + name + "' is missing or not a string");
  }
  return it->get<std::string>();
}

}  // namespace

std::string Fingerprint::to_json() const {
  nlohmann::json doc = {{"cpu_model", cpu_model},
                        {"isa", isa},
                        {"threads", threads},
                        {"libraries", libraries},
                        {"os", os}};
  return doc.dump();
}

Result<Fingerprint> Fingerprint::from_json(std::string_view json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(ErrorCode::kCorrupt, "fingerprint: not a JSON object");
  }
  Fingerprint fp;
  HONE_TRY(fp.cpu_model, string_field(doc, "cpu_model"));
  HONE_TRY(fp.os, string_field(doc, "os"));
  const auto threads = doc.find("threads");
  if (threads == doc.end() || !threads->is_number_integer() || threads->get<int64_t>() < 0 ||
      threads->get<int64_t>() > 1 << 20) {
    return fail(ErrorCode::kCorrupt, "fingerprint: 'threads' is missing or not a thread count");
  }
  fp.threads = threads->get<int>();
  const auto isa = doc.find("isa");
  if (isa == doc.end() || !isa->is_array()) {
    return fail(ErrorCode::kCorrupt, "fingerprint: 'isa' is missing or not a list");
  }
  for (const auto& f : *isa) {
    if (!f.is_string()) return fail(ErrorCode::kCorrupt, "fingerprint: 'isa' holds a non-string");
    fp.isa.push_back(f.get<std::string>());
  }
  std::sort(fp.isa.begin(), fp.isa.end());
  const auto libs = doc.find("libraries");
  if (libs == doc.end() || !libs->is_object()) {
    return fail(ErrorCode::kCorrupt, "fingerprint: 'libraries' is missing or not an object");
  }
  for (const auto& [name, version] : libs->items()) {
    if (!version.is_string()) {
      return fail(ErrorCode::kCorrupt,
                  "fingerprint: library '" + name + "' has a non-string version");
    }
    fp.libraries.emplace(name, version.get<std::string>());
  }
  return fp;
}

std::string Fingerprint::key() const {
  return sha256_hex(to_json()).substr(0, 16);
}

void parse_cpuinfo(std::string_view cpuinfo, Fingerprint& out) {
  std::string model, fallback_model;
  std::set<std::string> isa;
  bool have_flags = false;
  size_t start = 0;
  while (start < cpuinfo.size()) {
    size_t end = cpuinfo.find('\n', start);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(start, end - start);
    start = end + 1;
    // A blank line ends the first processor's block; all cores of a
    // machine hone runs on report the same model and flags.
    if (trim(line).empty()) {
      if (!model.empty() || have_flags) break;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "model name") {
      model = value;
    } else if ((key == "Processor" || key == "CPU part" || key == "cpu model") &&
               fallback_model.empty()) {
      fallback_model = value;
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      have_flags = true;
      std::istringstream words{std::string(value)};
      for (std::string w; words >> w;) {
        if (isa_that_matters().contains(w)) isa.insert(w);
      }
    }
  }
  out.cpu_model = !model.empty() ? model : !fallback_model.empty() ? fallback_model : "unknown";
  out.isa.assign(isa.begin(), isa.end());
}

Fingerprint current_fingerprint(int threads, std::map<std::string, std::string> libraries) {
  Fingerprint fp;
  fp.libraries = std::move(libraries);
  fp.threads = threads;
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  parse_cpuinfo(text.str(), fp);

  fp.libraries["hone"] = HONE_VERSION_STRING;
  fp.libraries["compiler"] = compiler_version();

  struct utsname u;
  fp.os = ::uname(&u) == 0 ? std::string(u.sysname) + " " + u.machine : "unknown";
  return fp;
}

std::vector<std::string> fingerprint_differences(const Fingerprint& package,
                                                 const Fingerprint& here) {
  std::vector<std::string> out;
  // Sets, not the vectors: a hand-built fingerprint need not be sorted.
  const std::set<std::string> package_isa(package.isa.begin(), package.isa.end());
  const std::set<std::string> here_isa(here.isa.begin(), here.isa.end());
  // Missing features first: those can make a saved plan crash (SIGILL), the
  // rest only make measured figures stale.
  for (const std::string& f : package_isa) {
    if (!here_isa.contains(f)) {
      out.push_back("CPU lacks " + f + " (package tuned with it)");
    }
  }
  for (const std::string& f : here_isa) {
    if (!package_isa.contains(f)) {
      out.push_back("CPU has " + f + " (package tuned without it)");
    }
  }
  if (package.cpu_model != here.cpu_model) {
    out.push_back("CPU model '" + package.cpu_model + "' != '" + here.cpu_model + "'");
  }
  if (package.os != here.os) out.push_back("OS '" + package.os + "' != '" + here.os + "'");
  if (package.threads != here.threads) {
    out.push_back("threads " + std::to_string(package.threads) +
                  " != " + std::to_string(here.threads));
  }
  std::set<std::string> names;
  for (const auto& [name, v] : package.libraries) names.insert(name);
  for (const auto& [name, v] : here.libraries) names.insert(name);
  for (const std::string& name : names) {
    if (name == "compiler") continue;
    const auto p = package.libraries.find(name);
    const auto h = here.libraries.find(name);
    const std::string pv = p == package.libraries.end() ? "(absent)" : p->second;
    const std::string hv = h == here.libraries.end() ? "(absent)" : h->second;
    if (pv != hv) out.push_back(name + " " + pv + " != " + hv);
  }
  return out;
}

}  // namespace hone
