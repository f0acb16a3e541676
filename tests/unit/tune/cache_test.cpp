#include "tune/cache.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

namespace hone {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d =
      fs::temp_directory_path() / ("hone_cache_" + std::to_string(::getpid()) + "_" + info->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

CacheKey key(int i, const std::string& backend = "onednn") {
  return {"graph" + std::to_string(i), backend, "cfg.a", "x:1x3x224x224", "fp0123456789abcd"};
}

std::vector<fs::path> aside_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".corrupt-") != std::string::npos) {
      out.push_back(e.path());
    }
  }
  return out;
}

/// The cache still works after whatever happened to it: stores, finds, verifies.
void expect_usable(TuningCache& cache) {
  ASSERT_TRUE(cache.store(key(42), R"({"p50_ms": 1.5})"));
  auto hit = cache.lookup(key(42));
  ASSERT_TRUE(hit) << hit.error().to_string();
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ(**hit, R"({"p50_ms": 1.5})");
  auto ok = cache.check();
  EXPECT_TRUE(ok) << ok.error().to_string();
}

TEST(TuningCache, StoresAndFindsByEveryKeyField) {
  const fs::path dir = fresh_dir();
  auto cache = TuningCache::open(dir / "sub" / "tuning.db");
  ASSERT_TRUE(cache) << cache.error().to_string();
  EXPECT_TRUE(fs::exists(dir / "sub" / "tuning.db"));

  auto miss = cache->lookup(key(1));
  ASSERT_TRUE(miss);
  EXPECT_FALSE(miss->has_value());

  ASSERT_TRUE(cache->store(key(1), R"({"p50_ms": 2.0})"));
  auto hit = cache->lookup(key(1));
  ASSERT_TRUE(hit && hit->has_value());
  EXPECT_EQ(**hit, R"({"p50_ms": 2.0})");

  // Each field is part of the key.
  CacheKey k = key(1);
  for (std::string CacheKey::*field :
       {&CacheKey::graph_hash, &CacheKey::backend, &CacheKey::config_key, &CacheKey::shapes,
        &CacheKey::fingerprint}) {
    CacheKey changed = k;
    changed.*field += "'changed";
    auto r = cache->lookup(changed);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->has_value()) << changed.*field;
  }

  ASSERT_TRUE(cache->store(key(1), R"({"p50_ms": 1.0})"));  // replaces
  EXPECT_EQ(**cache->lookup(key(1)), R"({"p50_ms": 1.0})");
  EXPECT_EQ(*cache->size(), 1);
  ASSERT_TRUE(cache->clear());
  EXPECT_EQ(*cache->size(), 0);
}

TEST(TuningCache, SurvivesReopening) {
  const fs::path dir = fresh_dir();
  {
    auto cache = TuningCache::open(dir / "tuning.db");
    ASSERT_TRUE(cache);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(cache->store(key(i), std::to_string(i)));
  }
  auto cache = TuningCache::open(dir / "tuning.db");
  ASSERT_TRUE(cache);
  EXPECT_EQ(*cache->size(), 20);
  EXPECT_EQ(**cache->lookup(key(7)), "7");
  EXPECT_TRUE(aside_files(dir).empty());
}

TEST(TuningCache, RejectsEmptyKeyFieldsAndNonJsonFigures) {
  auto cache = TuningCache::open(fresh_dir() / "tuning.db");
  ASSERT_TRUE(cache);
  CacheKey k = key(1);
  k.backend.clear();
  auto r = cache->store(k, "{}");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("backend"), std::string::npos);
  auto bad = cache->store(key(1), "{not json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

TEST(TuningCache, GarbageFileIsMovedAsideAndRebuilt) {
  const fs::path dir = fresh_dir();
  std::string garbage(8192, '\0');
  std::mt19937 rng(7);
  for (char& c : garbage) c = static_cast<char>(rng());
  std::ofstream(dir / "tuning.db", std::ios::binary).write(garbage.data(), garbage.size());

  auto cache = TuningCache::open(dir / "tuning.db");
  ASSERT_TRUE(cache) << cache.error().to_string();
  auto miss = cache->lookup(key(1));
  ASSERT_TRUE(miss);
  EXPECT_FALSE(miss->has_value());
  expect_usable(*cache);

  const auto aside = aside_files(dir);
  ASSERT_EQ(aside.size(), 1u);
  std::ifstream in(aside[0], std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), garbage)
      << "the damaged file should be kept for inspection, unchanged";
}

TEST(TuningCache, TruncatedDatabaseIsRebuilt) {
  const fs::path dir = fresh_dir();
  const fs::path file = dir / "tuning.db";
  {
    auto cache = TuningCache::open(file);
    ASSERT_TRUE(cache);
    const std::string figures = R"({"samples": ")" + std::string(300, 's') + R"("})";
    for (int i = 0; i < 2000; ++i) ASSERT_TRUE(cache->store(key(i), figures));
  }  // the last connection checkpoints the WAL into the file
  ASSERT_FALSE(fs::exists(dir / "tuning.db-wal"));
  const auto full = fs::file_size(file);
  ASSERT_GT(full, 200000u);
  fs::resize_file(file, full / 2);

  auto cache = TuningCache::open(file);
  ASSERT_TRUE(cache) << cache.error().to_string();
  EXPECT_EQ(aside_files(dir).size(), 1u);
  EXPECT_EQ(*cache->size(), 0);
  expect_usable(*cache);
  fs::remove_all(dir);
}

// Damage that appears while a handle is open (another program overwrote the
// file): the query that meets it rebuilds the database and reports a miss.
TEST(TuningCache, CorruptionFoundMidUseIsRebuiltNotAnError) {
  const fs::path dir = fresh_dir();
  const fs::path file = dir / "tuning.db";
  // More rows than SQLite's default 2 MB page cache, so lookups go to the file.
  constexpr int kRows = 12000;
  {
    auto cache = TuningCache::open(file);
    ASSERT_TRUE(cache);
    const std::string figures = R"({"samples": ")" + std::string(400, 's') + R"("})";
    for (int i = 0; i < kRows; ++i) ASSERT_TRUE(cache->store(key(i), figures));
  }
  auto cache = TuningCache::open(file);
  ASSERT_TRUE(cache);
  ASSERT_TRUE(aside_files(dir).empty());
  {
    // Everything after the first two pages becomes noise.
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    std::mt19937 rng(3);
    std::string noise(fs::file_size(file) - 8192, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    f.seekp(8192);
    f.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  for (int i = 0; i < kRows; i += 97) {
    auto r = cache->lookup(key(i));
    ASSERT_TRUE(r) << "row " << i << ": " << r.error().to_string();
    if (!aside_files(dir).empty()) break;
  }
  EXPECT_EQ(aside_files(dir).size(), 1u) << "no lookup met the damage";
  expect_usable(*cache);
  EXPECT_EQ(*cache->size(), 1);
  fs::remove_all(dir);  // megabytes; the small tests leave theirs for inspection
}

TEST(TuningCache, ForeignDatabaseIsMovedAside) {
  const fs::path dir = fresh_dir();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "tuning.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE other(x); INSERT INTO other VALUES (1);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  auto cache = TuningCache::open(dir / "tuning.db");
  ASSERT_TRUE(cache) << cache.error().to_string();
  EXPECT_EQ(aside_files(dir).size(), 1u);
  expect_usable(*cache);
}

TEST(TuningCache, UncreatablePathIsAnIoError) {
  const fs::path dir = fresh_dir();
  std::ofstream(dir / "plain_file") << "x";
  auto cache = TuningCache::open(dir / "plain_file" / "sub" / "tuning.db");
  ASSERT_FALSE(cache);
  EXPECT_EQ(cache.error().code(), ErrorCode::kIo);
  EXPECT_NE(cache.error().message().find("plain_file"), std::string::npos);
  EXPECT_TRUE(fs::is_regular_file(dir / "plain_file"));
}

TEST(TuningCache, DefaultPathFollowsTheEnvironment) {
  const char* names[] = {"HONE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::optional<std::string>> saved;
  for (const char* n : names) {
    const char* v = std::getenv(n);
    saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
  }
  ::setenv("HOME", "/home/u", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HONE_CACHE_DIR", "/hc", 1);
  EXPECT_EQ(TuningCache::default_path(), fs::path("/hc/tuning.db"));
  ::unsetenv("HONE_CACHE_DIR");
  EXPECT_EQ(TuningCache::default_path(), fs::path("/xdg/hone/tuning.db"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the XDG spec says
  EXPECT_EQ(TuningCache::default_path(), fs::path("/home/u/.cache/hone/tuning.db"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(TuningCache::default_path(), fs::path("/home/u/.cache/hone/tuning.db"));
  for (size_t i = 0; i < saved.size(); ++i) {
    if (saved[i]) {
      ::setenv(names[i], saved[i]->c_str(), 1);
    } else {
      ::unsetenv(names[i]);
    }
  }
}

// Several processes create, write and read one database at once, each
// reopening it now and then (the last close of a WAL database checkpoints,
// which races with opens).
TEST(TuningCache, ConcurrentProcessesShareOneDatabase) {
  const fs::path file = fresh_dir() / "tuning.db";
  constexpr int kChildren = 6;
  constexpr int kRows = 120;
  constexpr int kShared = 10;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Exit codes say what went wrong: 2 open, 3 store, 4 lookup, 5 shared lookup.
      std::optional<TuningCache> cache;
      for (int i = 0; i < kRows; ++i) {
        if (i % 40 == 0) {
          cache.reset();
          auto opened = TuningCache::open(file);
          if (!opened) ::_exit(2);
          cache.emplace(std::move(*opened));
        }
        const CacheKey own = key(c * 1000 + i);
        const std::string figures =
            "{\"child\": " + std::to_string(c) + ", \"i\": " + std::to_string(i) + "}";
        if (!cache->store(own, figures)) ::_exit(3);
        if (!cache->store(key(i % kShared, "shared"), figures)) ::_exit(3);
        auto mine = cache->lookup(own);
        if (!mine || !mine->has_value() || **mine != figures) ::_exit(4);
        auto shared = cache->lookup(key(i % kShared, "shared"));
        if (!shared || !shared->has_value() || (*shared)->find("\"child\": ") != 1) ::_exit(5);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << pid << " failed";
  }
  auto cache = TuningCache::open(file);
  ASSERT_TRUE(cache) << cache.error().to_string();
  EXPECT_EQ(*cache->size(), kChildren * kRows + kShared);
  auto ok = cache->check();
  EXPECT_TRUE(ok) << ok.error().to_string();
  EXPECT_TRUE(aside_files(file.parent_path()).empty()) << "a healthy database was moved aside";
  for (int c = 0; c < kChildren; ++c) {
    auto row = cache->lookup(key(c * 1000 + kRows - 1));
    ASSERT_TRUE(row && row->has_value());
    EXPECT_EQ(**row,
              "{\"child\": " + std::to_string(c) + ", \"i\": " + std::to_string(kRows - 1) + "}");
  }
}

}  // namespace
}  // namespace hone
