// What the two halves of the package archive (archive.cpp writes,
// archive_read.cpp reads) share. Internal to src/package.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace hone::package::detail {

inline constexpr std::string_view kFormatName = "hone-package";
// Reading stops an entry that inflates beyond this multiple of the file size
// (plus a MiB): a stored package never does, a zip bomb does.
inline constexpr uint64_t kMaxExpansion = 256;
inline constexpr size_t kIoChunk = size_t{1} << 20;

/// 'path', for error messages.
inline std::string quoted(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

}  // namespace hone::package::detail
