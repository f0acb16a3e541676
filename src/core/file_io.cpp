#include "hone/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <system_error>

#include "core/stdio_file.h"
#include "hone/temp_paths.h"

namespace hone {

Result<void> write_file_atomic(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::random_device rd;
  const std::filesystem::path tmp =
      path.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  const TempPathGuard guard(tmp);  // removed on SIGINT/SIGTERM too
  {
    StdioFile f(std::fopen(tmp.c_str(), "wb"));
    if (!f) return fail(ErrorCode::kIo, "cannot create '" + tmp.string() + "': " + errno_text());
    const bool ok =
        (bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f.get()) == bytes.size()) &&
        std::fflush(f.get()) == 0 && ::fsync(::fileno(f.get())) == 0;
    if (!ok) {
      const std::string why = errno_text();
      f.reset();
      std::remove(tmp.c_str());
      return fail(ErrorCode::kIo, "cannot write '" + tmp.string() + "': " + why);
    }
    if (std::fclose(f.release()) != 0) {
      std::remove(tmp.c_str());
      return fail(ErrorCode::kIo, "cannot close '" + tmp.string() + "': " + errno_text());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return fail(ErrorCode::kIo,
                "cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
  }
  return {};
}

Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view text) {
  return write_file_atomic(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace hone
