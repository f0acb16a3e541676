// A backend that records the choices it times (BackendConfig::declare_record:
// onednn's timed_choices, select's kernel_choices and timed_choices, cuda's
// kernel_choices) joins a tuning group only with every record given, since
// ranks timing alone could choose differently. The group is a dist::Group
// over a transport of one rank (its all-gather returns its own message): the
// tuner's check does not depend on the group's size, and the rest of the
// group's exchanges run as they would under mpirun.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "dist/group.h"
#include "hone/graph_builder.h"
#include "hone/registry.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone::dist {
namespace {

class OneRank final : public Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Result<std::vector<std::string>> all_gather(const std::string& mine, double) override {
    return std::vector<std::string>{mine};
  }
};

/// x[1, 16, 6, 6] -> relu(conv3x3): a choice onednn times (its block's plan).
Graph conv_net() {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  std::vector<float> w(16 * 16 * 9);
  for (float& v : w) v = u(rng);
  GraphBuilder b("conv");
  ValueId x = b.input("x", DType::kF32, Shape{1, 16, 6, 6});
  ValueId y = b.op("Conv", {x, b.constant("w", Tensor::from<float>({16, 16, 3, 3}, w))},
                   {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "c0");
  b.output(b.relu(y), "y");
  return *std::move(b).build();
}

Sample input() {
  std::vector<float> v(16 * 36);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i));
  SampleMap m;
  m.emplace("x", Tensor::from<float>({1, 16, 6, 6}, v));
  return Sample(std::move(m));
}

Result<TunedModel> tune_in_group(const std::string& backend,
                                 std::map<std::string, std::string> fields) {
  Group group(std::make_unique<OneRank>(), {});
  TuneOptions o;
  o.threads = 1;
  o.use_cache = false;
  o.group = &group;
  o.profile.min_runs = 3;
  o.profile.window = 3;
  o.profile.max_runs = 5;
  o.configs[backend] = std::move(fields);
  return tune(conv_net(), {input()}, OneBackend(backend, false), o);
}

TEST(DistGroupRecords, ABackendWithAnEmptyRecordIsRefusedNamingTheField) {
  for (const std::string backend : {"onednn", "select"}) {
    const auto* entry = default_registry().find(backend);
    if (entry == nullptr || !entry->unavailable().empty()) continue;
    SCOPED_TRACE(backend);
    // select's kernel_choices given: its blocks' timed_choices is still empty.
    std::map<std::string, std::string> fields;
    if (backend == "select") fields["kernel_choices"] = "c0=onednn(onednn)";
    auto refused = tune_in_group(backend, fields);
    ASSERT_FALSE(refused);
    const std::string why = refused.error().to_string();
    EXPECT_NE(why.find("records them in timed_choices"), std::string::npos) << why;
    EXPECT_NE(why.find("give it timed_choices"), std::string::npos) << why;
    // Given a record, it is tuned in the group.
    fields["timed_choices"] = "-";
    auto tuned = tune_in_group(backend, fields);
    ASSERT_TRUE(tuned) << tuned.error().to_string();
    EXPECT_EQ(tuned->decision().backend, backend);
  }
  // select without kernel_choices: refused naming that field first.
  if (default_registry().find("select") != nullptr) {
    auto refused = tune_in_group("select", {{"timed_choices", "-"}});
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().to_string().find("give it kernel_choices"), std::string::npos)
        << refused.error().to_string();
  }
}

}  // namespace
}  // namespace hone::dist
