// Writing files so a reader never sees half of one.
//
//   HONE_CHECK_OK(hone::write_file_atomic("out/outputs.json", text));
//
// The bytes go to a uniquely named temporary file in the same folder, are
// flushed and fsync'ed, then renamed over the target. On any failure the
// temporary file is removed and whatever was at the target stays untouched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "hone/error.h"

namespace hone {

[[nodiscard]] Result<void> write_file_atomic(const std::filesystem::path& path,
                                             std::span<const uint8_t> bytes);
[[nodiscard]] Result<void> write_file_atomic(const std::filesystem::path& path,
                                             std::string_view text);

}  // namespace hone
