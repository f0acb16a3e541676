#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "hone/graph_spec.h"
#include "hone/npy.h"
#include "hone/onnx.h"
#include "spec_test_models.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using namespace spec_test;

fs::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d = fs::temp_directory_path() /
               ("hone_sample_io_" + std::to_string(::getpid()) + "_" + info->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

TEST(LoadSamples, OneFolderPerSampleSortedByName) {
  const fs::path dir = temp_dir();
  const Graph g = seq_model();
  // sample_b: batch 2 as .npy; sample_a: batch 1 with tokens as .pb, mask as .npy.
  fs::create_directories(dir / "sample_b");
  fs::create_directories(dir / "sample_a");
  ASSERT_TRUE(save_npy(iota({2, 3, 4}), dir / "sample_b/input_0.npy"));
  ASSERT_TRUE(save_npy(iota({2, 3}, 1), dir / "sample_b/input_1.npy"));
  ASSERT_TRUE(onnx::save_tensor_proto(iota({1, 5, 4}, 7), dir / "sample_a/input_0.pb", "tokens"));
  ASSERT_TRUE(save_npy(iota({1, 5}), dir / "sample_a/input_1.npy"));
  write_text(dir / "sample_a/output_0.pb", "not read");  // other files are ignored
  auto samples = load_samples(dir, g);
  ASSERT_TRUE(samples) << samples.error().to_string();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].describe(), "{mask: f32[1,5], tokens: f32[1,5,4]}");
  EXPECT_EQ((*samples)[0].find("tokens")->tensor().data<float>()[0], 7.0f);
  EXPECT_EQ((*samples)[1].describe(), "{mask: f32[2,3], tokens: f32[2,3,4]}");
  // They learn a spec like samples from code.
  auto spec = GraphSpec::learn(g, *samples);
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->bounds.at("batch"), (DimBounds{1, 2, 2}));
  fs::remove_all(dir);
}

TEST(LoadSamples, FilesDirectlyInTheFolderAreOneSample) {
  const fs::path dir = temp_dir();
  ASSERT_TRUE(save_npy(iota({1, 3, 4}), dir / "input_0.npy"));
  ASSERT_TRUE(save_npy(iota({1, 3}), dir / "input_1.npy"));
  auto samples = load_samples(dir, seq_model());
  ASSERT_TRUE(samples) << samples.error().to_string();
  ASSERT_EQ(samples->size(), 1u);
  fs::remove_all(dir);
}

TEST(LoadSamples, InputNamesThatAreNotPathKeysGiveAList) {
  const fs::path dir = temp_dir();
  GraphBuilder b("dotted");
  ValueId x = b.input("input.1", DType::kF32, Shape{Dim::symbol("batch"), 2});
  b.output(b.relu(x), "y");
  const Graph g = *std::move(b).build();
  ASSERT_TRUE(save_npy(iota({3, 2}), dir / "input_0.npy"));
  auto samples = load_samples(dir, g);
  ASSERT_TRUE(samples) << samples.error().to_string();
  EXPECT_EQ((*samples)[0].describe(), "[f32[3,2]]");
  auto spec = GraphSpec::learn(g, *samples);
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->inputs[0].path, "[0]");
  EXPECT_EQ(spec->inputs[0].name, "input.1");
  fs::remove_all(dir);
}

TEST(LoadSamples, BadFoldersAndFilesAreErrorsNamingTheFile) {
  const fs::path dir = temp_dir();
  const Graph g = seq_model();
  auto none = load_samples(dir / "nope", g);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), ErrorCode::kNotFound);

  auto empty = load_samples(dir, g);
  ASSERT_FALSE(empty);
  EXPECT_TRUE(contains(empty.error().message(), "no samples")) << empty.error().message();

  // A sample folder missing input_1.
  fs::create_directories(dir / "s0");
  ASSERT_TRUE(save_npy(iota({1, 3, 4}), dir / "s0/input_0.npy"));
  auto missing = load_samples(dir, g);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(contains(missing.error().to_string(), "input_1.npy")) << missing.error().to_string();
  EXPECT_TRUE(contains(missing.error().to_string(), "input 1 'mask'"));

  // A corrupt .npy.
  write_text(dir / "s0/input_1.npy", "this is not a NumPy file");
  auto corrupt = load_samples(dir, g);
  ASSERT_FALSE(corrupt);
  EXPECT_EQ(corrupt.error().code(), ErrorCode::kCorrupt);
  EXPECT_TRUE(contains(corrupt.error().to_string(), "s0/input_1.npy"))
      << corrupt.error().to_string();

  // A corrupt .pb (and the .npy removed, so the .pb is the only input 1).
  fs::remove(dir / "s0/input_1.npy");
  write_text(dir / "s0/input_1.pb", std::string("\xff\xff\xff\xff garbage", 13));
  auto bad_pb = load_samples(dir, g);
  ASSERT_FALSE(bad_pb);
  EXPECT_TRUE(contains(bad_pb.error().to_string(), "input_1.pb")) << bad_pb.error().to_string();

  // The same input twice.
  ASSERT_TRUE(save_npy(iota({1, 3}), dir / "s0/input_1.npy"));
  auto twice = load_samples(dir, g);
  ASSERT_FALSE(twice);
  EXPECT_TRUE(contains(twice.error().message(), "input 1 is given twice"))
      << twice.error().message();
  fs::remove(dir / "s0/input_1.pb");

  // An input index the model does not have.
  ASSERT_TRUE(save_npy(iota({1}), dir / "s0/input_2.npy"));
  auto beyond = load_samples(dir, g);
  ASSERT_FALSE(beyond);
  EXPECT_TRUE(contains(beyond.error().message(), "input_2.npy: the model has only 2 input(s)"))
      << beyond.error().message();
  fs::remove(dir / "s0/input_2.npy");
  EXPECT_TRUE(load_samples(dir, g));

  // Files and folders side by side.
  ASSERT_TRUE(save_npy(iota({1, 3, 4}), dir / "input_0.npy"));
  auto mixed = load_samples(dir, g);
  ASSERT_FALSE(mixed);
  EXPECT_TRUE(contains(mixed.error().message(), "both input_<i> files and sample folders"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hone
