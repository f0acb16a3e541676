// lower_einsum: batched matrix products become Transpose/Reshape/MatMul with
// the reference's answer; the equations of other forms stay Einsum.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/optimize.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

struct EinsumCase {
  std::string equation;
  Shape a, b;
  std::vector<int64_t> da, db;  // the dims fed
  bool lowered = true;
};

Graph einsum_graph(const EinsumCase& c) {
  GraphBuilder b("einsum");
  ValueId x = b.input("a", DType::kF32, c.a);
  ValueId y = b.input("b", DType::kF32, c.b);
  b.output(b.op("Einsum", {x, y}, {{"equation", c.equation}}), "y");
  return *std::move(b).build();
}

class PassesEinsum : public ::testing::TestWithParam<EinsumCase> {};

TEST_P(PassesEinsum, MatchesTheReference) {
  const EinsumCase& c = GetParam();
  Graph g = einsum_graph(c);
  PassStats st;
  auto out = lower_einsum(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(count_op(*out, "Einsum"), c.lowered ? 0u : 1u) << c.equation;
  EXPECT_EQ(count_op(*out, "MatMul"), c.lowered ? 1u : 0u) << c.equation;
  EXPECT_EQ(st.rewritten, c.lowered ? 1 : 0);
  std::mt19937 rng(5);
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, c.da), uniform(rng, c.db)})) << c.equation;
}

Dim sym(const char* s) {
  return Dim::symbol(s);
}

INSTANTIATE_TEST_SUITE_P(
    Equations, PassesEinsum,
    ::testing::Values(
        // maxvit_t's window attention: q k^T, then the weights times v.
        EinsumCase{"bghid,bghjd->bghij",
                   Shape{sym("B"), 2, 2, 5, 4},
                   Shape{sym("B"), 2, 2, 6, 4},
                   {2, 2, 2, 5, 4},
                   {2, 2, 2, 6, 4}},
        EinsumCase{"bghij,bghjd->bghid",
                   Shape{1, 2, 2, 5, 6},
                   Shape{1, 2, 2, 6, 4},
                   {1, 2, 2, 5, 6},
                   {1, 2, 2, 6, 4}},
        EinsumCase{"ij,jk->ik", Shape{3, 4}, Shape{4, 5}, {3, 4}, {4, 5}},
        EinsumCase{"ij,jk", Shape{3, 4}, Shape{4, 5}, {3, 4}, {4, 5}},  // implicit
        EinsumCase{"kj,ji", Shape{3, 4}, Shape{4, 5}, {3, 4}, {4, 5}},  // implicit, sorted: ik
        EinsumCase{"ab,cb->ac", Shape{3, 4}, Shape{5, 4}, {3, 4}, {5, 4}},
        EinsumCase{"bik,bkj->bji", Shape{2, 3, 4}, Shape{2, 4, 5}, {2, 3, 4}, {2, 4, 5}},
        EinsumCase{
            "bhqd,hbkd->bkhq", Shape{2, 3, 4, 5}, Shape{3, 2, 6, 5}, {2, 3, 4, 5}, {3, 2, 6, 5}},
        // Groups of several labels: merged by a Reshape, one unknown allowed.
        EinsumCase{
            "abkl,klcd->acbd", Shape{2, 3, 4, 5}, Shape{4, 5, 3, 2}, {2, 3, 4, 5}, {4, 5, 3, 2}},
        EinsumCase{"bmk,kn->bmn", Shape{sym("batch"), 3, 4}, Shape{4, 5}, {2, 3, 4}, {4, 5}},
        EinsumCase{"nsd,td->nts", Shape{2, sym("seq"), 4}, Shape{3, 4}, {2, 5, 4}, {3, 4}},
        // An empty group is a dim of 1: outer product, vector results, a dot.
        EinsumCase{"i,j->ij", Shape{3}, Shape{4}, {3}, {4}},
        EinsumCase{"ij,j->i", Shape{3, 4}, Shape{4}, {3, 4}, {4}},
        EinsumCase{"j,ij->i", Shape{4}, Shape{3, 4}, {4}, {3, 4}},
        EinsumCase{"ijk,ijk->", Shape{2, 3, 4}, Shape{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
        EinsumCase{"bi,bi->b", Shape{3, 4}, Shape{3, 4}, {3, 4}, {3, 4}},
        // Not a matrix product: left to the reference.
        EinsumCase{"ii,ij->j", Shape{3, 3}, Shape{3, 4}, {3, 3}, {3, 4}, false},   // diagonal
        EinsumCase{"ij,kl->ik", Shape{3, 4}, Shape{5, 6}, {3, 4}, {5, 6}, false},  // sums
        EinsumCase{
            "...ij,...jk->...ik", Shape{2, 3, 4}, Shape{2, 4, 5}, {2, 3, 4}, {2, 4, 5}, false},
        // Two unknown dims in one merged group: the product's Reshape back
        // to a dim per label takes its target from the operands' Shapes.
        EinsumCase{"abk,kn->abn", Shape{sym("p"), sym("q"), 4}, Shape{4, 5}, {3, 2, 4}, {4, 5}},
        // XLNet's projections in [seq, batch] layout, in and out.
        EinsumCase{"ibh,hnd->ibnd",
                   Shape{sym("seq"), sym("batch"), 8},
                   Shape{8, 2, 3},
                   {5, 2, 8},
                   {8, 2, 3}},
        // The contracted dim unknown in the activation, known in the weight.
        EinsumCase{"ibh,hnd->ibnd",
                   Shape{sym("seq"), sym("batch"), sym("h")},
                   Shape{8, 2, 3},
                   {5, 2, 8},
                   {8, 2, 3}},
        EinsumCase{"ibnd,hnd->ibh",
                   Shape{sym("seq"), sym("batch"), 2, 3},
                   Shape{8, 2, 3},
                   {5, 2, 2, 3},
                   {8, 2, 3}},
        // Two unknown dims in one group of an operand: no target splits them.
        EinsumCase{"abcd,cdn->abn",
                   Shape{sym("p"), sym("q"), sym("r"), sym("s")},
                   Shape{sym("r"), sym("s"), 5},
                   {3, 2, 2, 2},
                   {2, 2, 5},
                   false}));

TEST(PassesEinsum, OneOperandPermutedIsATranspose) {
  // XLNet's mask `einsum("ijbn->bnij", mask)`; a sum over a label stays Einsum.
  for (const auto& [equation, lowered] : std::vector<std::pair<std::string, bool>>{
           {"ijbn->bnij", true}, {"ij->ij", true}, {"ijbn->bni", false}, {"ii->i", false}}) {
    GraphBuilder b("einsum1");
    const bool square = equation == "ii->i";
    const Shape shape = equation.size() > 8 ? Shape{sym("i"), 3, sym("b"), 2}
                                            : (square ? Shape{3, 3} : Shape{3, 4});
    ValueId x = b.input("x", DType::kF32, shape);
    b.output(b.op("Einsum", {x}, {{"equation", equation}}), "y");
    Graph g = *std::move(b).build();
    PassStats st;
    auto out = lower_einsum(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, "Einsum"), lowered ? 0u : 1u) << equation;
    EXPECT_EQ(count_op(*out, "Transpose"), lowered && equation != "ij->ij" ? 1u : 0u) << equation;
    std::mt19937 rng(7);
    const std::vector<int64_t> fed =
        equation.size() > 8 ? std::vector<int64_t>{4, 3, 2, 2}
                            : (square ? std::vector<int64_t>{3, 3} : std::vector<int64_t>{3, 4});
    EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, fed)})) << equation;
  }
}

TEST(PassesEinsumPipeline, OptimizeLowersItAndTransposesCancel) {
  Graph g = einsum_graph({"bik,bkj->bij", Shape{2, 3, 4}, Shape{2, 4, 5}, {}, {}});
  Graph kept = g;
  auto r = optimize(g);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(count_op(g, "Einsum"), 0u);
  EXPECT_EQ(count_op(g, "MatMul"), 1u);
  EXPECT_EQ(count_op(g, "Transpose"), 0u);
  std::mt19937 rng(6);
  EXPECT_TRUE(same_outputs(kept, g, {uniform(rng, {2, 3, 4}), uniform(rng, {2, 4, 5})}));
}

}  // namespace
}  // namespace hone
