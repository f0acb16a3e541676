#include <gtest/gtest.h>

#include "hone/registry.h"

namespace hone {
namespace {

// A graph made in C++ without GraphBuilder::build(): two values share a name.
// Every backend's build() refuses it with the name, instead of crashing.
TEST(BackendBuild, RefusesAGraphWithTwoValuesOfOneName) {
  Graph g("dup");
  const ValueId x = g.add_input("x", DType::kF32, Shape{2});
  const ValueId y = g.add_node("Relu", {x}, 1, {}, "relu")[0];
  g.value(y).name = "x";
  g.add_output(y);
  for (const std::string name : {"reference", "onednn", "blas"}) {
    if (default_registry().find(name) == nullptr) continue;  // HONE_WITH_<NAME>=OFF
    auto be = default_registry().create(name);
    ASSERT_TRUE(be.has_value()) << name;
    auto r = (*be)->build(g);
    ASSERT_FALSE(r.has_value()) << name << " built a graph with a duplicate value name";
    EXPECT_NE(r.error().to_string().find("'x'"), std::string::npos) << r.error().to_string();
  }
}

}  // namespace
}  // namespace hone
