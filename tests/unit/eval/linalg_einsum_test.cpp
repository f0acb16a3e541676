// Reference Einsum: explicit and implicit outputs, diagonals, sums,
// ellipsis broadcasting, several operands and integer inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "linalg_test_util.h"

namespace hone {
namespace {

using lr_test::expect_near;
using lr_test::f32;
using lr_test::fails_with;
using lr_test::iota;

Result<Tensor> einsum(const std::string& eq, std::vector<Tensor> xs) {
  return lr_test::run1("Einsum", xs, {{"equation", eq}});
}

TEST(LinalgEinsum, MatMulTransposeAndSums) {
  Tensor a = iota({2, 3}), b = iota({3, 2});
  auto mm = einsum("ij,jk->ik", {a, b});
  ASSERT_TRUE(mm) << mm.error().to_string();
  expect_near(*mm, {10, 13, 28, 40});
  auto tr = einsum("ij->ji", {a});
  ASSERT_TRUE(tr);
  EXPECT_EQ(tr->shape(), (std::vector<int64_t>{3, 2}));
  expect_near(*tr, {0, 3, 1, 4, 2, 5});
  auto rows = einsum("ij->i", {a});
  ASSERT_TRUE(rows);
  expect_near(*rows, {3, 12});
  auto all = einsum("ij->", {a});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->rank(), 0u);
  expect_near(*all, {15});
}

TEST(LinalgEinsum, ImplicitOutputSortsLabelsSeenOnce) {
  Tensor a = iota({2, 3}), b = iota({3, 2});
  auto mm = einsum("ij,jk", {a, b});  // → "ik"
  ASSERT_TRUE(mm) << mm.error().to_string();
  EXPECT_EQ(mm->shape(), (std::vector<int64_t>{2, 2}));
  expect_near(*mm, {10, 13, 28, 40});
  auto t = einsum("ba", {a});  // implicit output "ab": a transpose
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{3, 2}));
  expect_near(*t, {0, 3, 1, 4, 2, 5});
  auto dot = einsum("i,i", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  ASSERT_TRUE(dot);
  EXPECT_EQ(dot->rank(), 0u);
  expect_near(*dot, {32});
}

TEST(LinalgEinsum, RepeatedLabelsTakeTheDiagonal) {
  Tensor m = iota({3, 3});
  auto diag = einsum("ii->i", {m});
  ASSERT_TRUE(diag) << diag.error().to_string();
  expect_near(*diag, {0, 4, 8});
  auto trace = einsum("ii", {m});
  ASSERT_TRUE(trace);
  expect_near(*trace, {12});
  auto batch_diag = einsum("...ii->...i", {iota({2, 2, 2})});
  ASSERT_TRUE(batch_diag) << batch_diag.error().to_string();
  EXPECT_EQ(batch_diag->shape(), (std::vector<int64_t>{2, 2}));
  expect_near(*batch_diag, {0, 3, 4, 7});
}

TEST(LinalgEinsum, EllipsisBroadcastsBatchDims) {
  Tensor a = iota({2, 1, 2, 2});                  // batch [2,1]
  Tensor b = f32({3, 2, 1}, {1, 1, 0, 1, 1, 0});  // batch [3]
  auto y = einsum("...ij,...jk->...ik", {a, b});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 3, 2, 1}));
  // batch 0: A=[[0,1],[2,3]]; b vectors [1,1],[0,1],[1,0]
  expect_near(*y, {1, 5, 1, 3, 0, 2, 9, 13, 5, 7, 4, 6});
}

TEST(LinalgEinsum, OuterProductThreeOperandsAndSpaces) {
  auto outer = einsum("i, j -> ij", {f32({2}, {1, 2}), f32({3}, {1, 10, 100})});
  ASSERT_TRUE(outer) << outer.error().to_string();
  expect_near(*outer, {1, 10, 100, 2, 20, 200});
  auto three = einsum("i,i,i->", {f32({2}, {1, 2}), f32({2}, {3, 4}), f32({2}, {5, 6})});
  ASSERT_TRUE(three);
  expect_near(*three, {1 * 3 * 5 + 2 * 4 * 6});
}

TEST(LinalgEinsum, IntegerInputsStayExact) {
  const int64_t big = int64_t{1} << 45;
  auto y = einsum("i,i->", {lr_test::ints({big, 1}), lr_test::ints({2, -1})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(lr_test::values<int64_t>(*y), (std::vector<int64_t>{2 * big - 1}));
}

TEST(LinalgEinsum, Errors) {
  EXPECT_TRUE(
      fails_with(einsum("ij,jk->ik", {iota({2, 3}), iota({2, 2})}), "label sizes disagree"));
  EXPECT_TRUE(fails_with(einsum("ij->ik", {iota({2, 3})}), "does not appear"));
  EXPECT_TRUE(fails_with(einsum("ij,jk->ik", {iota({2, 3})}), "input terms"));
  EXPECT_TRUE(fails_with(einsum("ijk->i", {iota({2, 3})}), "does not match its term"));
  EXPECT_TRUE(fails_with(einsum("i1->i", {iota({2, 3})}), "invalid character"));
}

}  // namespace
}  // namespace hone
