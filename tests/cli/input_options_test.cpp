// `hone run`, `hone bench` and `hone tune` fed what a real model needs:
// --shape NAME=AxBxC, --fill NAME=VALUE, --range [NAME=]LO:HI and --inputs DIR,
// with errors that name the input. The ONNX backend test data gives models
// whose output shows the input (Identity) and integer inputs (Equal).
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

namespace hone_cli_test {
namespace {

std::string node_test(const std::string& name) {
  return std::string(HONE_ONNX_TESTDATA) + "/node/" + name;
}

class CliInputs : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    if (!fs::exists(node_test("test_identity/model.onnx")))
      GTEST_SKIP() << "ONNX backend test data is not installed (libonnx-testdata)";
  }
};

TEST_F(CliInputs, RangeBoundsEveryRandomValue) {
  const Ran r = hone("run " + node_test("test_identity/model.onnx") + " --range x=5:6");
  ASSERT_EQ(r.code, 0) << r.err;
  // Identity: the output's min and max are the input's.
  const auto line = r.out.substr(r.out.find("output 0"));
  const double lo = std::stod(line.substr(line.find(" min ") + 5));
  const double hi = std::stod(line.substr(line.find(" max ") + 5));
  EXPECT_GE(lo, 5.0) << r.out;
  EXPECT_LT(hi, 6.0) << r.out;
}

TEST_F(CliInputs, UnnamedRangeAppliesToEveryFloatInput) {
  const Ran r =
      hone("run " + node_test("test_identity/model.onnx") + " --range -3:-2 --random-inputs 4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" max -2"), std::string::npos) << r.out;
}

TEST_F(CliInputs, FillSetsEveryElementWhateverTheSeed) {
  const std::string m = node_test("test_equal/model.onnx");
  const Ran same = hone("run " + m + " --fill x=3 --fill y=3 --random-inputs 1");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("min 1 max 1"), std::string::npos) << same.out;  // all equal
  const Ran diff = hone("run " + m + " --fill x=3 --fill y=4 --random-inputs 2");
  ASSERT_EQ(diff.code, 0) << diff.err;
  EXPECT_NE(diff.out.find("min 0 max 0"), std::string::npos) << diff.out;  // none equal
}

TEST_F(CliInputs, IntegerRangeIsInclusive) {
  // x and y drawn from [7, 7] are equal everywhere; from [0, 9] they are not.
  const std::string m = node_test("test_equal/model.onnx");
  const Ran one = hone("run " + m + " --range x=7:8 --fill y=7 --random-inputs 3");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("min 0 max 1"), std::string::npos) << one.out;  // 7s and 8s
}

TEST_F(CliInputs, ShapeBindsSymbolicDimsForEveryInputSharingThem) {
  const Ran r = hone("run " + model("transformer.onnx") + " --shape x=2x5x128 --outputs " +
                     (dir_ / "out").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("input 0 'x': f32[2,5,128]"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(dir_ / "out" / "outputs.json"));
  EXPECT_EQ(j[0]["shape"], nlohmann::json({2, 5, 128}));
}

TEST_F(CliInputs, ErrorsNameTheInput) {
  const std::string m = node_test("test_identity/model.onnx");
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--shape y=1x1x2x2", "--shape y: the model has no input 'y' (its inputs: 'x')"},
      {"--shape x=1x2x2", "input 'x' has rank 4 (f32[1,1,2,2]), not 3"},
      {"--shape x=1x3x2x2", "dim 1 of input 'x' is 1 in the model (f32[1,1,2,2]), not 3"},
      {"--shape x=1xax2x2", "--shape x=1xax2x2: 'a' is not a non-negative dim"},
      {"--fill x=abc", "--fill x: 'abc' is not a finite number"},
      {"--range x=2:1", "--range x: LO (2) must be below HI (1)"},
      {"--range x=0", "--range x: '0' is not LO:HI"},
      {"--fill x=1 --range x=0:1", "input 'x' has both --fill and --range"},
      {"--fill nope", "--fill 'nope' is not NAME=VALUE"},
  };
  for (const auto& c : cases) {
    const Ran r = hone("run " + m + " " + c.args);
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  const Ran i = hone("run " + node_test("test_equal/model.onnx") + " --fill x=1.5");
  EXPECT_EQ(i.code, 2);
  EXPECT_NE(i.err.find("--fill x: input 'x' is i32; 1.5 is not an integer"), std::string::npos)
      << i.err;
  const Ran both =
      hone("run " + m + " --inputs " + node_test("test_identity/test_data_set_0") + " --fill x=1");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("not with --inputs DIR"), std::string::npos) << both.err;
}

TEST_F(CliInputs, BenchRunsOnInputFiles) {
  const std::string t = node_test("test_relu");
  const Ran r = hone("bench " + t + "/model.onnx --inputs " + t +
                     "/test_data_set_0 --iters 3 --warmup 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["inputs"], t + "/test_data_set_0");
  EXPECT_EQ(j["iters"], 3);
  const Ran missing = hone("bench " + t + "/model.onnx --inputs " + dir_.string() + " --iters 1");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("while reading input 0 'x'"), std::string::npos) << missing.err;
  const Ran mixed = hone("bench " + t + "/model.onnx --inputs " + t + "/test_data_set_0 --batch 2");
  EXPECT_EQ(mixed.code, 2) << mixed.err;
}

TEST_F(CliInputs, BenchTakesShapeAndRefusesAConflictingBatch) {
  const Ran r =
      hone("bench " + model("transformer.onnx") + " --shape x=3x4x128 --iters 2 --warmup 0 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["batch"], 3);
  const Ran c =
      hone("bench " + model("transformer.onnx") + " --shape x=3x4x128 --batch 2 --iters 1");
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.err.find("--batch 2: input 'x' has its leading dim 'batch' set to 3 already"),
            std::string::npos)
      << c.err;
}

TEST_F(CliInputs, TuneSamplesTakeTheShapeButVaryTheBatch) {
  const Ran r = hone("tune " + model("transformer.onnx") + " --dry-run --shape x=1x7x128");
  ASSERT_EQ(r.code, 0) << r.err;
  // seq fixed at 7 by --shape; batch still spans the default batch sizes.
  EXPECT_NE(r.out.find("seq                  min 7  opt 7  max 7"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batch                min 1  opt 8  max 8"), std::string::npos) << r.out;
  const Ran bad = hone("tune " + model("transformer.onnx") + " --dry-run --shape x=1x7");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("input 'x' has rank 3"), std::string::npos) << bad.err;
}

TEST_F(CliInputs, TuneTakesOneSampleFromInputFiles) {
  const std::string t = node_test("test_relu");
  const Ran r = hone("tune " + t + "/model.onnx --dry-run --inputs " + t + "/test_data_set_0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("input 'x'  f32[3,4,5]"), std::string::npos) << r.out;
  const Ran both =
      hone("tune " + t + "/model.onnx --dry-run --inputs " + t + "/test_data_set_0 --fill x=1");
  EXPECT_EQ(both.code, 2);
}

TEST_F(CliInputs, BenchOfAPackageRunsOnTheSampleItWasTunedWith) {
  const std::string t = node_test("test_relu");
  const std::string pkg = (dir_ / "relu.hone").string();
  const Ran tuned = hone("tune " + t + "/model.onnx -o " + pkg + " --inputs " + t +
                         "/test_data_set_0 --backends reference --no-cache");
  ASSERT_EQ(tuned.code, 0) << tuned.err;
  const Ran r = hone("bench " + pkg + " --iters 2 --warmup 0 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["inputs"], "package sample");
  // Described inputs win over the stored sample.
  const Ran f = hone("bench " + pkg + " --fill x=1 --iters 2 --warmup 0 --json");
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["inputs"], "random");
}

}  // namespace
}  // namespace hone_cli_test
