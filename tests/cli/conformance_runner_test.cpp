// The conformance runner: its comparison rules, test discovery, and the
// `hone conformance` command on real ONNX backend test folders.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "hone/conformance.h"
#include "hone/half.h"
#include "hone/onnx.h"
#include "hone/tensor.h"

namespace hone::cli::conformance {
namespace {

namespace fs = std::filesystem;
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::from<float>(std::move(shape), v);
}

TEST(ConformanceCompare, EqualAndWithinToleranceMatch) {
  EXPECT_FALSE(compare_tensors(f32({2}, {1, 2}), f32({2}, {1, 2}), {}));
  // |a-e| <= atol + rtol*|e|: 100.09 vs 100 is within 1e-3 * 100 = 0.1.
  EXPECT_FALSE(compare_tensors(f32({1}, {100.09f}), f32({1}, {100}), {1e-3, 0}));
  EXPECT_TRUE(compare_tensors(f32({1}, {100.2f}), f32({1}, {100}), {1e-3, 0}));
  // Near zero only atol helps.
  EXPECT_FALSE(compare_tensors(f32({1}, {5e-8f}), f32({1}, {0}), {1e-3, 1e-7}));
  EXPECT_TRUE(compare_tensors(f32({1}, {5e-7f}), f32({1}, {0}), {1e-3, 1e-7}));
}

TEST(ConformanceCompare, NanMatchesNanAndInfinitiesMustBeEqual) {
  EXPECT_FALSE(compare_tensors(f32({2}, {kNan, kInf}), f32({2}, {kNan, kInf}), {}));
  EXPECT_TRUE(compare_tensors(f32({1}, {1}), f32({1}, {kNan}), {}));
  EXPECT_TRUE(compare_tensors(f32({1}, {kNan}), f32({1}, {1}), {}));
  EXPECT_TRUE(compare_tensors(f32({1}, {-kInf}), f32({1}, {kInf}), {}));
  EXPECT_TRUE(compare_tensors(f32({1}, {1e30f}), f32({1}, {kInf}), {1, 1}));
  EXPECT_TRUE(compare_tensors(f32({1}, {kInf}), f32({1}, {1e30f}), {1, 1}));
}

TEST(ConformanceCompare, ReportsTheWorstElementWithItsIndex) {
  auto why = compare_tensors(f32({2, 3}, {0, 1, 2, 3, 4.5f, 5.01f}),
                             f32({2, 3}, {0, 1, 2, 3, 4, 5}), {1e-3, 0});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("2 of 6 elements differ"), std::string::npos) << *why;
  EXPECT_NE(why->find("worst at [1,1]: got 4.5, expected 4"), std::string::npos) << *why;
}

TEST(ConformanceCompare, DtypeAndShapeMustMatch) {
  auto d = compare_tensors(Tensor::from<double>({1}, {1.0}), f32({1}, {1}), {});
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("dtype f64, expected f32"), std::string::npos) << *d;
  auto s = compare_tensors(f32({1, 2}, {1, 2}), f32({2}, {1, 2}), {});
  ASSERT_TRUE(s);
  EXPECT_NE(s->find("shape [1,2], expected [2]"), std::string::npos) << *s;
}

TEST(ConformanceCompare, IntegersAndBoolsAreExact) {
  EXPECT_FALSE(compare_tensors(Tensor::from<int64_t>({2}, {5, -7}),
                               Tensor::from<int64_t>({2}, {5, -7}), {1, 1}));
  auto why = compare_tensors(Tensor::from<int64_t>({2}, {5, -6}),
                             Tensor::from<int64_t>({2}, {5, -7}), {1, 1});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("first at [1]: got -6, expected -7"), std::string::npos) << *why;
  EXPECT_TRUE(
      compare_tensors(Tensor::from<bool>({1}, {true}), Tensor::from<bool>({1}, {false}), {}));
  auto u = compare_tensors(Tensor::from<uint64_t>({1}, {~uint64_t{0}}),
                           Tensor::from<uint64_t>({1}, {1}), {});
  ASSERT_TRUE(u);
  EXPECT_NE(u->find("18446744073709551615"), std::string::npos) << *u;
}

TEST(ConformanceCompare, HalfComparesByValue) {
  auto h = [](std::vector<float> v) {
    Tensor t = Tensor::zeros(DType::kF16, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data<Half>()[i] = Half::from_float(v[i]);
    return t;
  };
  EXPECT_FALSE(compare_tensors(h({1.0f, 2.0f}), h({1.0f, 2.0f}), {}));
  EXPECT_TRUE(compare_tensors(h({1.0f, 2.5f}), h({1.0f, 2.0f}), {}));
}

TEST(ConformanceCompare, SequencesAndOptionals) {
  using RuntimeValue = RunValue;
  auto seq = [](std::vector<Tensor> ts) {
    return RuntimeValue::of_sequence(std::move(ts), DType::kF32);
  };
  EXPECT_FALSE(
      compare_values(seq({f32({1}, {1}), f32({1}, {2})}), seq({f32({1}, {1}), f32({1}, {2})}), {}));
  auto len = compare_values(seq({f32({1}, {1})}), seq({f32({1}, {1}), f32({1}, {2})}), {});
  ASSERT_TRUE(len);
  EXPECT_NE(len->find("sequence of 1 tensors, expected 2"), std::string::npos) << *len;
  auto elem =
      compare_values(seq({f32({1}, {1}), f32({1}, {3})}), seq({f32({1}, {1}), f32({1}, {2})}), {});
  ASSERT_TRUE(elem);
  EXPECT_NE(elem->find("sequence element 1"), std::string::npos) << *elem;
  RuntimeValue none;
  none.optional = true;
  EXPECT_FALSE(compare_values(none, none, {}));
  EXPECT_TRUE(compare_values(RuntimeValue::of(f32({1}, {1})), none, {}));
}

// --- discovery ------------------------------------------------------------------

class ConformanceDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("hone_conf_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void make_test(const fs::path& dir, int sets = 1) {
    fs::create_directories(dir);
    std::ofstream(dir / "model.onnx") << "x";
    for (int s = 0; s < sets; ++s)
      fs::create_directories(dir / ("test_data_set_" + std::to_string(s)));
  }
  fs::path root_;
};

TEST_F(ConformanceDirs, FindsTestsAtEveryDepthSorted) {
  make_test(root_ / "data/node/test_b");
  make_test(root_ / "data/node/test_a");
  make_test(root_ / "data/simple/test_c");
  fs::create_directories(root_ / "data/node/not_a_test");  // no model.onnx
  fs::create_directories(root_ / "data/node/no_sets");
  std::ofstream(root_ / "data/node/no_sets/model.onnx") << "x";

  auto all = discover_tests(root_ / "data");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].category + "/" + all[0].name, "node/test_a");
  EXPECT_EQ(all[1].category + "/" + all[1].name, "node/test_b");
  EXPECT_EQ(all[2].category + "/" + all[2].name, "simple/test_c");
  EXPECT_EQ(discover_tests(root_ / "data/node").size(), 2u);
  auto one = discover_tests(root_ / "data/simple/test_c");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].category, "simple");
}

TEST_F(ConformanceDirs, DataSetsSortNumerically) {
  make_test(root_ / "t", 12);
  auto sets = data_sets(root_ / "t");
  ASSERT_EQ(sets.size(), 12u);
  EXPECT_EQ(sets[2].filename(), "test_data_set_2");
  EXPECT_EQ(sets[11].filename(), "test_data_set_11");
}

// --- the command on real test data ------------------------------------------------

int run_hone(const std::string& args, std::string* out) {
  const fs::path o = fs::temp_directory_path() / ("hone_conf_out_" + std::to_string(::getpid()));
  const int st =
      std::system((std::string(HONE_CLI_PATH) + " " + args + " >" + o.string() + " 2>&1").c_str());
  std::ifstream in(o);
  *out = std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(o);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_F(ConformanceDirs, PassesARealTestAndFailsATamperedCopy) {
  // Transpose: a kernel the reference has had from early on.
  const fs::path src = fs::path(HONE_ONNX_TESTDATA) / "node/test_transpose_default";
  if (!fs::exists(src)) GTEST_SKIP() << "no ONNX test data at " << src;
  std::string out;
  ASSERT_EQ(run_hone("conformance " + src.string() + " --tsv " + (root_ / "r.tsv").string(), &out),
            0)
      << out;
  EXPECT_NE(out.find("\n1 passed, 0 failed, 0 skipped\n"), std::string::npos) << out;
  EXPECT_NE(out.find("node: 1 passed, 0 failed, 0 skipped"), std::string::npos) << out;
  std::ifstream tsv(root_ / "r.tsv");
  std::string header, row;
  std::getline(tsv, header);
  std::getline(tsv, row);
  EXPECT_EQ(header, "category\ttest\tstatus\treason");
  EXPECT_EQ(row, "node\ttest_transpose_default\tPASS\t");
  EXPECT_EQ(run_hone("conformance " + src.string() + " --min-pass 2", &out), 1) << out;

  // Same model and inputs, one expected value changed by +1.
  const fs::path bad = root_ / "cat/test_transpose_tampered";
  fs::create_directories(bad / "test_data_set_0");
  fs::copy_file(src / "model.onnx", bad / "model.onnx");
  fs::copy_file(src / "test_data_set_0/input_0.pb", bad / "test_data_set_0/input_0.pb");
  auto expected = hone::onnx::load_data_file((src / "test_data_set_0/output_0.pb").string());
  ASSERT_TRUE(expected) << expected.error().to_string();
  Tensor t = expected->tensor.clone();
  ASSERT_EQ(t.shape(), (std::vector<int64_t>{4, 3, 2}));
  t.data<float>()[5] += 1.0f;  // element [0,2,1]
  ASSERT_TRUE(hone::onnx::save_tensor_proto(t, (bad / "test_data_set_0/output_0.pb").string()));
  EXPECT_EQ(run_hone("conformance " + (root_ / "cat").string(), &out), 0) << out;
  EXPECT_NE(out.find("FAIL cat/test_transpose_tampered: output 0 'transposed': 1 of 24 elements "
                     "differ; worst at [0,2,1]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n0 passed, 1 failed, 0 skipped\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace hone::cli::conformance
