#include "package/archive.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "hone/sha256.h"
#include "package_test_util.h"

namespace hone::package {
namespace {

using namespace hone::package::testing;

// Bytes 0..255 repeated: every byte value, and no zip signature ("PK\3\4",
// "PK\5\6") can appear by accident, because 'P' is never followed by 'K'.
std::string all_bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i % 256);
  return s;
}

std::vector<Entry> sample_entries() {
  return {{"manifest.json", R"({"b": 1, "a": 2})"},
          {"model.onnx", all_bytes(5000)},
          {"backend/onednn/plan.bin", all_bytes(777)},
          {"backend/empty", ""},
          {"report.json", "{}"}};
}

std::vector<Entry> sorted(std::vector<Entry> e) {
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return e;
}

TEST(Archive, Sha256MatchesKnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Archive, RoundTripGivesTheEntriesBackSorted) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  auto back = read_archive(dir / "m.hone");
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, sorted(sample_entries()));
}

TEST(Archive, SameEntriesGiveSameBytesInAnyOrderAndTimeZone) {
  const fs::path dir = fresh_dir("archive");
  std::vector<Entry> reversed = sample_entries();
  std::reverse(reversed.begin(), reversed.end());
  const char* old_tz = std::getenv("TZ");
  const std::string saved_tz = old_tz != nullptr ? old_tz : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  ASSERT_TRUE(write_archive(dir / "a.hone", sample_entries()));
  ::setenv("TZ", "Asia/Kolkata", 1);
  ::tzset();
  ASSERT_TRUE(write_archive(dir / "b.hone", reversed));
  if (old_tz != nullptr) {
    ::setenv("TZ", saved_tz.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
  EXPECT_EQ(read_bytes(dir / "a.hone"), read_bytes(dir / "b.hone"));
}

TEST(Archive, StoresSortedUncompressedEntriesWithChecksums) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  int err = 0;
  zip_t* za = zip_open((dir / "m.hone").c_str(), ZIP_RDONLY, &err);
  ASSERT_NE(za, nullptr);
  std::vector<std::string> names;
  for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0); ++i) {
    zip_stat_t st;
    ASSERT_EQ(zip_stat_index(za, static_cast<zip_uint64_t>(i), 0, &st), 0);
    EXPECT_EQ(st.comp_method, ZIP_CM_STORE) << st.name;
    names.push_back(st.name);
  }
  zip_discard(za);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), sample_entries().size() + 1);

  std::string sums_text;
  for (const auto& [name, bytes] : read_foreign_zip(dir / "m.hone")) {
    if (name == "checksums.json") sums_text = bytes;
  }
  const auto sums = nlohmann::json::parse(sums_text);
  EXPECT_EQ(sums["format"], "hone-package");
  EXPECT_EQ(sums["version"], kFormatVersion);
  ASSERT_EQ(sums["sha256"].size(), sample_entries().size());
  for (const Entry& e : sample_entries()) EXPECT_EQ(sums["sha256"][e.path], sha256_hex(e.bytes));
}

TEST(Archive, WriteRejectsUnsafeEntryPathsNamingThem) {
  const fs::path dir = fresh_dir("archive");
  const std::vector<std::string> bad_paths = {
      "../x", "/etc/x", "a/../../x", "a\\b", "a//b",          "",
      "a/",   "./a",    "a/./b",     "a\nb", "checksums.json"};
  for (const std::string& bad : bad_paths) {
    auto r = write_archive(dir / "m.hone", {{"ok.txt", "1"}, {bad, "2"}});
    ASSERT_FALSE(r) << "accepted '" << bad << "'";
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(r.error().message().find("'" + bad + "'"), std::string::npos) << r.error().message();
  }
  auto dup = write_archive(dir / "m.hone", {{"a", "1"}, {"b", "2"}, {"a", "3"}});
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message().find("duplicate entry path 'a'"), std::string::npos);
  // Nothing was written, not even a temporary.
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(Archive, MissingFileIsNotFound) {
  auto r = read_archive(fresh_dir("archive") / "nope.hone");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.error().message().find("nope.hone"), std::string::npos);
}

TEST(Archive, MissingFolderOnWriteIsAnIoError) {
  auto r = write_archive(fresh_dir("archive") / "no" / "such" / "m.hone", sample_entries());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kIo);
  EXPECT_NE(r.error().message().find("does not exist"), std::string::npos);
}

TEST(Archive, EveryTruncationIsCorrupt) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  const std::string full = read_bytes(dir / "m.hone");
  std::vector<size_t> cuts = {0, 1, 4, 30, full.size() - 22, full.size() - 21, full.size() - 1};
  for (size_t cut = 0; cut < full.size(); cut += full.size() / 37) cuts.push_back(cut);
  for (size_t cut : cuts) {
    write_bytes(dir / "cut.hone", full.substr(0, cut));
    auto r = read_archive(dir / "cut.hone");
    ASSERT_FALSE(r) << "a " << cut << "-byte prefix of " << full.size() << " was accepted";
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << cut << ": " << r.error().to_string();
    EXPECT_NE(r.error().message().find("cut.hone"), std::string::npos) << r.error().message();
  }
}

TEST(Archive, GarbageAndFoldersAreNotPackages) {
  const fs::path dir = fresh_dir("archive");
  write_bytes(dir / "junk.hone", "this is not a zip file at all, just some text\n");
  auto junk = read_archive(dir / "junk.hone");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(junk.error().message().find("not a hone package"), std::string::npos);

  fs::create_directory(dir / "folder.hone");
  auto folder = read_archive(dir / "folder.hone");
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().code(), ErrorCode::kInvalidArgument);
}

TEST(Archive, FlippedByteInsideAnEntryNamesTheEntry) {
  const fs::path dir = fresh_dir("archive");
  std::vector<Entry> entries = sample_entries();
  entries.push_back({"weights.bin", std::string(4096, 'w')});
  ASSERT_TRUE(write_archive(dir / "m.hone", entries));
  std::string bytes = read_bytes(dir / "m.hone");
  const size_t at = bytes.find(std::string(4096, 'w'));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 2000] = 'x';
  write_bytes(dir / "m.hone", bytes);
  auto r = read_archive(dir / "m.hone");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("'weights.bin'"), std::string::npos) << r.error().message();
}

// A consistent zip (valid CRCs) whose content no longer matches its sums:
// what someone editing a package with a zip tool produces.
TEST(Archive, RewrittenEntryFailsItsSha256) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  auto entries = read_foreign_zip(dir / "m.hone");
  for (auto& [name, bytes] : entries) {
    if (name == "manifest.json") bytes = R"({"b": 1, "a": 3})";
  }
  write_foreign_zip(dir / "edited.hone", entries);
  auto r = read_archive(dir / "edited.hone");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("'manifest.json' fails its SHA-256"), std::string::npos)
      << r.error().message();
}

TEST(Archive, EntryAddedByAnotherWriterIsUnlisted) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  int err = 0;
  zip_t* za = zip_open((dir / "m.hone").c_str(), 0, &err);
  ASSERT_NE(za, nullptr);
  static const char kExtra[] = "surprise";
  ASSERT_GE(
      zip_file_add(za, "backend/extra.so", zip_source_buffer(za, kExtra, sizeof kExtra - 1, 0), 0),
      0);
  ASSERT_EQ(zip_close(za), 0);
  auto r = read_archive(dir / "m.hone");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("'backend/extra.so' is not listed"), std::string::npos)
      << r.error().message();
}

TEST(Archive, EntryRemovedByAnotherWriterIsMissing) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  int err = 0;
  zip_t* za = zip_open((dir / "m.hone").c_str(), 0, &err);
  ASSERT_NE(za, nullptr);
  ASSERT_EQ(zip_delete(za, static_cast<zip_uint64_t>(zip_name_locate(za, "report.json", 0))), 0);
  ASSERT_EQ(zip_close(za), 0);
  auto r = read_archive(dir / "m.hone");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("'report.json' listed in checksums.json is missing"),
            std::string::npos)
      << r.error().message();
}

std::string checksums_for(const std::vector<std::pair<std::string, std::string>>& entries,
                          int version) {
  nlohmann::json sums = nlohmann::json::object();
  for (const auto& [name, bytes] : entries) sums[name] = sha256_hex(bytes);
  return nlohmann::json{{"format", "hone-package"}, {"version", version}, {"sha256", sums}}.dump();
}

TEST(Archive, EscapingPathsInAHandMadeZipAreRejectedOnRead) {
  const fs::path dir = fresh_dir("archive");
  for (const std::string& bad :
       std::vector<std::string>{"../x", "/etc/x", "backend/../../x", "a\\..\\x"}) {
    // Listed in checksums.json with the right sum: only the path is wrong.
    std::vector<std::pair<std::string, std::string>> entries = {{bad, "evil"}, {"ok", "fine"}};
    entries.emplace_back("checksums.json", checksums_for(entries, kFormatVersion));
    write_foreign_zip(dir / "evil.hone", entries);
    auto r = read_archive(dir / "evil.hone");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << bad;
    EXPECT_NE(r.error().message().find("unsafe path '" + bad + "'"), std::string::npos)
        << r.error().message();
  }
}

TEST(Archive, NewerFormatVersionNamesBothVersions) {
  const fs::path dir = fresh_dir("archive");
  std::vector<std::pair<std::string, std::string>> entries = {{"manifest.json", "{}"}};
  entries.emplace_back("checksums.json", checksums_for(entries, kFormatVersion + 1));
  write_foreign_zip(dir / "future.hone", entries);
  auto r = read_archive(dir / "future.hone");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  const std::string& msg = r.error().message();
  EXPECT_NE(msg.find("version " + std::to_string(kFormatVersion + 1)), std::string::npos) << msg;
  EXPECT_NE(msg.find("(version " + std::to_string(kFormatVersion) + ")"), std::string::npos) << msg;
}

TEST(Archive, ZipWithoutHoneChecksumsIsNotAPackage) {
  const fs::path dir = fresh_dir("archive");
  write_foreign_zip(dir / "plain.zip", {{"readme.txt", "hello"}});
  auto plain = read_archive(dir / "plain.zip");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().message().find("no checksums.json"), std::string::npos);

  write_foreign_zip(dir / "other.zip",
                    {{"checksums.json", R"({"format": "other", "version": 1, "sha256": {}})"}});
  auto other = read_archive(dir / "other.zip");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message().find("not a hone package"), std::string::npos);

  // libzip will not write a duplicate name, so rename the second entry in the
  // raw bytes (names are not covered by the CRC).
  write_foreign_zip(dir / "dup.zip", {{"dup_1", "1"}, {"dup_2", "2"}});
  std::string raw = read_bytes(dir / "dup.zip");
  for (size_t at; (at = raw.find("dup_2")) != std::string::npos;) raw[at + 4] = '1';
  write_bytes(dir / "dup.zip", raw);
  auto dup = read_archive(dir / "dup.zip");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(dup.error().message().find("twice"), std::string::npos) << dup.error().message();
}

// A writer that fails part-way (here: the file-size limit) leaves the old
// package as it was and no temporary behind.
TEST(Archive, FailedWriteLeavesOldPackageAndNoTemporary) {
  const fs::path dir = fresh_dir("archive");
  ASSERT_TRUE(write_archive(dir / "m.hone", sample_entries()));
  const std::string old_bytes = read_bytes(dir / "m.hone");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
    const rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    auto r = write_archive(dir / "m.hone", {{"big.bin", std::string(1 << 20, 'b')}});
    ::_exit(!r && r.error().code() == ErrorCode::kIo ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the limited write did not fail with kIo";
  EXPECT_EQ(read_bytes(dir / "m.hone"), old_bytes);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(Archive, EntriesRoundTripThroughAFolder) {
  const fs::path dir = fresh_dir("archive");
  const std::vector<Entry> entries = sample_entries();
  ASSERT_TRUE(extract_entries(entries, "backend", dir / "state"));
  EXPECT_EQ(read_bytes(dir / "state/onednn/plan.bin"), all_bytes(777));
  EXPECT_TRUE(fs::exists(dir / "state/empty"));
  EXPECT_FALSE(fs::exists(dir / "state/model.onnx"));

  auto back = collect_entries(dir / "state", "backend/");
  ASSERT_TRUE(back) << back.error().to_string();
  const std::vector<Entry> expect = {{"backend/empty", ""},
                                     {"backend/onednn/plan.bin", all_bytes(777)}};
  EXPECT_EQ(*back, expect);
}

TEST(Archive, FolderHelpersRefuseEscapes) {
  const fs::path dir = fresh_dir("archive");
  auto bad_prefix = extract_entries(sample_entries(), "../up", dir / "out");
  ASSERT_FALSE(bad_prefix);
  EXPECT_EQ(bad_prefix.error().code(), ErrorCode::kInvalidArgument);

  auto bad_entry = extract_entries({{"backend/../../x", "evil"}}, "backend/", dir / "out");
  ASSERT_FALSE(bad_entry);
  EXPECT_NE(bad_entry.error().message().find("'backend/../../x'"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "x"));

  // A link already inside the target folder must not carry writes outside it.
  fs::create_directories(dir / "out");
  fs::create_directories(dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / "out" / "link");
  auto through_link = extract_entries({{"link/x", "evil"}}, "", dir / "out");
  ASSERT_FALSE(through_link);
  EXPECT_FALSE(fs::exists(dir / "elsewhere" / "x"));

  // collect refuses links rather than storing what they point at.
  auto collected = collect_entries(dir / "out", "backend");
  ASSERT_FALSE(collected);
  EXPECT_EQ(collected.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(collected.error().message().find("link"), std::string::npos);

  auto missing = collect_entries(dir / "nowhere", "");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace hone::package
