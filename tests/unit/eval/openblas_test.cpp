#include "eval/openblas.h"

#include <gtest/gtest.h>

namespace hone::eval {
namespace {

TEST(OpenBlasCore, KernelsOlderThanTheCpuAreReplaced) {
  // The H200 machine's Xeon: AVX-512 everywhere, but OpenBLAS 0.3.21 fell back to Prescott.
  EXPECT_EQ(better_openblas_core("Prescott", true, true), "SkylakeX");
  EXPECT_EQ(better_openblas_core("Prescott", true, false), "Haswell");
  EXPECT_EQ(better_openblas_core("Nehalem", true, false), "Haswell");
  EXPECT_EQ(better_openblas_core("Sandybridge", true, true), "SkylakeX");
  // A CPU without AVX2 keeps what OpenBLAS chose.
  EXPECT_EQ(better_openblas_core("Prescott", false, false), "");
  // Kernels OpenBLAS chose for a CPU it knows stay.
  EXPECT_EQ(better_openblas_core("Haswell", true, true), "");
  EXPECT_EQ(better_openblas_core("SkylakeX", true, true), "");
  EXPECT_EQ(better_openblas_core("Zen", true, false), "");
  EXPECT_EQ(better_openblas_core("Cooperlake", true, true), "");
  EXPECT_EQ(better_openblas_core("armv8", false, false), "");
}

TEST(OpenBlasCore, TheLoadedLibraryNamesItsKernels) {
  EXPECT_FALSE(openblas_core().empty());
  // Whatever this machine is, the advice names a kernel set or nothing.
  const std::string better = better_openblas_core_here();
  EXPECT_TRUE(better.empty() || better == "Haswell" || better == "SkylakeX") << better;
}

}  // namespace
}  // namespace hone::eval
