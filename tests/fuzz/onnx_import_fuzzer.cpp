// libFuzzer target: arbitrary bytes as an ONNX model. Import must either
// succeed or return an Error; a crash, leak or sanitizer report is a bug.
// What imports is validated, ordered and exported again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <unistd.h>

#include "hone/onnx.h"

namespace {

/// A folder holding one small data file, so external-data paths in fuzzed
/// models have something to resolve (and to try to escape from).
std::filesystem::path make_base_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hone_fuzz_base_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  if (std::FILE* f = std::fopen((dir / "weights.bin").c_str(), "wb")) {
    for (int i = 0; i < 4096; ++i) std::fputc(i & 0xFF, f);
    std::fclose(f);
  }
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path base = make_base_dir();
  auto graph = hone::onnx::load_model_from_bytes(std::span<const uint8_t>(data, size), base);
  if (!graph) {
    (void)graph.error().to_string();
    return 0;
  }
  (void)graph->validate();
  (void)graph->topological_order();
  (void)graph->captured_values();
  auto bytes = hone::onnx::save_model_to_bytes(*graph);
  if (bytes) (void)hone::onnx::load_model_from_bytes(*bytes, base);
  return 0;
}
