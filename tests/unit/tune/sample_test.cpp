#include "hone/sample.h"

#include <gtest/gtest.h>

#include <set>

namespace hone {
namespace {

Tensor f32(std::vector<int64_t> shape, float fill = 0) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (float& x : t.span<float>()) x = fill;
  return t;
}

Sample nested() {
  return SampleMap{
      {"image", f32({2, 3, 8, 8})},
      {"meta", SampleMap{{"scale", 0.5}, {"masks", SampleList{f32({2, 4}, 1), f32({2, 4}, 2)}}}}};
}

TEST(Sample, DefaultIsAnEmptyMap) {
  SampleValue v;
  EXPECT_TRUE(v.is_map());
  EXPECT_TRUE(v.map().empty());
  EXPECT_TRUE(v.leaves().empty());
  EXPECT_EQ(v.describe(), "{}");
}

TEST(Sample, LeavesAreDepthFirstWithSortedKeys) {
  const Sample s = nested();
  auto leaves = s.leaves();
  ASSERT_EQ(leaves.size(), 4u);
  EXPECT_EQ(leaves[0].first, "image");
  EXPECT_EQ(leaves[1].first, "meta.masks[0]");
  EXPECT_EQ(leaves[2].first, "meta.masks[1]");
  EXPECT_EQ(leaves[3].first, "meta.scale");
  EXPECT_TRUE(leaves[3].second->is_scalar());
  EXPECT_EQ(leaves[3].second->scalar(), 0.5);
  EXPECT_EQ(leaves[2].second->tensor().data<float>()[0], 2.0f);
}

TEST(Sample, BareTensorRootHasTheEmptyPath) {
  const Sample s = f32({3});
  auto leaves = s.leaves();
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves[0].first, "");
  EXPECT_EQ(s.find(""), &s);
}

TEST(Sample, FindFollowsPathsAndRejectsMissOrMalformed) {
  Sample s = nested();
  ASSERT_NE(s.find("meta.masks[1]"), nullptr);
  EXPECT_EQ(s.find("meta.masks[1]")->tensor().data<float>()[0], 2.0f);
  EXPECT_TRUE(s.find("meta")->is_map());
  EXPECT_TRUE(s.find("meta.masks")->is_list());
  EXPECT_EQ(s.find("meta.masks[2]"), nullptr);  // out of range
  EXPECT_EQ(s.find("meta.nope"), nullptr);      // no such key
  EXPECT_EQ(s.find("image[0]"), nullptr);       // a tensor is not a list
  EXPECT_EQ(s.find("meta..scale"), nullptr);    // malformed
  EXPECT_EQ(s.find("meta.masks[x]"), nullptr);  // malformed
  // The mutable overload edits in place.
  *s.find("meta.scale") = 2.0;
  EXPECT_EQ(s.find("meta.scale")->scalar(), 2.0);
}

TEST(Sample, DescribeShowsTheTree) {
  EXPECT_EQ(nested().describe(),
            "{image: f32[2,3,8,8], meta: {masks: [f32[2,4], f32[2,4]], scale: 0.5}}");
}

TEST(Sample, FromLeavesRoundTripsANestedTree) {
  const Sample s = SampleMap{{"a", SampleList{f32({1}), SampleMap{{"b", 3.0}, {"c", f32({2})}}}},
                             {"z", SampleList{SampleList{f32({4})}}}};
  std::vector<std::pair<std::string, SampleValue>> leaves;
  for (const auto& [p, v] : s.leaves()) leaves.emplace_back(p, *v);
  auto back = sample_from_leaves(leaves);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->describe(), s.describe());
  EXPECT_EQ(back->find("a[1].b")->scalar(), 3.0);
  EXPECT_EQ(back->find("z[0][0]")->tensor().shape(), std::vector<int64_t>{4});
}

TEST(Sample, FromLeavesRootForms) {
  auto empty = sample_from_leaves({});
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->is_map() && empty->map().empty());
  auto bare = sample_from_leaves({{"", f32({2})}});
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->is_tensor());
  auto list = sample_from_leaves({{"[1]", 1.0}, {"[0]", 0.0}});
  ASSERT_TRUE(list);
  ASSERT_TRUE(list->is_list());
  EXPECT_EQ(list->list()[1].scalar(), 1.0);
}

TEST(Sample, FromLeavesReportsConflictsNamingBothPaths) {
  auto twice = sample_from_leaves({{"a.b", 1.0}, {"a.b", 2.0}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(twice.error().message().find("'a.b' is given twice"), std::string::npos);

  auto map_list = sample_from_leaves({{"a.b", 1.0}, {"a[0]", 2.0}});
  ASSERT_FALSE(map_list);
  EXPECT_NE(map_list.error().message().find("'a.b' and 'a[0]'"), std::string::npos)
      << map_list.error().message();
  EXPECT_NE(map_list.error().message().find("both a map and a list"), std::string::npos);

  auto leaf_map = sample_from_leaves({{"a", 1.0}, {"a.b", 2.0}});
  ASSERT_FALSE(leaf_map);
  EXPECT_NE(leaf_map.error().message().find("both a leaf and a map"), std::string::npos)
      << leaf_map.error().message();

  auto map_leaf = sample_from_leaves({{"a.b", 1.0}, {"a", 2.0}});
  ASSERT_FALSE(map_leaf);
  EXPECT_NE(map_leaf.error().message().find("both a map and a leaf"), std::string::npos);

  auto gap = sample_from_leaves({{"m[0]", 1.0}, {"m[2]", 2.0}});
  ASSERT_FALSE(gap);
  EXPECT_NE(gap.error().message().find("list 'm' has item [2] but no item [1]"), std::string::npos)
      << gap.error().message();

  auto root_and_more = sample_from_leaves({{"", 1.0}, {"x", 2.0}});
  ASSERT_FALSE(root_and_more);
}

TEST(Sample, MalformedPathsAreErrorsWithTheOffset) {
  for (const char* bad : {".a", "a.", "a..b", "a[", "a[]", "a[-1]", "a]", "a[0]b", "[x]"}) {
    auto r = check_path(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(std::string("path '") + bad + "'"), std::string::npos)
        << r.error().message();
    EXPECT_FALSE(sample_from_leaves({{bad, 1.0}})) << bad;
  }
  for (const char* good : {"", "a", "a.b", "[0]", "a[3].b", "a[0][1]", "x_y-z:0"})
    EXPECT_TRUE(check_path(good)) << good;
}

TEST(Sample, CheckSampleRejectsUnpathableKeysAndUndefinedTensors) {
  auto dotted = check_sample(SampleMap{{"meta", SampleMap{{"a.b", 1.0}}}});
  ASSERT_FALSE(dotted);
  EXPECT_NE(dotted.error().message().find("'a.b' under 'meta'"), std::string::npos)
      << dotted.error().message();
  EXPECT_FALSE(check_sample(SampleMap{{"", 1.0}}));
  EXPECT_FALSE(check_sample(SampleMap{{"x[0]", 1.0}}));
  auto undefined = check_sample(SampleMap{{"l", SampleList{f32({1}), Tensor()}}});
  ASSERT_FALSE(undefined);
  EXPECT_NE(undefined.error().message().find("'l[1]'"), std::string::npos);
  EXPECT_TRUE(check_sample(nested()));
}

TEST(RandomTensor, SeededAndWithinRanges) {
  std::mt19937_64 a(7), b(7), c(8);
  auto x = random_tensor(DType::kF32, {4, 8}, a);
  auto y = random_tensor(DType::kF32, {4, 8}, b);
  auto z = random_tensor(DType::kF32, {4, 8}, c);
  ASSERT_TRUE(x && y && z);
  EXPECT_TRUE(x->bitwise_equal(*y));
  EXPECT_FALSE(x->bitwise_equal(*z));
  for (float v : x->span<float>()) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  std::mt19937_64 r(1);
  auto ints = random_tensor(DType::kI64, {200}, r);
  ASSERT_TRUE(ints);
  std::set<int64_t> seen(ints->span<int64_t>().begin(), ints->span<int64_t>().end());
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 9);
  auto bools = random_tensor(DType::kBool, {200}, r);
  ASSERT_TRUE(bools);
  int trues = 0;
  for (bool v : bools->span<bool>()) trues += v;
  EXPECT_GT(trues, 50);
  EXPECT_LT(trues, 150);
  auto half = random_tensor(DType::kF16, {3}, r);
  ASSERT_TRUE(half);
  EXPECT_EQ(half->dtype(), DType::kF16);
  auto none = random_tensor(DType::kUndefined, {3}, r);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), ErrorCode::kUnsupported);
  EXPECT_FALSE(random_tensor(DType::kF32, {-1}, r));
}

}  // namespace
}  // namespace hone
