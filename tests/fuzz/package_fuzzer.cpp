// libFuzzer target: arbitrary bytes as a .hone file. The package reader
// (zip container, entry paths, sizes, SHA-256 sums, checksums.json) and the
// signature check must return the entries or an Error, never crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "hone/limits.h"
#include "package/archive.h"
#include "package/signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("hone_fuzz_pkg_" + std::to_string(::getpid()) + ".hone");
  if (std::FILE* f = std::fopen(file.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  auto contents = hone::package::read_archive_contents(file);
  if (!contents) {
    (void)contents.error().to_string();
    return 0;
  }
  auto sig = hone::package::verify_signature(*contents, {});
  if (!sig) (void)sig.error().to_string();
  for (const auto& e : contents->entries) (void)hone::package::is_native_code(e.bytes);
  return 0;
}
