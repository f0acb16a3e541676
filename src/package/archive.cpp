#include "package/archive.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <system_error>

#include "core/log.h"
#include "hone/sha256.h"
#include "hone/temp_paths.h"
#include "package/archive_detail.h"
#include "package/zip_handles.h"

namespace hone::package {
namespace {

namespace fs = std::filesystem;
using detail::kFormatName;
using detail::kIoChunk;
using detail::quoted;
using detail::ZipArchive;
using detail::ZipError;
using detail::ZipFile;
using detail::ZipSource;

// A temporary untouched this long belongs to no live writer: writers touch it
// continuously until the rename.
constexpr auto kStaleAfter = std::chrono::minutes(1);

std::string errno_text(int err) {
  return std::strerror(err);
}

/// Owns a POSIX file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  /// Closes now, reporting the error a deferred close would swallow.
  int close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

// --- the temporary file ---------------------------------------------------------

/// An O_EXCL temporary next to the target, removed unless released.
class TempFile {
 public:
  static Result<TempFile> create(const fs::path& target) {
    std::random_device rd;
    char rand_hex[17];
    std::snprintf(rand_hex, sizeof rand_hex, "%08x%08x", rd(), rd());
    fs::path path =
        target.string() + std::string(kTempInfix) + std::to_string(::getpid()) + "-" + rand_hex;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
      return fail(ErrorCode::kIo, "cannot create " + quoted(path) + ": " + errno_text(errno));
    return TempFile(std::move(path), fd);
  }
  TempFile(TempFile&& o) noexcept
      : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), guard_(std::move(o.guard_)) {
    o.path_.clear();
  }
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  const fs::path& path() const { return path_; }

  Result<void> write(const char* data, size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, std::min(size, kIoChunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return fail(ErrorCode::kIo, "cannot write " + quoted(path_) + ": " + errno_text(errno));
      data += n;
      size -= static_cast<size_t>(n);
    }
    return {};
  }

  /// fsync, close, rename over `target`; afterwards the temporary is gone.
  Result<void> commit(const fs::path& target) {
    if (::fsync(fd_) != 0)
      return fail(ErrorCode::kIo, "cannot sync " + quoted(path_) + ": " + errno_text(errno));
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0)
      return fail(ErrorCode::kIo, "cannot close " + quoted(path_) + ": " + errno_text(errno));
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      return fail(ErrorCode::kIo, "cannot rename " + quoted(path_) + " to " + quoted(target) +
                                      ": " + errno_text(errno));
    }
    path_.clear();
    // The rename is durable only once the folder is synced; the file itself
    // is complete either way, so a failure here is worth a warning only.
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || ::fsync(dfd) != 0)
      HONE_LOG_WARN("package: cannot sync folder '{}'", dir.string());
    if (dfd >= 0) ::close(dfd);
    return {};
  }

 private:
  TempFile(fs::path path, int fd) : path_(std::move(path)), fd_(fd), guard_(path_) {}
  fs::path path_;
  int fd_;
  TempPathGuard guard_;  // removed on SIGINT/SIGTERM too
};

/// The writer pid in "<target>.hone-tmp-<pid>-<hex>", or 0.
pid_t temp_writer_pid(std::string_view rest) {
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '-')
    return 0;
  return pid;
}

/// Removes temporaries of `target` left by writers that were killed: the pid
/// in the name is gone, or nobody has touched the file for kStaleAfter (a
/// pid can be reused, and a folder can be shared between machines).
void remove_stale_temporaries(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string stem = target.filename().string() + std::string(kTempInfix);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(stem)) continue;
    const pid_t pid = temp_writer_pid(std::string_view(name).substr(stem.size()));
    bool stale = pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
    if (!stale) {
      std::error_code tec;
      const auto mtime = fs::last_write_time(it->path(), tec);
      stale = !tec && fs::file_time_type::clock::now() - mtime > kStaleAfter;
    }
    if (!stale) continue;
    std::error_code rec;
    if (fs::remove(it->path(), rec)) {
      HONE_LOG_INFO("package: removed '{}', left by an interrupted save", it->path().string());
    } else if (rec) {
      HONE_LOG_WARN("package: cannot remove stale '{}': {}", it->path().string(), rec.message());
    }
  }
}

// --- building the zip ---------------------------------------------------------------

Result<void> add_stored(zip_t* za, const Entry& e) {
  ZipError err;
  ZipSource src(zip_source_buffer_create(e.bytes.data(), e.bytes.size(), 0, err.get()));
  if (!src)
    return fail(ErrorCode::kOutOfMemory, "cannot stage entry '" + e.path + "': " + err.text());
  const zip_int64_t idx = zip_file_add(za, e.path.c_str(), src.get(), ZIP_FL_ENC_UTF_8);
  if (idx < 0)
    return fail(ErrorCode::kInternal, "cannot add entry '" + e.path + "': " + zip_strerror(za));
  src.release();  // the archive owns it now
  const auto i = static_cast<zip_uint64_t>(idx);
  // Fixed DOS date 1980-01-01 00:00 (set as DOS fields, so no time zone
  // enters) and fixed permissions: the same entries give the same bytes.
  if (zip_set_file_compression(za, i, ZIP_CM_STORE, 0) != 0 ||
      zip_file_set_dostime(za, i, 0, 0x21, 0) != 0 ||
      zip_file_set_external_attributes(za, i, 0, ZIP_OPSYS_UNIX, 0100644u << 16) != 0) {
    return fail(ErrorCode::kInternal,
                "cannot set attributes of entry '" + e.path + "': " + zip_strerror(za));
  }
  return {};
}

/// Builds the archive in memory and streams it into `out`. In memory, not
/// through zip_open(path): libzip would then make its own temporary file,
/// which we could neither name for stale clean-up nor fsync.
Result<void> write_zip(const std::vector<Entry>& entries, TempFile& out) {
  ZipError err;
  ZipSource buffer(zip_source_buffer_create(nullptr, 0, 0, err.get()));
  if (!buffer)
    return fail(ErrorCode::kOutOfMemory, std::string("cannot create zip buffer: ") + err.text());
  ZipArchive za(zip_open_from_source(buffer.get(), ZIP_TRUNCATE, err.get()));
  if (!za) return fail(ErrorCode::kInternal, std::string("cannot open zip buffer: ") + err.text());
  zip_source_keep(buffer.get());  // one reference for the archive, one for us
  for (const Entry& e : entries) HONE_CHECK_OK(add_stored(za.get(), e));
  if (zip_close(za.get()) != 0)
    return fail(ErrorCode::kInternal, std::string("cannot finish zip: ") + zip_strerror(za.get()));
  za.release();  // zip_close freed it

  if (zip_source_open(buffer.get()) != 0) {
    return fail(ErrorCode::kInternal, std::string("cannot read zip buffer: ") +
                                          zip_error_strerror(zip_source_error(buffer.get())));
  }
  std::string chunk(kIoChunk, '\0');
  Result<void> written;
  for (;;) {
    const zip_int64_t n = zip_source_read(buffer.get(), chunk.data(), chunk.size());
    if (n < 0) {
      written = fail(ErrorCode::kInternal, std::string("cannot read zip buffer: ") +
                                               zip_error_strerror(zip_source_error(buffer.get())));
      break;
    }
    if (n == 0) break;
    written = out.write(chunk.data(), static_cast<size_t>(n));
    if (!written) break;
  }
  zip_source_close(buffer.get());
  return written;
}

std::string checksums_json(const std::vector<Entry>& entries) {
  nlohmann::json sums = nlohmann::json::object();
  for (const Entry& e : entries) sums[e.path] = sha256_hex(e.bytes);
  // nlohmann::json objects are key-sorted, so the text is deterministic.
  nlohmann::json doc = {
      {"format", kFormatName}, {"version", kFormatVersion}, {"sha256", std::move(sums)}};
  return doc.dump(2) + "\n";
}

std::string normalized_prefix(std::string_view prefix) {
  std::string p(prefix);
  if (!p.empty() && p.back() != '/') p += '/';
  return p;
}

Result<void> check_prefix(const std::string& prefix) {
  if (prefix.empty()) return {};
  const std::string problem =
      entry_path_problem(std::string_view(prefix).substr(0, prefix.size() - 1));
  if (!problem.empty())
    return fail(ErrorCode::kInvalidArgument, "prefix '" + prefix + "' " + problem);
  return {};
}

}  // namespace

std::string entry_path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() == '/') return "is absolute";
  for (char c : path) {
    if (c == '\\') return "contains a backslash";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "contains a control character";
  }
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const std::string_view seg =
        path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (seg.empty()) return "has an empty segment";
    if (seg == "..") return "contains a '..' segment";
    if (seg == ".") return "contains a '.' segment";
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return {};
}

std::string checksums_text(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return checksums_json(entries);
}

Result<void> write_archive(const fs::path& file, std::vector<Entry> entries,
                           std::optional<std::string> signature) {
  const std::string ctx = "while writing package " + quoted(file);
  for (const Entry& e : entries) {
    const std::string problem = entry_path_problem(e.path);
    if (!problem.empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "entry path '" + e.path + "' " + problem)
                      .add_context(ctx));
    }
    if (e.path == kChecksumsEntry || e.path == kSignatureEntry) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "entry path '" + e.path + "' is reserved: write_archive adds it")
                      .add_context(ctx));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].path == entries[i - 1].path) {
      return fail(
          Error(ErrorCode::kInvalidArgument, "duplicate entry path '" + entries[i].path + "'")
              .add_context(ctx));
    }
  }
  const auto by_path = [](const Entry& a, const Entry& b) { return a.path < b.path; };
  Entry sums{std::string(kChecksumsEntry), checksums_json(entries)};
  entries.insert(std::upper_bound(entries.begin(), entries.end(), sums, by_path), std::move(sums));
  if (signature) {
    Entry sig{std::string(kSignatureEntry), std::move(*signature)};
    entries.insert(std::upper_bound(entries.begin(), entries.end(), sig, by_path), std::move(sig));
  }

  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return fail(
        Error(ErrorCode::kIo, "folder " + quoted(dir) + " does not exist").add_context(ctx));
  }
  if (fs::is_directory(file, ec)) {
    return fail(Error(ErrorCode::kInvalidArgument, quoted(file) + " is a folder").add_context(ctx));
  }
  remove_stale_temporaries(file);
  auto tmp = TempFile::create(file);
  if (!tmp) return fail(std::move(tmp).error().add_context(ctx));
  HONE_CHECK_OK_CTX(write_zip(entries, *tmp), ctx);
  HONE_CHECK_OK_CTX(tmp->commit(file), ctx);
  HONE_LOG_DEBUG("package: wrote '{}' ({} entries)", file.string(), entries.size());
  return {};
}

Result<void> extract_entries(const std::vector<Entry>& entries, std::string_view prefix,
                             const fs::path& dir) {
  const std::string pre = normalized_prefix(prefix);
  HONE_CHECK_OK(check_prefix(pre));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::kIo, "cannot create folder " + quoted(dir) + ": " + ec.message());
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return fail(ErrorCode::kIo, "cannot resolve folder " + quoted(dir) + ": " + ec.message());
  for (const Entry& e : entries) {
    if (!e.path.starts_with(pre)) continue;
    const std::string rel = e.path.substr(pre.size());
    const std::string problem = entry_path_problem(rel);
    if (!problem.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "entry path '" + e.path + "' " + problem + " below '" + pre + "'");
    }
    const fs::path target = root / rel;
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      return fail(ErrorCode::kIo,
                  "cannot create folder " + quoted(target.parent_path()) + ": " + ec.message());
    // A symbolic link already inside `dir` could point a safe-looking path
    // elsewhere; the resolved parent must still lie under `dir`.
    const fs::path parent = fs::canonical(target.parent_path(), ec);
    const auto [root_end, parent_it] =
        std::mismatch(root.begin(), root.end(), parent.begin(), parent.end());
    if (ec || root_end != root.end()) {
      return fail(ErrorCode::kInvalidArgument,
                  "entry '" + e.path + "' would be written outside " + quoted(dir));
    }
    Fd fd(::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666));
    if (fd.get() < 0)
      return fail(ErrorCode::kIo, "cannot create " + quoted(target) + ": " + errno_text(errno));
    const char* data = e.bytes.data();
    size_t left = e.bytes.size();
    while (left > 0) {
      const ssize_t n = ::write(fd.get(), data, std::min(left, kIoChunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return fail(ErrorCode::kIo, "cannot write " + quoted(target) + ": " + errno_text(errno));
      data += n;
      left -= static_cast<size_t>(n);
    }
    if (fd.close() != 0)
      return fail(ErrorCode::kIo, "cannot close " + quoted(target) + ": " + errno_text(errno));
  }
  return {};
}

Result<std::vector<Entry>> collect_entries(const fs::path& dir, std::string_view prefix) {
  const std::string pre = normalized_prefix(prefix);
  HONE_CHECK_OK(check_prefix(pre));
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail(ErrorCode::kNotFound, "folder " + quoted(dir) + " does not exist");
  std::vector<Entry> out;
  for (fs::recursive_directory_iterator it(dir, ec), end; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::file_status st = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_directory(st)) continue;
    if (!fs::is_regular_file(st)) {
      return fail(ErrorCode::kUnsupported, quoted(it->path()) +
                                               " is a symbolic link or special file; a package "
                                               "holds regular files only");
    }
    const std::string path = pre + it->path().lexically_relative(dir).generic_string();
    const std::string problem = entry_path_problem(path);
    if (!problem.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  quoted(it->path()) + " cannot be stored: entry path '" + path + "' " + problem);
    }
    Fd fd(::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (fd.get() < 0)
      return fail(ErrorCode::kIo, "cannot read " + quoted(it->path()) + ": " + errno_text(errno));
    std::string bytes;
    std::string chunk(kIoChunk, '\0');
    for (;;) {
      const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        return fail(ErrorCode::kIo, "cannot read " + quoted(it->path()) + ": " + errno_text(errno));
      if (n == 0) break;
      bytes.append(chunk.data(), static_cast<size_t>(n));
    }
    out.push_back({path, std::move(bytes)});
  }
  if (ec) return fail(ErrorCode::kIo, "cannot list " + quoted(dir) + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return out;
}

}  // namespace hone::package
