// Unique and TfIdfVectorizer.
#include <gtest/gtest.h>

#include "shape_test_util.h"

namespace hone::shape_test {
namespace {

TEST(ShapeUnique, SortedFlattenedAllOutputs) {
  auto r = run("Unique", {f32({6}, {2, 1, 1, 3, 4, 3})}, {}, 4);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (Floats{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (Ints{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[2]), (Ints{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>((*r)[3]), (Ints{2, 1, 2, 1}));
}

TEST(ShapeUnique, UnsortedKeepsFirstOccurrenceOrder) {
  auto r = run("Unique", {Tensor::from<int64_t>({2, 3}, {2, 1, 1, 3, 4, 3})},
               {{"sorted", int64_t{0}}}, 4);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (Ints{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (Ints{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[2]), (Ints{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>((*r)[3]), (Ints{1, 2, 2, 1}));
}

TEST(ShapeUnique, AlongAxis) {
  // Rows [1,0],[1,0],[0,1] along axis 0: sorted unique rows [0,1],[1,0].
  auto r = run("Unique", {f32({3, 2}, {1, 0, 1, 0, 0, 1})}, {{"axis", int64_t{0}}}, 4);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Ints{2, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (Floats{0, 1, 1, 0}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (Ints{2, 0}));
  EXPECT_EQ(values<int64_t>((*r)[2]), (Ints{1, 1, 0}));
  EXPECT_EQ(values<int64_t>((*r)[3]), (Ints{1, 2}));
  // Columns along axis -1: [1,1,0] and [0,0,1].
  auto c = run("Unique", {f32({3, 2}, {1, 0, 1, 0, 0, 1})}, {{"axis", int64_t{-1}}}, 1);
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>((*c)[0]), (Floats{0, 1, 0, 1, 1, 0}));
}

TEST(ShapeUnique, EmptyInput) {
  auto r = run("Unique", {Tensor::zeros(DType::kF32, {0})}, {}, 4);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].numel(), 0);
  EXPECT_EQ((*r)[3].numel(), 0);
}

std::map<std::string, Attribute> tfidf_attrs(std::string mode, int64_t min_gram, int64_t max_gram,
                                             int64_t max_skip) {
  return {{"mode", std::move(mode)},
          {"min_gram_length", min_gram},
          {"max_gram_length", max_gram},
          {"max_skip_count", max_skip},
          {"ngram_counts", Ints{0, 4}},
          {"ngram_indexes", Ints{0, 1, 2, 3, 4, 5, 6}},
          {"pool_int64s", Ints{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}}};
}

const std::vector<int32_t> kText{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};

TEST(ShapeTfIdf, UniAndBigramsWithSkip) {
  auto r =
      run1("TfIdfVectorizer", {Tensor::from<int32_t>({12}, kText)}, tfidf_attrs("TF", 1, 2, 5), 9);
  ASSERT_TRUE(r) << r.error().to_string();
  // Unigrams counted once each; bigram (7,8) three times within skip 5.
  EXPECT_EQ(values<float>(*r), (Floats{0, 3, 1, 0, 1, 3, 1}));
}

TEST(ShapeTfIdf, BigramsOnlyNoSkipAndBatched) {
  auto r =
      run1("TfIdfVectorizer", {Tensor::from<int32_t>({12}, kText)}, tfidf_attrs("TF", 2, 2, 0), 9);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values<float>(*r), (Floats{0, 0, 0, 0, 1, 1, 1}));
  // Two rows of six.
  auto b =
      run1("TfIdfVectorizer", {Tensor::from<int64_t>({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8})},
           tfidf_attrs("TF", 1, 2, 0), 9);
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ(b->shape(), (Ints{2, 7}));
  EXPECT_EQ(values<float>(*b), (Floats{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1}));
}

TEST(ShapeTfIdf, IdfAndTfidfUseWeights) {
  auto attrs = tfidf_attrs("IDF", 1, 1, 0);
  attrs["weights"] = Floats{0.5f, 2.0f, 3.0f, 4.0f, 1, 1, 1};
  auto idf = run1("TfIdfVectorizer", {Tensor::from<int32_t>({12}, kText)}, attrs, 9);
  ASSERT_TRUE(idf) << idf.error().to_string();
  EXPECT_EQ(values<float>(*idf), (Floats{0, 2, 3, 0, 0, 0, 0}));
  attrs["mode"] = std::string("TFIDF");
  auto tfidf = run1("TfIdfVectorizer", {Tensor::from<int32_t>({12}, kText)}, attrs, 9);
  ASSERT_TRUE(tfidf);
  EXPECT_EQ(values<float>(*tfidf), (Floats{0, 6, 3, 0, 0, 0, 0}));
  attrs["mode"] = std::string("BM25");
  EXPECT_TRUE(
      fails_with(run1("TfIdfVectorizer", {Tensor::from<int32_t>({12}, kText)}, attrs, 9), "mode"));
}

}  // namespace
}  // namespace hone::shape_test
