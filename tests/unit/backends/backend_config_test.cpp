#include "hone/backend_config.h"

#include <gtest/gtest.h>

namespace hone {
namespace {

BackendConfig sample() {
  BackendConfig c;
  c.declare("min_block_size", int64_t{5}, "")
      .declare("require_full_compilation", false, "")
      .declare("budget_ms", 2.5, "")
      .declare("layout", std::string("any"), "");
  return c;
}

TEST(BackendConfig, KeyIsStableAndOrderFree) {
  BackendConfig a = sample();
  BackendConfig b;
  b.declare("layout", std::string("any"), "")
      .declare("budget_ms", 2.5, "")
      .declare("require_full_compilation", false, "")
      .declare("min_block_size", int64_t{5}, "");
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(a.key().size(), 16u);
  ASSERT_TRUE(a.set("min_block_size", int64_t{3}));
  EXPECT_NE(a.key(), b.key());
  ASSERT_TRUE(b.set_from_string("min_block_size", "3"));
  EXPECT_EQ(a.key(), b.key());
}

TEST(BackendConfig, DescribeListsChangedFields) {
  BackendConfig c = sample();
  EXPECT_EQ(c.describe(), "defaults");
  ASSERT_TRUE(c.set_from_string("require_full_compilation", "true"));
  ASSERT_TRUE(c.set("budget_ms", int64_t{4}));
  EXPECT_EQ(c.describe(), "require_full_compilation=true, budget_ms=4");
  EXPECT_EQ(c.get<double>("budget_ms", 0), 4.0);
}

TEST(BackendConfig, BadNamesAndValuesAreClearErrors) {
  BackendConfig c = sample();
  auto unknown = c.set("min_blocksize", int64_t{1});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("known: min_block_size"), std::string::npos);
  auto type = c.set("require_full_compilation", int64_t{1});
  ASSERT_FALSE(type);
  EXPECT_NE(type.error().message().find("is a bool, got an integer"), std::string::npos);
  auto parse = c.set_from_string("min_block_size", "five");
  ASSERT_FALSE(parse);
  EXPECT_NE(parse.error().message().find("wants an integer, got 'five'"), std::string::npos);
  EXPECT_FALSE(c.set_from_string("min_block_size", "5x"));
}

}  // namespace
}  // namespace hone
