// hone::save / hone::load on tuned models: bitwise-identical outputs after a
// round trip, and a clear error for tampered, truncated, foreign-machine and
// missing packages.
#include <unistd.h>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hone/package.h"
#include "package/archive.h"
#include "tune/tune_test_util.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using testing_tune::sample_of;
using testing_tune::tiny_mlp;

class Package : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = testing_tune::cpu_backend();
    if (backend_.empty()) GTEST_SKIP() << "this build has none of onednn, blas and aot";
    dir_ = fs::temp_directory_path() / ("hone-pkg-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    TuneOptions o;
    o.threads = 1;
    o.use_cache = false;
    o.profile.min_runs = 5;
    o.profile.window = 5;
    o.profile.max_runs = 10;
    auto t = tune(tiny_mlp(), {sample_of(1), sample_of(4)},
                  OneBackend(backend_, /*fallback_when_slower=*/false), o);
    ASSERT_TRUE(t) << t.error().to_string();
    tuned_.emplace(std::move(*t));
    file_ = dir_ / "tiny.hone";
    auto s = save(*tuned_, file_);
    ASSERT_TRUE(s) << s.error().to_string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_all(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
  }

  std::string backend_;  // the tuned model's (testing_tune::cpu_backend())
  fs::path dir_, file_;
  std::optional<TunedModel> tuned_;
};

TEST_F(Package, LoadGivesBitwiseIdenticalOutputsWithoutTuning) {
  auto loaded = load(file_);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->decision().backend, tuned_->decision().backend);
  EXPECT_EQ(loaded->decision().config_key, tuned_->decision().config_key);
  EXPECT_EQ(loaded->backend().state(), BackendState::kActive);
  EXPECT_EQ(loaded->report().json(), tuned_->report().json());
  for (int64_t batch : {1, 3, 4}) {
    auto a = tuned_->infer(sample_of(batch, 0.3f));
    auto b = loaded->infer(sample_of(batch, 0.3f));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->tensor().bitwise_equal(b->tensor())) << "batch " << batch;
  }
  // The same tuned model saves to the same bytes.
  ASSERT_TRUE(save(*tuned_, dir_ / "again.hone"));
  EXPECT_EQ(read_all(dir_ / "again.hone"), read_all(file_));
  auto text = describe_package(file_);
  ASSERT_TRUE(text) << text.error().to_string();
  EXPECT_NE(text->find("backend " + backend_), std::string::npos) << *text;
  EXPECT_NE(text->find("manifest.json"), std::string::npos) << *text;
}

TEST_F(Package, TamperedAndTruncatedPackagesAreRejected) {
  const std::string good = read_all(file_);
  // A flipped byte in the middle of the stored model.
  std::string tampered = good;
  const size_t at = good.find("model.onnx");
  ASSERT_NE(at, std::string::npos);
  tampered[at + 200] ^= 0x20;
  write_all(dir_ / "tampered.hone", tampered);
  auto t = load(dir_ / "tampered.hone");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code(), ErrorCode::kCorrupt) << t.error().to_string();
  for (size_t len : {size_t{0}, size_t{10}, good.size() / 2, good.size() - 5}) {
    write_all(dir_ / "short.hone", good.substr(0, len));
    auto r = load(dir_ / "short.hone");
    ASSERT_FALSE(r) << "truncated to " << len;
    EXPECT_NE(r.error().to_string().find("short.hone"), std::string::npos) << r.error().to_string();
  }
  auto missing = load(dir_ / "nope.hone");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST_F(Package, AnotherMachinesFingerprintIsAnErrorUnlessAllowed) {
  auto entries = package::read_archive(file_);
  ASSERT_TRUE(entries) << entries.error().to_string();
  for (auto& e : *entries)
    if (e.path == "manifest.json") {
      auto m = nlohmann::json::parse(e.bytes);
      m["fingerprint"]["cpu_model"] = "Imaginary CPU 9000";
      e.bytes = m.dump(2);
    }
  const fs::path foreign = dir_ / "foreign.hone";
  ASSERT_TRUE(package::write_archive(foreign, *entries));
  auto refused = load(foreign);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnsupportedHardware);
  EXPECT_NE(refused.error().message().find("Imaginary CPU 9000"), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("--allow-env-mismatch"), std::string::npos);
  LoadOptions allow;
  allow.allow_env_mismatch = true;
  auto rebuilt = load(foreign, allow);
  ASSERT_TRUE(rebuilt) << rebuilt.error().to_string();
  auto y = rebuilt->infer(sample_of(2));
  auto expected = tuned_->infer(sample_of(2));
  ASSERT_TRUE(y && expected);
  EXPECT_TRUE(y->tensor().bitwise_equal(expected->tensor()));
}

TEST_F(Package, ANewerFormatVersionNamesBothVersions) {
  auto entries = package::read_archive(file_);
  ASSERT_TRUE(entries);
  for (auto& e : *entries)
    if (e.path == "manifest.json") {
      auto m = nlohmann::json::parse(e.bytes);
      m["format_version"] = 7;
      e.bytes = m.dump(2);
    }
  ASSERT_TRUE(package::write_archive(dir_ / "v7.hone", *entries));
  auto r = load(dir_ / "v7.hone");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("version 7"), std::string::npos) << r.error().message();
}

TEST_F(Package, AFailedSaveLeavesTheOldPackageIntact) {
  const std::string before = read_all(file_);
  // A directory where the temporary file would go cannot take the new package.
  auto bad = save(*tuned_, dir_ / "no-such-dir" / "x.hone");
  ASSERT_FALSE(bad);
  EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));
  EXPECT_EQ(read_all(file_), before);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "no temporary files left behind";
}

TEST_F(Package, StoresOneSampleThatLoadsBackEqual) {
  EXPECT_EQ(load_package_samples(file_).error().code(), ErrorCode::kNotFound);
  auto flat = tuned_->spec().flatten(sample_of(4));
  ASSERT_TRUE(flat) << flat.error().to_string();
  SaveOptions options;
  options.sample_inputs = *flat;
  const fs::path with = dir_ / "with-sample.hone";
  ASSERT_TRUE(save(*tuned_, with, options));
  auto back = load_package_samples(with);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->size(), flat->size());
  for (size_t i = 0; i < flat->size(); ++i) {
    EXPECT_EQ((*back)[i].shape(), (*flat)[i].shape());
    for (int64_t k = 0; k < (*flat)[i].numel(); ++k)
      EXPECT_EQ(tensor_element_as_double((*back)[i], k), tensor_element_as_double((*flat)[i], k));
  }
  // The stored sample runs through the loaded package.
  auto loaded = load(with);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_TRUE(loaded->infer_flat(*back));
}

}  // namespace
}  // namespace hone
