// ops::SymInt: integers computed from dims keep one canonical form, so a dim
// computed twice the same way is the same dim, and derived dims read back.
#include "ops/sym_int.h"

#include <gtest/gtest.h>

namespace hone::ops {
namespace {

SymInt sym(const char* name) {
  return SymInt::of(Dim::symbol(name));
}

TEST(SymInt, EqualValuesHaveOneName) {
  const SymInt seq = sym("seq"), batch = sym("batch");
  EXPECT_EQ((seq * 4).dim(), Dim::symbol("(4*seq)"));
  EXPECT_EQ((SymInt(4) * seq).to_string(), (seq * 4).to_string());
  EXPECT_EQ((batch * seq * 2).to_string(), (seq * 2 * batch).to_string());
  EXPECT_EQ((seq + 1).dim(), Dim::symbol("(seq+1)"));
  EXPECT_EQ(((seq + 1) - 1).dim(), Dim::symbol("seq"));
  EXPECT_EQ((seq * 4 - seq * 4).dim(), Dim(0));
  EXPECT_EQ((SymInt(3) + 4).number(), 7);
  // A name read back is the same value: (4*seq) * batch == batch * 4 * seq.
  EXPECT_EQ((SymInt::of((seq * 4).dim()) * batch).to_string(), (batch * 4 * seq).to_string());
  EXPECT_FALSE(SymInt().is_known());
  EXPECT_FALSE((SymInt() + seq).is_known());
  EXPECT_TRUE((SymInt(-1)).dim().is_unknown());  // a Dim holds no negative number
}

TEST(SymInt, DivisionIsExactOrAFloorQuotient) {
  const SymInt h = sym("H"), b = sym("b");
  EXPECT_EQ((h * 7 / 7).dim(), Dim::symbol("H"));
  EXPECT_EQ((h * b * 14 / (b * 7)).dim(), Dim::symbol("(2*H)"));
  EXPECT_EQ((h / 7).dim(), Dim::symbol("(H/7)"));
  EXPECT_EQ((h / 7).to_string(), (h / 7).to_string());
  EXPECT_EQ(((h / 7) * 7).dim(), Dim::symbol("(7*(H/7))"));  // not H: H need not divide
  EXPECT_FALSE(exact_div(h, SymInt(7)));
  EXPECT_EQ(exact_div(h * b * 6, b * 3)->dim(), Dim::symbol("(2*H)"));
  EXPECT_EQ((SymInt(-7) / 2).number(), -4);  // floor
  EXPECT_FALSE((h / 0).is_known());
}

TEST(SymInt, MultiplesOfTheDivisorLeaveTheFloorQuotient) {
  const SymInt seq = sym("seq"), b = sym("b");
  // A conv of window = stride 14 over seq, and a Resize to seq // 14: one dim.
  EXPECT_EQ((seq - 14) / 14 + 1, seq / 14);
  EXPECT_EQ(((seq - 14) / 14 + 1).dim(), Dim::symbol("(seq/14)"));
  EXPECT_EQ(((seq * 4 + b * 6 + 3) / 2).dim(), Dim::symbol("(3*b+2*seq+1)"));  // floor(3/2) = 1
  EXPECT_EQ(((seq * 2 - 1) / 2).dim(), Dim::symbol("(seq-1)"));                // floor(-1/2) = -1
  EXPECT_EQ(((seq - 1) / 2).dim(), Dim::symbol("((seq-1)/2)"));  // nothing leaves: stays whole
  for (int64_t v : {1, 13, 14, 15, 27, 28, 400})
    EXPECT_EQ(sym_eval(((seq - 10) / 5 + 1).dim(), {{"seq", v}}).value(),
              (v - 10 >= 0 ? (v - 10) / 5 : -((10 - v + 4) / 5)) + 1)
        << v;
}

TEST(SymInt, DerivedDimsEvaluateAndReadBackAsTrees) {
  const SymInt seq = sym("seq"), h = sym("H");
  const std::map<std::string, int64_t> at{{"seq", 10}, {"H", 30}};
  EXPECT_EQ(sym_eval((seq * 4 + 2).dim(), at), 42);
  EXPECT_EQ(sym_eval((h / 7 * seq).dim(), at), 40);
  EXPECT_EQ(sym_eval(((seq + 1) / 2).dim(), at), 5);
  EXPECT_EQ(sym_eval(Dim::symbol("seq"), at), 10);
  EXPECT_FALSE(sym_eval((seq * sym("other")).dim(), at));
  EXPECT_TRUE(is_derived((seq * 2).dim()));
  EXPECT_FALSE(is_derived(Dim::symbol("seq")));
  auto t = sym_tree((h / 7).dim());
  ASSERT_TRUE(t);
  ASSERT_EQ(t->kind, SymTree::Kind::kFloorDiv);
  ASSERT_EQ(t->args.size(), 2u);
  EXPECT_EQ(t->args[0].kind, SymTree::Kind::kSymbol);
  EXPECT_EQ(t->args[0].symbol, "H");
  EXPECT_EQ(t->args[1].number, 7);
  // 2*seq+1: a sum of the number 1 and the product 2*seq (the constant term first).
  auto u = sym_tree((seq * 2 + 1).dim());
  ASSERT_TRUE(u);
  ASSERT_EQ(u->kind, SymTree::Kind::kSum);
  ASSERT_EQ(u->args.size(), 2u);
  EXPECT_EQ(u->args[0].kind, SymTree::Kind::kNumber);
  EXPECT_EQ(u->args[0].number, 1);
  ASSERT_EQ(u->args[1].kind, SymTree::Kind::kProduct);
  EXPECT_EQ(u->args[1].args[0].number, 2);
  EXPECT_EQ(u->args[1].args[1].symbol, "seq");
  // A symbol that holds an operator cannot enter an expression.
  EXPECT_FALSE((SymInt::of(Dim::symbol("a/b")) * 2).is_known());
}

TEST(SymInt, RangesFollowByIntervalArithmetic) {
  // Each symbol anywhere in [0, its most]; the ends of a sum, a difference,
  // a product and a floor quotient.
  const SymInt seq = sym("seq"), n = sym("n");
  const std::map<std::string, int64_t> most{{"seq", 16}, {"n", 5}};
  using R = std::pair<int64_t, int64_t>;
  EXPECT_EQ(sym_range((seq - 1).dim(), most), (R{-1, 15}));
  EXPECT_EQ(sym_range((seq + n * 3).dim(), most), (R{0, 31}));
  EXPECT_EQ(sym_range((seq - n).dim(), most), (R{-5, 16}));
  EXPECT_EQ(sym_range((seq * n - n).dim(), most), (R{-5, 80}));
  EXPECT_EQ(sym_range(((seq + 1) / 2).dim(), most), (R{0, 8}));
  EXPECT_EQ(sym_range(Dim(7), most), (R{7, 7}));
  EXPECT_EQ(sym_range(Dim::symbol("n"), most), (R{0, 5}));
  // A symbol with no most, or a divisor that may be 0: no range.
  EXPECT_FALSE(sym_range((seq + sym("other")).dim(), most));
  EXPECT_FALSE(sym_range((seq / n).dim(), most));
  EXPECT_FALSE(sym_range(Dim::unknown(), most));
}

TEST(SymInt, AnExportersNameOfAnExpressionReadsAsHonesName) {
  const SymInt batch = sym("batch"), s0 = sym("s0");
  // PyTorch's dynamo exporter names derived dims in its own notation.
  EXPECT_EQ(dim_from_name("4*batch"), (batch * 4).dim());
  EXPECT_EQ(dim_from_name("batch*4"), (batch * 4).dim());
  EXPECT_EQ(dim_from_name("s0 + 1"), (s0 + 1).dim());
  EXPECT_EQ(dim_from_name("((s0 - 1)//2) + 1"), ((s0 - 1) / 2 + 1).dim());
  EXPECT_EQ(dim_from_name("s0//2"), (s0 / 2).dim());
  EXPECT_EQ(dim_from_name("(4*batch)"), (batch * 4).dim());
  EXPECT_EQ(dim_from_name("2*3"), Dim(6));
  // Plain names, and what the notation does not cover, stay as they are.
  EXPECT_EQ(dim_from_name("batch"), Dim::symbol("batch"));
  EXPECT_EQ(dim_from_name("unk__3"), Dim::symbol("unk__3"));
  EXPECT_EQ(dim_from_name("Max(1, s0)"), Dim::symbol("Max(1, s0)"));
  EXPECT_EQ(dim_from_name("ceiling(s0/2)"), Dim::symbol("ceiling(s0/2)"));
  EXPECT_EQ(dim_from_name("s0 +"), Dim::symbol("s0 +"));
}

}  // namespace
}  // namespace hone::ops
