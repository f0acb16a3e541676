// What GEMM steps absorb (gemm_fold.h), against the reference: Transposes of
// MatMul operands and results become strides, scalar Mul/Div become alpha,
// a bias Add the rows SGEMM accumulates into;
// Transposes that cannot fold still run as steps. The kernel plan shows which
// nodes folded, so each test also checks the fold happened (or did not).
#include <algorithm>
#include <filesystem>

#include "aot_test_util.h"
#include "hone/onnx.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::uniform;

size_t count_steps(const std::vector<std::string>& plan, const std::string& label_prefix) {
  return static_cast<size_t>(std::count_if(plan.begin(), plan.end(), [&](const std::string& s) {
    return s.rfind(label_prefix, 0) == 0;
  }));
}

std::string joined(const std::vector<std::string>& plan) {
  std::string out;
  for (const std::string& s : plan) out += s + "\n";
  return out;
}

TEST(AotGemmFold, TransformerMatchesReferenceAtSymbolicBatchAndSeq) {
  auto g = onnx::load_model(std::filesystem::path(HONE_SOURCE_DIR) / "models" / "transformer.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  const auto plan = be->describe_kernels();
  // The head split/merge Transposes are strides of the attention GEMMs and
  // the 1/sqrt(d) Div is their alpha: no Transpose step, no Div loop.
  EXPECT_EQ(count_steps(plan, "Transpose"), 0u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Transpose"), 2u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Div [gemm.f32.aot.dnnl_sgemm]"), 2u) << joined(plan);
  // Q, K and V: the bias rows are SGEMM's C (beta 1), no loop after.
  EXPECT_EQ(count_steps(plan, "MatMul+Add [gemm.f32.aot.dnnl_sgemm]"), 6u) << joined(plan);
  std::mt19937 rng(11);
  for (int64_t batch : {1, 3})
    for (int64_t seq : {1, 7, 32}) {
      const std::vector<Tensor> in{uniform(rng, {batch, seq, 128})};
      auto want = eval::Interpreter().run_tensors(*g, in);
      ASSERT_TRUE(want) << want.error().to_string();
      auto got = be->infer(in);
      ASSERT_TRUE(got) << got.error().to_string();
      ASSERT_EQ(got->size(), want->size());
      for (size_t i = 0; i < want->size(); ++i)
        EXPECT_TRUE(close((*got)[i], (*want)[i])) << "batch " << batch << " seq " << seq;
    }
}

TEST(AotGemmFold, HeadTransposesFoldIntoStridedBatchedMatMul) {
  std::mt19937 rng(12);
  GraphBuilder b("heads");
  const Dim batch = Dim::symbol("batch"), seq = Dim::symbol("seq");
  const ValueId q = b.input("q", DType::kF32, Shape{batch, seq, 3, 4});
  const ValueId k = b.input("k", DType::kF32, Shape{batch, 5, 3, 4});
  const ValueId v = b.input("v", DType::kF32, Shape{batch, 5, 3, 6});
  // [b,s,h,d] -> [b,h,s,d] (rows strided), [b,t,h,d] -> [b,h,d,t] (read transposed).
  const ValueId qh = b.transpose(q, {0, 2, 1, 3});
  const ValueId kt = b.transpose(k, {0, 2, 3, 1});
  ValueId s = b.matmul(qh, kt);                     // [b,h,s,5]
  s = b.mul(b.scalar_f32("scale", 0.5f), s);        // scalar first: still alpha
  s = b.div(s, b.scalar_f32("temperature", 1.5f));  // two scales in a row
  s = b.softmax(s);
  const ValueId ctx = b.matmul(s, b.transpose(v, {0, 2, 1, 3}));  // [b,h,s,6]
  // Written straight into [b,s,h,6], then an element-wise op over that layout.
  const ValueId merged = b.transpose(ctx, {0, 2, 1, 3});
  // The bias cannot start the rows: `merged` is kept as it is.
  b.output(b.relu(b.add(merged, b.constant("bias", uniform(rng, {6})))), "out");
  b.output(merged, "merged");  // the folded result is also a graph output
  // A vector times a transposed matrix: B read transposed, one GEMM.
  const ValueId vec = b.input("vec", DType::kF32, Shape{4});
  const ValueId mat = b.input("mat", DType::kF32, Shape{Dim::symbol("batch"), 4});
  b.output(b.matmul(vec, b.transpose(mat, {1, 0})), "vec_mat_t");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  const auto plan = be->describe_kernels();
  EXPECT_EQ(count_steps(plan, "Transpose"), 0u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Mul+Div [gemm.f32.aot.dnnl_sgemm]"), 1u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Transpose+Add+Relu [gemm.f32.aot.dnnl_sgemm+fused_eltwise]"),
            1u)
      << joined(plan);
  std::vector<std::vector<Tensor>> sets;
  for (int64_t n : {1, 3})
    for (int64_t sq : {1, 7})
      sets.push_back({uniform(rng, {n, sq, 3, 4}), uniform(rng, {n, 5, 3, 4}),
                      uniform(rng, {n, 5, 3, 6}), uniform(rng, {4}), uniform(rng, {n, 4})});
  expect_matches_reference(*g, sets);
}

TEST(AotGemmFold, TransposesThatCannotFoldStillRun) {
  std::mt19937 rng(13);
  GraphBuilder b("unfoldable");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 5});
  // The contiguous axis moves to the front: neither matrix axis has unit stride.
  const ValueId moved = b.transpose(x, {2, 0, 1});  // [5,b,4]
  b.output(b.matmul(moved, b.constant("w", uniform(rng, {4, 3}))), "moved_mm");
  // Read by a MatMul and also a graph output: must exist as a tensor.
  const ValueId shown = b.transpose(x, {0, 2, 1});  // [b,5,4]
  b.output(shown, "shown");
  b.output(b.matmul(shown, b.constant("w2", uniform(rng, {4, 2}))), "shown_mm");
  // Read by a MatMul and an element-wise op: must exist as a tensor.
  const ValueId shared = b.transpose(x, {0, 2, 1});
  b.output(b.matmul(shared, b.constant("w3", uniform(rng, {4, 2}))), "shared_mm");
  b.output(b.relu(shared), "shared_relu");
  // A MatMul result read by a Transpose and something else: no output fold.
  const ValueId y = b.matmul(x, b.constant("w4", uniform(rng, {5, 2})));  // [b,4,2]
  b.output(b.transpose(y, {0, 2, 1}), "y_t");
  b.output(b.sigmoid(y), "y_sig");
  // A Transpose of the result that moves its last axis: no output fold.
  b.output(b.transpose(b.matmul(x, b.constant("w5", uniform(rng, {5, 3}))), {0, 2, 1}), "last");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  const auto plan = be->describe_kernels();
  EXPECT_EQ(count_steps(plan, "Transpose"), 5u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Transpose"), 0u) << joined(plan);
  expect_matches_reference(*g, {{uniform(rng, {1, 4, 5})}, {uniform(rng, {3, 4, 5})}});
}

TEST(AotGemmFold, ScalarMulAndDivBecomeAlpha) {
  std::mt19937 rng(14);
  GraphBuilder b("alpha");
  const ValueId a = b.input("a", DType::kF32, Shape{Dim::symbol("batch"), 7});
  const ValueId w = b.constant("w", uniform(rng, {7, 5}));
  // Gemm with C and its own alpha/beta: the scale multiplies both terms.
  const ValueId gm =
      b.gemm(a, b.constant("wt", uniform(rng, {5, 7})), b.constant("c", uniform(rng, {5})),
             {.trans_a = false, .trans_b = true, .alpha = 0.5f, .beta = 2.0f});
  b.output(b.add(b.div(gm, b.scalar_f32("d", 4.0f)), b.constant("t", uniform(rng, {5}))),
           "gemm_div");
  // The scaled value is also an output of its own: stored from the GEMM's.
  const ValueId mm = b.mul(b.matmul(a, w), b.scalar_f32("m", -3.0f));
  b.output(mm, "mm_mul");
  b.output(b.tanh(mm), "mm_mul_tanh");
  // Not a scale: a tensor operand, a divisor made by the GEMM, zero.
  b.output(b.mul(b.matmul(a, w), b.constant("vec", uniform(rng, {5}))), "mm_vec");
  b.output(b.div(b.scalar_f32("num", 2.0f), b.matmul(a, w)), "scalar_over_mm");
  b.output(b.mul(b.matmul(a, w), b.scalar_f32("zero", 0.0f)), "mm_zero");
  b.output(b.div(b.matmul(a, w), b.scalar_f32("d2", 8.0f)), "mm_div");
  // A scale, then a bias ([1, N]) the rows start from.
  b.output(b.add(b.div(b.matmul(a, w), b.scalar_f32("d3", 3.0f)),
                 b.constant("bias", uniform(rng, {1, 5}))),
           "mm_div_bias");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  const auto plan = be->describe_kernels();
  EXPECT_EQ(count_steps(plan, "Gemm+Div+Add [gemm.f32.aot.dnnl_sgemm+fused_eltwise]"), 1u)
      << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Div [gemm.f32.aot.dnnl_sgemm]"), 1u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Div+Add [gemm.f32.aot.dnnl_sgemm]"), 1u) << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Mul+Tanh [gemm.f32.aot.dnnl_sgemm+fused_eltwise]"), 1u)
      << joined(plan);
  EXPECT_EQ(count_steps(plan, "MatMul+Mul [gemm.f32.aot.dnnl_sgemm+fused_eltwise]"), 2u)
      << joined(plan);  // by a tensor, by zero
  expect_matches_reference(*g, {{uniform(rng, {1, 7})}, {uniform(rng, {4, 7})}});
}

}  // namespace
}  // namespace hone::aot
