// Helpers shared by the package tests: a fresh folder per test, whole-file
// reads and writes, and a second zip writer (libzip used directly) to make
// archives hone's writer never would.
#pragma once

#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace hone::package::testing {

namespace fs = std::filesystem;

/// An empty folder named after the running test, removed and recreated.
inline fs::path fresh_dir(const std::string& tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d = fs::temp_directory_path() / ("hone_" + tag + "_" + std::to_string(::getpid()) + "_" +
                                            info->test_suite_name() + "_" + info->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Writes a zip with exactly these (name, bytes) entries, in this order,
/// through libzip's own file writer: the "other zip tool" of the tests.
inline void write_foreign_zip(const fs::path& file,
                              const std::vector<std::pair<std::string, std::string>>& entries) {
  int err = 0;
  zip_t* za = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr) << "zip_open error " << err;
  for (const auto& [name, bytes] : entries) {
    zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    ASSERT_NE(src, nullptr);
    ASSERT_GE(zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8), 0)
        << name << ": " << zip_strerror(za);
  }
  ASSERT_EQ(zip_close(za), 0) << zip_strerror(za);
}

/// Every (name, bytes) of a zip, read with libzip directly (no verification).
inline std::vector<std::pair<std::string, std::string>> read_foreign_zip(const fs::path& file) {
  std::vector<std::pair<std::string, std::string>> out;
  int err = 0;
  zip_t* za = zip_open(file.c_str(), ZIP_RDONLY, &err);
  EXPECT_NE(za, nullptr) << "zip_open error " << err;
  if (za == nullptr) return out;
  for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(za, static_cast<zip_uint64_t>(i), 0, &st);
    std::string bytes(st.size, '\0');
    zip_file_t* f = zip_fopen_index(za, static_cast<zip_uint64_t>(i), 0);
    EXPECT_NE(f, nullptr);
    if (f == nullptr) continue;
    EXPECT_EQ(zip_fread(f, bytes.data(), bytes.size()), static_cast<zip_int64_t>(bytes.size()));
    zip_fclose(f);
    out.emplace_back(st.name, std::move(bytes));
  }
  zip_discard(za);
  return out;
}

}  // namespace hone::package::testing
