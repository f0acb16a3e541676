#include "tune/machine.h"

#include "hone/registry.h"
#include "onnx/library.h"

namespace hone {

std::map<std::string, std::string> machine_library_versions() {
  std::map<std::string, std::string> out;
  for (const auto& e : default_registry().entries())
    for (const auto& [name, version] : e.capabilities.libraries) out.emplace(name, version);
  out["onnx"] = onnx::library_version();
  return out;
}

Fingerprint machine_fingerprint(int threads) {
  return current_fingerprint(threads, machine_library_versions());
}

}  // namespace hone
