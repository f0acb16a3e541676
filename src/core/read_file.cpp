#include "hone/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/stdio_file.h"

namespace hone {
namespace {

std::string file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  return "not a regular file";
}

}  // namespace

Result<RegularFile> RegularFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return fail(ErrorCode::kNotFound, "'" + path.string() + "': no such file");
    return fail(ErrorCode::kIo, "cannot open '" + path.string() + "': " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    return fail(ErrorCode::kIo, "cannot stat '" + path.string() + "': " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::kInvalidArgument,
                "'" + path.string() + "' is " + file_kind(st.st_mode) + ", not a regular file");
  }
  // Regular files never block; clear the flag so reads behave plainly.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return RegularFile(path, fd, static_cast<uint64_t>(st.st_size));
}

RegularFile::RegularFile(std::filesystem::path path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> RegularFile::read_at(uint64_t offset, void* dst, size_t n) const {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return fail(ErrorCode::kIo, "cannot read '" + path_.string() + "': " + errno_text());
    if (got == 0)
      return fail(ErrorCode::kIo, "'" + path_.string() + "' ended early (it shrank while read?)");
    p += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return {};
}

Result<std::vector<uint8_t>> read_regular_file(const std::filesystem::path& path,
                                               uint64_t max_bytes) {
  HONE_TRY(RegularFile f, RegularFile::open(path));
  if (f.size() > max_bytes)
    return fail(ErrorCode::kUnsupported, "'" + path.string() + "' is " + std::to_string(f.size()) +
                                             " bytes, more than the " + std::to_string(max_bytes) +
                                             " this file may have");
  std::vector<uint8_t> bytes(f.size());
  if (!bytes.empty()) HONE_CHECK_OK(f.read_at(0, bytes.data(), bytes.size()));
  return bytes;
}

}  // namespace hone
