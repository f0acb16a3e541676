// Reading a package archive (archive.h): every entry's checksum, size and
// path checked before anything is trusted; the writing half is archive.cpp.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "hone/sha256.h"
#include "package/archive.h"
#include "package/archive_detail.h"
#include "package/zip_handles.h"

namespace hone::package {
namespace {

namespace fs = std::filesystem;
using detail::kFormatName;
using detail::kIoChunk;
using detail::kMaxExpansion;
using detail::quoted;
using detail::ZipArchive;
using detail::ZipError;
using detail::ZipFile;

Result<std::string> read_entry(zip_t* za, zip_uint64_t index, const std::string& name,
                               const fs::path& file, uint64_t limit) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za, index, 0, &st) != 0) {
    return fail(ErrorCode::kCorrupt,
                quoted(file) + ": cannot read entry '" + name + "': " + zip_strerror(za));
  }
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) != 0 && st.encryption_method != ZIP_EM_NONE) {
    return fail(ErrorCode::kCorrupt,
                quoted(file) + ": entry '" + name + "' is encrypted; hone packages never are");
  }
  if ((st.valid & ZIP_STAT_SIZE) != 0 && st.size > limit) {
    return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + name + "' claims " +
                                         std::to_string(st.size) +
                                         " bytes, more than the package could hold");
  }
  ZipFile zf(zip_fopen_index(za, index, 0));
  if (!zf) {
    return fail(ErrorCode::kCorrupt,
                quoted(file) + ": cannot open entry '" + name + "': " + zip_strerror(za));
  }
  std::string bytes;
  if ((st.valid & ZIP_STAT_SIZE) != 0) bytes.reserve(st.size);
  std::string chunk(kIoChunk, '\0');
  for (;;) {
    const zip_int64_t n = zip_fread(zf.get(), chunk.data(), chunk.size());
    if (n < 0) {
      // libzip checks the CRC at the end of the entry: a flipped byte shows here.
      return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + name +
                                           "' is damaged: " + zip_file_strerror(zf.get()));
    }
    if (n == 0) break;
    bytes.append(chunk.data(), static_cast<size_t>(n));
    if (bytes.size() > limit) {
      return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + name +
                                           "' expands beyond what the package could hold");
    }
  }
  if ((st.valid & ZIP_STAT_SIZE) != 0 && bytes.size() != st.size) {
    return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + name + "' has " +
                                         std::to_string(bytes.size()) + " bytes, its header says " +
                                         std::to_string(st.size));
  }
  return bytes;
}

/// Parses checksums.json into path -> hex, checking format and version.
Result<std::map<std::string, std::string>> parse_checksums(const std::string& text,
                                                           const fs::path& file) {
  const std::string where = quoted(file) + ": " + std::string(kChecksumsEntry);
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return fail(ErrorCode::kCorrupt, where + " is not a JSON object");
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get<std::string>() != kFormatName) {
    return fail(ErrorCode::kCorrupt, quoted(file) +
                                         " is not a hone package: " + std::string(kChecksumsEntry) +
                                         " has no \"format\": \"hone-package\"");
  }
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) {
    return fail(ErrorCode::kCorrupt, where + " has no integer \"version\"");
  }
  const int64_t v = version->get<int64_t>();
  if (v > kFormatVersion) {
    return fail(ErrorCode::kUnsupported,
                quoted(file) + " is package format version " + std::to_string(v) +
                    ", newer than this build of hone reads (version " +
                    std::to_string(kFormatVersion) + "); update hone to load it");
  }
  if (v < 1)
    return fail(ErrorCode::kCorrupt, where + " has an invalid version " + std::to_string(v));
  const auto sums = doc.find("sha256");
  if (sums == doc.end() || !sums->is_object())
    return fail(ErrorCode::kCorrupt, where + " has no \"sha256\" object");
  std::map<std::string, std::string> out;
  for (const auto& [path, hex] : sums->items()) {
    if (!hex.is_string() || !hone::is_sha256_hex(hex.get<std::string>())) {
      return fail(ErrorCode::kCorrupt,
                  where + ": the sum for '" + path + "' is not a SHA-256 hex string");
    }
    out.emplace(path, hex.get<std::string>());
  }
  return out;
}

}  // namespace

Result<std::vector<Entry>> read_archive(const fs::path& file) {
  HONE_TRY(ArchiveContents c, read_archive_contents(file));
  return std::move(c.entries);
}

Result<ArchiveContents> read_archive_contents(const fs::path& file) {
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (status.type() == fs::file_type::not_found)
    return fail(ErrorCode::kNotFound, "package " + quoted(file) + " does not exist");
  if (ec) return fail(ErrorCode::kIo, "cannot read " + quoted(file) + ": " + ec.message());
  if (status.type() != fs::file_type::regular) {
    return fail(ErrorCode::kInvalidArgument,
                quoted(file) + " is not a regular file, so not a hone package");
  }
  const uint64_t file_size = fs::file_size(file, ec);
  if (ec) return fail(ErrorCode::kIo, "cannot read " + quoted(file) + ": " + ec.message());
  // libzip opens an empty file as an empty archive; for us it is a save that
  // never got its bytes.
  if (file_size == 0)
    return fail(ErrorCode::kCorrupt, quoted(file) + " is empty: not a hone package, or truncated");

  int zip_err = 0;
  ZipArchive za(zip_open(file.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &zip_err));
  if (!za) {
    ZipError err;
    zip_error_init_with_code(err.get(), zip_err);
    if (zip_err == ZIP_ER_OPEN || zip_err == ZIP_ER_READ) {
      return fail(ErrorCode::kIo, "cannot read " + quoted(file) + ": " + err.text());
    }
    if (zip_err == ZIP_ER_EXISTS) {  // what libzip's consistency check says of a repeated name
      return fail(ErrorCode::kCorrupt, quoted(file) + " holds the same entry name twice");
    }
    return fail(ErrorCode::kCorrupt,
                quoted(file) + " is not a hone package or is truncated: " + err.text());
  }
  const zip_int64_t count = zip_get_num_entries(za.get(), 0);
  const uint64_t limit = kMaxExpansion * file_size + (uint64_t{1} << 20);
  std::vector<Entry> entries;
  std::set<std::string> seen;
  std::optional<std::string> checksums, signature;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), 0);
    if (raw == nullptr) {
      return fail(ErrorCode::kCorrupt,
                  quoted(file) + ": cannot read the name of entry #" + std::to_string(i));
    }
    std::string name(raw);
    const std::string problem = entry_path_problem(name);
    if (!problem.empty()) {
      return fail(ErrorCode::kCorrupt, quoted(file) + " holds an entry with an unsafe path '" +
                                           name + "': it " + problem);
    }
    if (!seen.insert(name).second)
      return fail(ErrorCode::kCorrupt, quoted(file) + " holds entry '" + name + "' twice");
    HONE_TRY(std::string bytes,
             read_entry(za.get(), static_cast<zip_uint64_t>(i), name, file, limit));
    if (name == kChecksumsEntry) {
      checksums = std::move(bytes);
    } else if (name == kSignatureEntry) {
      signature = std::move(bytes);
    } else {
      entries.push_back({std::move(name), std::move(bytes)});
    }
  }
  if (!checksums) {
    return fail(ErrorCode::kCorrupt,
                quoted(file) + " is not a hone package: it has no " + std::string(kChecksumsEntry));
  }
  HONE_TRY(auto sums, parse_checksums(*checksums, file));
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  for (const Entry& e : entries) {
    const auto it = sums.find(e.path);
    if (it == sums.end()) {
      return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + e.path + "' is not listed in " +
                                           std::string(kChecksumsEntry) +
                                           " (added after the package was written)");
    }
    const std::string actual = sha256_hex(e.bytes);
    if (actual != it->second) {
      return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + e.path +
                                           "' fails its SHA-256 check (expected " + it->second +
                                           ", found " + actual + "); the package was altered");
    }
    sums.erase(it);
  }
  if (!sums.empty()) {
    return fail(ErrorCode::kCorrupt, quoted(file) + ": entry '" + sums.begin()->first +
                                         "' listed in " + std::string(kChecksumsEntry) +
                                         " is missing");
  }
  return ArchiveContents{std::move(entries), std::move(*checksums), std::move(signature)};
}

}  // namespace hone::package
