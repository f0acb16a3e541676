// Integer and bool tensors made at run time on cuda (issue 30): the
// data-movement ops over i64, i32 and bool data, comparisons of i64, logic
// with a bool known when planned beside one made at run time, Where with
// i64 branches, Cast between f32, f16, bf16, i64, i32 and bool, and Clip of
// i64 or by bounds made at run time: the patterns of the zoo's mistral,
// alibi, deberta, moe, gcn and sentence_embedder exports. The support
// decisions run without a device; the comparisons with the reference skip
// without one, naming why.
#include <limits>

#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::fallbacks_of;
using testing_util::i64s;
using testing_util::plan_text;
using testing_util::uniform;
using Ints = std::vector<int64_t>;

ValueId cast(GraphBuilder& b, ValueId x, int64_t to) {
  return b.op("Cast", {x}, {{"to", to}});
}

/// A text model's mask arithmetic and an MoE router's index shuffling over
/// `mask` [B, S] (i64 0/1) and `ids` [B, S] (i64).
Graph movement_graph() {
  GraphBuilder b("int_movement", 17);
  ValueId mask = b.input("mask", DType::kI64, Shape{Dim::symbol("batch"), 6});
  ValueId ids = b.input("ids", DType::kI64, Shape{Dim::symbol("batch"), 6});
  // Moved i64 data: a Transpose, a strided Slice, an Expand of the mask to
  // [B, 2, 6, 6] (sentence_embedder's attention mask), a Split into parts
  // of 2 and 4 along the last axis (a copy: rows outside it), an Unsqueeze view.
  b.output(b.transpose(ids, {1, 0}), "ids_t");
  b.output(b.op("Slice", {ids, i64s(b, {1}, {5}), i64s(b, {1}, {-7}), i64s(b, {1}, {1}),
                          i64s(b, {1}, {-2})}),
           "ids_reversed_odd");
  ValueId m4 = b.op("Unsqueeze", {mask, i64s(b, {2}, {1, 2})});
  b.output(b.op("Expand", {m4, i64s(b, {4}, {1, 2, 6, 1})}), "mask_expanded");
  auto parts = b.op_n("Split", {ids, i64s(b, {2}, {2, 4})}, 2, {{"axis", int64_t{1}}});
  b.output(parts[0], "ids_head");
  b.output(parts[1], "ids_tail");
  // Comparisons of i64 (broadcast against a constant and each other).
  ValueId pad = b.op("Equal", {mask, i64s(b, {}, {0})});
  b.output(b.op("Less", {ids, i64s(b, {1, 6}, {0, 1, 2, 3, 4, 5})}), "less");
  ValueId first = b.op("Slice", {ids, i64s(b, {1}, {0}), i64s(b, {1}, {1}), i64s(b, {1}, {1})});
  b.output(b.op("GreaterOrEqual", {ids, first}), "ge_first_column");
  // Where with i64 branches (mistral's position ids: 1 where padded).
  ValueId pos = b.op("Where", {pad, i64s(b, {}, {1}), b.op("Mul", {ids, mask})});
  b.output(pos, "positions");
  // Moved bool data: a Transpose and a Gather of one row by a constant index.
  b.output(b.transpose(pad, {1, 0}), "pad_t");
  b.output(b.op("Gather", {pad, i64s(b, {}, {-1})}, {{"axis", int64_t{1}}}), "pad_last");
  // A Concat of bools (copies of their bytes) and an Identity of i64 (a view).
  b.output(b.concat({pad, pad}, 1), "pads");
  b.output(b.op("Identity", {b.op("Mul", {ids, mask})}), "ids_times_mask");
  // Logic with a bool known when planned (a constant causal row) beside run-time bools.
  const std::vector<bool> row = {true, true, false, true, false, false};
  ValueId known = b.constant("", Tensor::from<bool>({6}, row));
  b.output(b.op("And", {known, b.op("Not", {pad})}), "and_known");
  b.output(b.op("Or", {pad, known}), "or_known");
  b.output(b.op("Xor", {known, pad}), "xor_known");
  // Where with a known condition and run-time i64 branches.
  b.output(b.op("Where", {known, ids, pos}), "where_known");
  return *std::move(b).build();
}

/// Casts between every pair cuda makes, and Clip of i64 and by run-time bounds.
Graph cast_graph() {
  GraphBuilder b("int_cast", 17);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n")});
  ValueId ids = b.input("ids", DType::kI64, Shape{Dim::symbol("n")});
  ValueId lo = b.input("lo", DType::kI64, Shape{});
  ValueId hi = b.input("hi", DType::kF32, Shape{1});
  constexpr int64_t kF32 = 1, kI32 = 6, kI64 = 7, kBool = 9, kF16 = 10, kBF16 = 16;
  b.output(cast(b, x, kI64), "f32_to_i64");  // truncation toward zero
  b.output(cast(b, x, kI32), "f32_to_i32");  // saturating
  b.output(cast(b, x, kBool), "f32_to_bool");
  // (Clipped first: an f16 overflow's infinity would not compare as close.)
  ValueId finite = b.op("Clip", {x, b.scalar_f32("", -60000.0f), b.scalar_f32("", 65519.0f)});
  b.output(cast(b, cast(b, finite, kF16), kF32), "f32_f16_f32");
  b.output(cast(b, cast(b, x, kBF16), kF32), "f32_bf16_f32");
  b.output(cast(b, cast(b, x, kBF16), kI64), "bf16_to_i64");
  b.output(cast(b, cast(b, ids, kI32), kI64), "i64_i32_i64");  // wraps
  b.output(cast(b, ids, kF32), "i64_to_f32");
  b.output(cast(b, cast(b, ids, kBool), kF32), "i64_bool_f32");
  b.output(cast(b, cast(b, x, kBool), kI64), "bool_to_i64");
  b.output(cast(b, cast(b, cast(b, ids, kI32), kF16), kF32), "i32_f16_f32");
  b.output(cast(b, cast(b, ids, kBool), kBool), "bool_to_bool");
  // Clip of i64 by constant bounds (deberta's relative positions), of i64 by
  // a run-time lower bound only, and of f32 by a run-time upper bound only.
  b.output(b.op("Clip", {ids, i64s(b, {}, {-3}), i64s(b, {}, {4})}), "clip_const");
  b.output(b.op("Clip", {ids, lo}), "clip_runtime_lo");
  b.output(b.op("Clip", {x, -1, hi}), "clip_runtime_hi");  // no min
  return *std::move(b).build();
}

TEST(CudaIntOps, ProposedWithoutADevice) {
  EXPECT_EQ(fallbacks_of(movement_graph()), "");
  EXPECT_EQ(fallbacks_of(cast_graph()), "");
}

TEST(CudaIntOps, IdentityOfI64AndBoolAndConcatOfBoolAreProposed) {
  // An If branch's output is often the Identity of a value made at run time
  // (fasterrcnn's If_1497_out, i64): a view, as a Reshape of that dtype is.
  GraphBuilder b("int_identity", 17);
  ValueId ids = b.input("ids", DType::kI64, Shape{4});
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId pad = b.op("Less", {x, b.constant("", Tensor::scalar<float>(0.0f))});
  b.output(b.op("Identity", {ids}), "ids_same");
  b.output(b.op("Identity", {pad}), "pad_same");
  // A Concat of bools made at run time: strided copies of their bytes.
  b.output(b.concat({pad, pad}, 0), "pads");
  const Graph g = *std::move(b).build();
  const std::vector<NodeSupport> p = CudaBackend().propose(g);
  ASSERT_EQ(p.size(), 4u);  // Less, Identity, Identity, Concat
  for (const NodeSupport& s : p) EXPECT_TRUE(s.supported) << s.reason;
}

TEST(CudaIntOps, RefusalsSayWhy) {
  GraphBuilder b("int_refused", 17);
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId pad = b.op("Less", {x, b.constant("", Tensor::scalar<float>(0.0f))});
  const std::vector<bool> fixed = {true, false, true, false};
  // A Where of bool branches, one known when planned (0/1 floats on the device).
  b.output(b.op("Where", {pad, pad, b.constant("", Tensor::from<bool>({4}, fixed))}), "w");
  b.output(cast(b, x, 11), "f64");  // no cuda kernel makes f64
  const Graph g = *std::move(b).build();
  CudaBackend be;
  const std::vector<NodeSupport> p = be.propose(g);
  ASSERT_EQ(p.size(), 3u);  // Less, Where, Cast
  EXPECT_TRUE(p[0].supported) << p[0].reason;
  EXPECT_FALSE(p[1].supported);
  EXPECT_NE(p[1].reason.find("a bool known when planned"), std::string::npos) << p[1].reason;
  EXPECT_FALSE(p[2].supported);
  EXPECT_NE(p[2].reason.find("Cast to f64"), std::string::npos) << p[2].reason;
}

TEST(CudaIntOps, MovementMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  const Graph g = movement_graph();
  for (int64_t batch : {1, 2}) {
    Ints mask, ids;
    for (int64_t i = 0; i < batch * 6; ++i) {
      mask.push_back(i % 6 < 4 + batch % 2 ? 1 : 0);
      ids.push_back((i * 7) % 11 - 3);  // negatives and ties
    }
    auto be = expect_matches_reference(
        g, {Tensor::from<int64_t>({batch, 6}, mask), Tensor::from<int64_t>({batch, 6}, ids)});
    const std::string plan = plan_text(*be);
    if (batch == 1) {
      // [1, 6] to [6, 1]: the same bytes, a view of either dtype.
      EXPECT_NE(plan.find("transpose.view"), std::string::npos) << plan;
    } else {
      EXPECT_NE(plan.find("transpose.i64.cuda.strided_copy"), std::string::npos) << plan;
      EXPECT_NE(plan.find("transpose.bool.cuda.strided_copy"), std::string::npos) << plan;
    }
    EXPECT_NE(plan.find("equal.i64.cuda.bool"), std::string::npos) << plan;
    EXPECT_NE(plan.find("where.i64.cuda.bool_condition"), std::string::npos) << plan;
    EXPECT_NE(plan.find("where.i64.cuda.known_condition"), std::string::npos) << plan;
    EXPECT_NE(plan.find("and.bool.cuda.known_operand"), std::string::npos) << plan;
    EXPECT_NE(plan.find("concat.bool.cuda.strided_copy"), std::string::npos) << plan;
  }
}

TEST(CudaIntOps, CastsAndClipsMatchTheReference) {
  HONE_REQUIRE_CUDA();
  const Graph g = cast_graph();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {-2.7f, 2.7f,   -0.5f, 0.0f, -0.0f,
                                1e10f, -1e10f, nan,   3.0f, 65519.0f};
  const Ints ids = {-5, 0, 1, 7, 4294967297LL, -4294967296LL, 3, -3, 100, 1};
  const auto n = static_cast<int64_t>(x.size());
  auto be =
      expect_matches_reference(g, {Tensor::from<float>({n}, x), Tensor::from<int64_t>({n}, ids),
                                   Tensor::scalar<int64_t>(-1), Tensor::from<float>({1}, {2.5f})});
  const std::string plan = plan_text(*be);
  EXPECT_NE(plan.find("cast.i64.cuda.from_f32"), std::string::npos) << plan;
  EXPECT_NE(plan.find("cast.f16.cuda.from_f32"), std::string::npos) << plan;
  EXPECT_NE(plan.find("clip.i64.cuda"), std::string::npos) << plan;
  EXPECT_NE(plan.find("clip.f32.cuda"), std::string::npos) << plan;
}

}  // namespace
}  // namespace hone::cuda
