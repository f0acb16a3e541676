// RAII owners for libzip handles, shared by the package sources.
//
//   ZipSource src(zip_source_buffer_create(nullptr, 0, 0, &err));
//   ZipArchive za(zip_open_from_source(src.get(), ZIP_TRUNCATE, &err));
//   ZipFile f(zip_fopen_index(za.get(), i, 0));
//
// Internal to src/package; include only from .cpp files (it pulls in zip.h).
#pragma once

#include <zip.h>

#include <memory>

namespace hone::package::detail {

struct ZipArchiveCloser {
  // Discard, not close: a zip_t still open at scope exit is an abandoned
  // write or a finished read; zip_close is called explicitly where wanted.
  void operator()(zip_t* z) const {
    if (z != nullptr) zip_discard(z);
  }
};
using ZipArchive = std::unique_ptr<zip_t, ZipArchiveCloser>;

struct ZipSourceFreer {
  void operator()(zip_source_t* s) const {
    if (s != nullptr) zip_source_free(s);
  }
};
using ZipSource = std::unique_ptr<zip_source_t, ZipSourceFreer>;

struct ZipFileCloser {
  void operator()(zip_file_t* f) const {
    if (f != nullptr) zip_fclose(f);
  }
};
using ZipFile = std::unique_ptr<zip_file_t, ZipFileCloser>;

/// zip_error_t needs zip_error_fini to release its message buffer.
class ZipError {
 public:
  ZipError() { zip_error_init(&error_); }
  ~ZipError() { zip_error_fini(&error_); }
  ZipError(const ZipError&) = delete;
  ZipError& operator=(const ZipError&) = delete;
  zip_error_t* get() { return &error_; }
  const char* text() { return zip_error_strerror(&error_); }

 private:
  zip_error_t error_;
};

}  // namespace hone::package::detail
