// The unit tests read HONE_LOG as the CLI does (HONE_LOG=debug shows, for
// example, why a backend's block fell back to the reference), so a failure on
// a machine one cannot step through in a debugger can still say why.
#include <gtest/gtest.h>

#include "hone/logging.h"

namespace {

class LogFromEnv : public ::testing::Environment {
 public:
  void SetUp() override { hone::set_log_level_from_env(); }
};

// gtest_main runs the environments registered before RUN_ALL_TESTS.
[[maybe_unused]] ::testing::Environment* const kLogFromEnv =
    ::testing::AddGlobalTestEnvironment(new LogFromEnv);

}  // namespace
