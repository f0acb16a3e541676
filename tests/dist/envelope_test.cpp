// dist::seal / dist::open_all: the agreement every exchange between ranks
// ends in, without MPI.
#include "dist/envelope.h"

#include <gtest/gtest.h>

namespace hone::dist {
namespace {

TEST(DistEnvelope, EveryRanksDataInRankOrder) {
  auto all = open_all("candidate onednn", {seal("candidate onednn", std::string("a")),
                                           seal("candidate onednn", std::string("b\0c", 3))});
  ASSERT_TRUE(all) << all.error().to_string();
  EXPECT_EQ((*all)[0], "a");
  EXPECT_EQ((*all)[1], std::string("b\0c", 3));
}

TEST(DistEnvelope, TheLowestFailingRanksErrorWithItsCodeAndContext) {
  Error e1(ErrorCode::kNotFound, "file '/x.onnx' not found");
  e1.add_context("while loading");
  const Error e2(ErrorCode::kInternal, "something else");
  auto all = open_all("model", {seal("model", std::string("h")),
                                seal("failed", Result<std::string>(std::unexpected(e1))),
                                seal("failed", Result<std::string>(std::unexpected(e2)))});
  ASSERT_FALSE(all);
  EXPECT_EQ(all.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(all.error().message(), "rank 1: file '/x.onnx' not found");
  ASSERT_EQ(all.error().context().size(), 1u);
  EXPECT_EQ(all.error().context()[0], "while loading");
}

TEST(DistEnvelope, AnErrorEveryRankHadIsNotPinnedOnOne) {
  const Error e(ErrorCode::kUnsupported, "one-backend: backend 'aot' failed");
  auto all = open_all("failed", {seal("failed", Result<std::string>(std::unexpected(e))),
                                 seal("failed", Result<std::string>(std::unexpected(e)))});
  ASSERT_FALSE(all);
  EXPECT_EQ(all.error().message(), "one-backend: backend 'aot' failed");
}

TEST(DistEnvelope, RanksOutOfStepAreAnError) {
  auto all = open_all("candidate blas", {seal("candidate blas", std::string("x")),
                                         seal("candidate aot", std::string("y"))});
  ASSERT_FALSE(all);
  EXPECT_NE(all.error().message().find("out of step: rank 1 is at 'candidate aot'"),
            std::string::npos)
      << all.error().message();
}

TEST(DistEnvelope, AnUnreadableMessageNamesItsRank) {
  auto all = open_all("model", {seal("model", std::string("x")), "{not json"});
  ASSERT_FALSE(all);
  EXPECT_EQ(all.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(all.error().message().find("rank 1 sent an unreadable message"), std::string::npos);
}

}  // namespace
}  // namespace hone::dist
