// hone::export_triton: the model folder it writes is a Triton model
// repository entry whose config.pbtxt parses with protobuf's text format
// against the fields of Triton's ModelConfig (triton_config.proto), with
// the tuned model's names, types, dims and batch bounds; and it never
// overwrites a model.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "hone/onnx.h"
#include "hone/triton.h"
#include "triton_config.pb.h"
#include "tune/tune_test_util.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
namespace tc = hone_test::triton;
using testing_tune::sample_of;
using testing_tune::tiny_mlp;

class Triton : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hone-triton-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static TunedModel tuned(std::vector<Sample> samples) {
    TuneOptions o;
    o.threads = 1;
    o.use_cache = false;
    o.profile.min_runs = 3;
    o.profile.window = 3;
    o.profile.max_runs = 5;
    auto t = tune(tiny_mlp(), samples, OneBackend("reference", false), o);
    EXPECT_TRUE(t) << t.error().to_string();
    return std::move(*t);
  }

  static tc::ModelConfig parse(const fs::path& file) {
    std::ifstream in(file);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    tc::ModelConfig config;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
    return config;
  }

  fs::path dir_;
};

TEST_F(Triton, BatchedModelGetsMaxBatchFromBoundsAndDynamicBatching) {
  TunedModel m = tuned({sample_of(1), sample_of(4)});
  auto rec = export_triton(m, dir_ / "repo", {.name = "tiny_mlp"});
  ASSERT_TRUE(rec) << rec.error().to_string();
  const fs::path model_dir = dir_ / "repo" / "tiny_mlp";
  EXPECT_EQ(rec->model_dir, model_dir);
  tc::ModelConfig c = parse(model_dir / "config.pbtxt");
  EXPECT_EQ(c.name(), "tiny_mlp");
  EXPECT_EQ(c.platform(), "onnxruntime_onnx");
  EXPECT_EQ(c.backend(), "onnxruntime");
  EXPECT_EQ(c.max_batch_size(), 4);  // the batch dim's max bound, from the samples
  EXPECT_EQ(rec->max_batch_size, 4);
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_EQ(c.input(0).name(), "x");
  EXPECT_EQ(c.input(0).data_type(), tc::TYPE_FP32);
  ASSERT_EQ(c.input(0).dims_size(), 1);  // the batch axis is Triton's, not in dims
  EXPECT_EQ(c.input(0).dims(0), 4);
  ASSERT_EQ(c.output_size(), 1);
  EXPECT_EQ(c.output(0).name(), "y");
  EXPECT_EQ(c.output(0).data_type(), tc::TYPE_FP32);
  ASSERT_EQ(c.output(0).dims_size(), 1);
  // GraphBuilder leaves y's feature axis unnamed and unsized: dynamic for Triton.
  EXPECT_EQ(c.output(0).dims(0), -1);
  EXPECT_TRUE(c.has_dynamic_batching());
  ASSERT_EQ(c.instance_group_size(), 1);
  EXPECT_EQ(c.instance_group(0).kind(), tc::ModelInstanceGroup::KIND_CPU);
  EXPECT_EQ(c.instance_group(0).count(), 1);

  // Version 1 holds the tuned graph as ONNX, with the names config.pbtxt uses.
  auto g = onnx::load_model(model_dir / "1" / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->value(g->inputs()[0]).name, "x");
  EXPECT_EQ(g->value(g->outputs()[0]).name, "y");
  // Nothing temporary is left in the repository.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "repo")) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "tiny_mlp");
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(Triton, ModelWithoutBatchAxisIsNotBatched) {
  TunedModel m = tuned({sample_of(2)});  // one batch size: no batch axis learned
  auto rec = export_triton(m, dir_ / "repo", {.name = "fixed"});
  ASSERT_TRUE(rec) << rec.error().to_string();
  tc::ModelConfig c = parse(dir_ / "repo" / "fixed" / "config.pbtxt");
  EXPECT_EQ(c.max_batch_size(), 0);
  EXPECT_FALSE(c.has_dynamic_batching());
  ASSERT_EQ(c.input(0).dims_size(), 2);  // every axis, the first included
  EXPECT_EQ(c.input(0).dims(1), 4);
}

TEST_F(Triton, RefusesToOverwriteAModelAndBadNames) {
  TunedModel m = tuned({sample_of(1), sample_of(4)});
  ASSERT_TRUE(export_triton(m, dir_ / "repo", {.name = "m"}));
  const fs::path config = dir_ / "repo" / "m" / "config.pbtxt";
  const auto before = fs::last_write_time(config);
  auto again = export_triton(m, dir_ / "repo", {.name = "m"});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(again.error().message().find("already exists"), std::string::npos);
  EXPECT_EQ(fs::last_write_time(config), before);
  // Another model beside it is fine; the graph's name is the default.
  auto other = export_triton(m, dir_ / "repo");
  ASSERT_TRUE(other) << other.error().to_string();
  EXPECT_EQ(other->name, "tiny");
  auto bad = export_triton(m, dir_ / "repo", {.name = "../escape"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  auto nowhere = export_triton(m, dir_ / "no" / "such" / "repo");
  ASSERT_FALSE(nowhere);
  EXPECT_EQ(nowhere.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace hone
