// Reading files that may be hostile: a FIFO that would block forever, a
// symbolic link to /dev/zero that would read forever, a folder where a file
// was expected. Only regular files are read, and only as many bytes as the
// caller allows or a format's header says.
//
//   HONE_TRY(auto bytes, hone::read_regular_file("in/input_0.pb", 1 << 20));
//   HONE_TRY(hone::RegularFile f, hone::RegularFile::open("in/input_0.npy"));
//   HONE_CHECK_OK(f.read_at(0, header, 12));   // then the size the header says
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "hone/error.h"

namespace hone {

/// A regular file opened for reading at offsets. open() never blocks (a FIFO
/// is refused, not waited on) and refuses whatever is not a regular file once
/// symbolic links are followed: a folder, FIFO, socket or device such as
/// /dev/zero. Errors name the path: kNotFound, kInvalidArgument (not a
/// regular file, saying what it is), kIo.
class RegularFile {
 public:
  [[nodiscard]] static Result<RegularFile> open(const std::filesystem::path& path);
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  ~RegularFile();
  /// The size when opened.
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  /// Reads exactly `n` bytes at `offset`; kIo (naming the file) when fewer are there.
  [[nodiscard]] Result<void> read_at(uint64_t offset, void* dst, size_t n) const;

 private:
  RegularFile(std::filesystem::path path, int fd, uint64_t size);
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// The whole of a regular file (see RegularFile) of at most `max_bytes`;
/// kUnsupported naming the file and both sizes when it is larger.
[[nodiscard]] Result<std::vector<uint8_t>> read_regular_file(const std::filesystem::path& path,
                                                             uint64_t max_bytes);

}  // namespace hone
