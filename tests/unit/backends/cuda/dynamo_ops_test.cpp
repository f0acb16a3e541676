// The nodes PyTorch's dynamo exporter writes that cuda ran on the reference
// before (tests/zoo/README.md): CLIP's pooled token (ArgMax of i64 ids, a
// Concat of i64 index tuples, GatherND), DGCNN's kNN (TopK, GatherND with
// batch_dims 1, an i64 Add of row offsets), DLRM's id column (a Gather of
// i64 data by a constant index), swin v2's relative-position table (a Gather of more
// than 64 constant indices), DCGAN's and U-Net's ConvTranspose. The support decisions run without a
// device; the comparison with the reference skips without one, naming why.
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::i64s;
using testing_util::uniform;
using Ints = std::vector<int64_t>;

Graph dynamo_graph() {
  std::mt19937 rng(5);
  GraphBuilder b("dynamo_ops", 18);
  // CLIP: the hidden state at each row's largest id.
  ValueId h = b.input("h", DType::kF32, Shape{2, 5, 8});
  ValueId ids = b.input("ids", DType::kI64, Shape{2, 5});
  ValueId rows = b.op("Range", {i64s(b, {}, {0}), i64s(b, {}, {2}), i64s(b, {}, {1})});
  ValueId at = b.op("ArgMax", {ids}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  ValueId tuples = b.concat(
      {b.op("Unsqueeze", {rows, i64s(b, {1}, {1})}), b.op("Unsqueeze", {at, i64s(b, {1}, {1})})},
      1);
  b.output(b.op("GatherND", {b.relu(h), tuples}), "pooled");
  // DLRM: a sparse feature's ids, one column of the i64 input picked by a
  // constant index, then its embedding rows; and two columns kept as i64.
  ValueId column = b.op("Gather", {ids, i64s(b, {}, {2})}, {{"axis", int64_t{1}}});
  b.output(b.op("Gather", {b.constant("emb", uniform(rng, {10, 3})), column}), "embedded");
  b.output(b.op("Gather", {ids, i64s(b, {2}, {4, 0})}, {{"axis", int64_t{1}}}), "columns");
  // DGCNN: each point's 3 nearest features.
  ValueId p = b.input("p", DType::kF32, Shape{2, 9, 3});
  ValueId d = b.matmul(p, b.transpose(p, {0, 2, 1}));
  auto topk = b.op_n("TopK", {d, i64s(b, {1}, {3})}, 2, {{"axis", int64_t{-1}}});
  ValueId nb = b.op("GatherND", {p, b.op("Unsqueeze", {topk[1], i64s(b, {1}, {-1})})},
                    {{"batch_dims", int64_t{1}}});
  b.output(nb, "neighbours");
  b.output(topk[0], "nearness");
  // Its flat neighbour indices: each cloud's row offset added to TopK's i64 output.
  b.output(b.add(topk[1], i64s(b, {2, 1, 1}, {0, 9})), "flat");
  // swin v2: a bias table read through 100 constant indices.
  Ints many;
  for (int64_t i = 0; i < 100; ++i) many.push_back((i * 7) % 15 - 3);
  ValueId table = b.input("table", DType::kF32, Shape{15, 4});
  b.output(b.op("Gather", {b.relu(table), i64s(b, {10, 10}, many)}), "bias");
  // DCGAN: kernel 4, stride 2, pad 1, with a bias.
  ValueId z = b.input("z", DType::kF32, Shape{1, 6, 3, 3});
  b.output(b.op("ConvTranspose",
                {b.relu(z), b.constant("up_w", uniform(rng, {6, 4, 4, 4})),
                 b.constant("up_bias", uniform(rng, {4}))},
                {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
           "up");
  return *std::move(b).build();
}

TEST(CudaDynamoOps, ProposedWithoutADevice) {
  const Graph g = dynamo_graph();
  CudaBackend be;
  auto part = be.plan(g);
  ASSERT_TRUE(part) << part.error().to_string();
  std::string why;
  for (const auto& [id, reason] : part->fallbacks) why += reason + "\n";
  EXPECT_TRUE(part->fallbacks.empty()) << why;
}

TEST(CudaDynamoOps, MatchTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(12);
  const Graph g = dynamo_graph();
  expect_matches_reference(
      g, {uniform(rng, {2, 5, 8}, -1.0f, 1.0f),
          Tensor::from<int64_t>({2, 5}, {3, 9, 9, 1, 0, 7, 2, 8, 8, 1}),
          uniform(rng, {2, 9, 3}, -1.0f, 1.0f), uniform(rng, {15, 4}, -1.0f, 1.0f),
          uniform(rng, {1, 6, 3, 3}, -1.0f, 1.0f)});
}

}  // namespace
}  // namespace hone::cuda
