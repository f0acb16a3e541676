// libFuzzer target: arbitrary bytes as a package's manifest.json. The schema
// check must accept or return an Error; what it accepts must be safe to read
// the way hone::load and describe read it (no exception may escape).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "package/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto m =
      hone::package::parse_manifest(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!m) {
    (void)m.error().to_string();
    return 0;
  }
  // The fields load() and describe_package() read after the check.
  (void)(*m)["threads"].get<int>();
  (void)(*m)["format_version"].get<int>();
  (void)(*m)["model"]["sha256"].get<std::string>();
  (void)(*m)["model"]["name"].get<std::string>();
  const auto& d = (*m)["decision"];
  (void)d["backend"].get<std::string>();
  const nlohmann::json fields = d.value("config_fields", nlohmann::json::object());
  for (const auto& [k, v] : fields.items()) (void)v.get<std::string>();
  for (const auto& f : d.value("figures", nlohmann::json::array())) {
    (void)f["batch"].get<int64_t>();
    (void)f["p50_ms"].get<double>();
    (void)f["throughput"].get<double>();
  }
  (void)d.value("kernel_plan", std::vector<std::string>{});
  (void)d.value("losers", std::map<std::string, std::string>{});
  return 0;
}
