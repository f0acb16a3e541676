#include "backends/aot/block_meta.h"

#include "hone/sha256.h"

namespace hone::aot {

namespace fs = std::filesystem;
using json = nlohmann::json;

Result<BlockMeta> parse_block_meta(const std::string& text, const fs::path& file) {
  const std::string where = "'" + file.string() + "'";
  const json meta = json::parse(text, nullptr, false);
  if (meta.is_discarded() || !meta.is_object())
    return fail(ErrorCode::kCorrupt, where + " is not a saved aot block (not a JSON object)");
  auto bad = [&](const std::string& field, const std::string& what) {
    return fail(ErrorCode::kCorrupt, where + ": field '" + field + "' " + what);
  };
  auto strings = [&](const char* key, bool required) -> Result<std::vector<std::string>> {
    const auto it = meta.find(key);
    if (it == meta.end()) {
      if (required) return bad(key, "is missing");
      return std::vector<std::string>{};
    }
    if (!it->is_array()) return bad(key, "must be an array of strings");
    std::vector<std::string> out;
    for (const json& v : *it) {
      if (!v.is_string()) return bad(key, "must be an array of strings");
      out.push_back(v.get<std::string>());
    }
    return out;
  };
  BlockMeta m;
  if (meta.value("hash", json()) != "sha256")
    return bad("hash", "must be \"sha256\" (a package saved by an older hone: tune it again)");
  const auto sha = meta.find("sha");
  if (sha == meta.end() || !sha->is_object()) return bad("sha", "must be an object");
  for (auto [key, out] :
       {std::pair{"model.so", &m.sha_library}, std::pair{"weights.bin", &m.sha_weights},
        std::pair{"model.c", &m.sha_source}}) {
    const auto it = sha->find(key);
    if (it == sha->end() || !it->is_string() || !is_sha256_hex(it->get<std::string>()))
      return bad(std::string("sha.") + key, "must be a SHA-256 in hex");
    *out = it->get<std::string>();
  }
  HONE_TRY(m.cpu_features, strings("cpu_features", true));
  HONE_TRY(auto flags, strings("compiler_flags", false));
  HONE_TRY(auto libraries, strings("libraries", false));
  if (const auto rt = meta.find("runtime"); rt != meta.end()) {
    if (!rt->is_string()) return bad("runtime", "must be a string");
    m.runtime = rt->get<std::string>();
  }
  const auto compiler = meta.find("compiler");
  if (compiler != meta.end() && !compiler->is_string()) return bad("compiler", "must be a string");
  m.toolchain = {{"compiler", compiler != meta.end() ? compiler->get<std::string>() : ""},
                 {"compiler_flags", flags},
                 {"cpu_features", m.cpu_features},
                 {"libraries", libraries}};
  return m;
}

}  // namespace hone::aot
