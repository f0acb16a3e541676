// dist::detect_launch and what follows from a rank: its GPU and its cache
// paths. From an environment given as a map: no MPI, no launcher.
#include "dist/launch.h"

#include <gtest/gtest.h>

namespace hone::dist {
namespace {

TEST(DistLaunch, AloneWithoutALaunchersVariables) {
  auto l = detect_launch({{"HOME", "/root"}});
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->by_mpirun);
  EXPECT_EQ(l->size, 1);
  EXPECT_EQ(l->rank, 0);
}

TEST(DistLaunch, OpenMpisRankSizeAndLocalRank) {
  auto l = detect_launch({{"OMPI_COMM_WORLD_SIZE", "4"},
                          {"OMPI_COMM_WORLD_RANK", "3"},
                          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  ASSERT_TRUE(l) << l.error().to_string();
  EXPECT_TRUE(l->by_mpirun);
  EXPECT_EQ(l->size, 4);
  EXPECT_EQ(l->rank, 3);
  EXPECT_EQ(l->local_rank, 1);
  EXPECT_EQ(l->evidence, "OMPI_COMM_WORLD_SIZE=4");
}

TEST(DistLaunch, HydraWithoutALocalRankTakesTheRank) {
  auto l = detect_launch({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rank, 1);
  EXPECT_EQ(l->local_rank, 1);
}

TEST(DistLaunch, BadVariablesAreErrorsNamingThem) {
  auto l = detect_launch({{"OMPI_COMM_WORLD_SIZE", "two"}, {"OMPI_COMM_WORLD_RANK", "0"}});
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message().find("OMPI_COMM_WORLD_SIZE='two'"), std::string::npos);
  auto out = detect_launch({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "2"}});
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("rank 2 of 2"), std::string::npos);
}

TEST(DistLaunch, EachLocalRankTakesItsOwnGpuUnlessOneIsSet) {
  Launch l;
  l.by_mpirun = true;
  l.size = 4;
  l.rank = 3;
  l.local_rank = 1;
  EXPECT_EQ(cuda_device_for(l, nullptr), "1");
  EXPECT_EQ(cuda_device_for(l, ""), "1");
  EXPECT_EQ(cuda_device_for(l, "0"), "0");
}

TEST(DistLaunch, PerRankPathsKeepTheExtension) {
  EXPECT_EQ(per_rank_path("/c/tuning.db", 1).string(), "/c/tuning.rank1.db");
  EXPECT_EQ(per_rank_path("cache", 0).string(), "cache.rank0");
}

}  // namespace
}  // namespace hone::dist
