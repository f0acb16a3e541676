// lower_depth_to_space: DepthToSpace (DCR, CRD) and SpaceToDepth become
// Reshape/Transpose/Reshape with the reference's answer, the batch symbolic;
// unknown spatial dims and bad modes stay as they are.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

Graph one_node(const std::string& op, Shape x, std::map<std::string, Attribute> attrs) {
  GraphBuilder b("d2s");
  ValueId in = b.input("x", DType::kF32, std::move(x));
  b.output(b.relu(b.op(op, {in}, std::move(attrs))), "y");
  return *std::move(b).build();
}

TEST(PassesDepthToSpace, EveryFormMatchesTheReference) {
  struct Case {
    std::string op, mode;
    int64_t bs;
    std::vector<int64_t> dims;
  };
  std::mt19937 rng(11);
  for (const Case& c :
       {Case{"DepthToSpace", "DCR", 2, {8, 3, 5}}, Case{"DepthToSpace", "CRD", 3, {18, 2, 4}},
        Case{"SpaceToDepth", "", 2, {3, 4, 6}}}) {
    SCOPED_TRACE(c.op + " " + c.mode);
    std::map<std::string, Attribute> attrs{{"blocksize", c.bs}};
    if (!c.mode.empty()) attrs["mode"] = c.mode;
    Graph g = one_node(c.op, Shape{Dim::symbol("batch"), c.dims[0], c.dims[1], c.dims[2]}, attrs);
    PassStats st;
    auto out = lower_depth_to_space(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, c.op), 0u);
    EXPECT_EQ(count_op(*out, "Transpose"), 1u);
    EXPECT_EQ(count_op(*out, "Reshape"), 2u);
    EXPECT_EQ(st.rewritten, 1);
    for (int64_t batch : {1, 3})
      EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {batch, c.dims[0], c.dims[1], c.dims[2]})}))
          << "batch " << batch;
  }
}

TEST(PassesDepthToSpace, WhatItCannotWriteStays) {
  // A spatial dim known only at run time, an unknown mode, channels that do not divide.
  const Graph graphs[] = {
      one_node("DepthToSpace", Shape{1, 8, Dim::symbol("h"), 4}, {{"blocksize", int64_t{2}}}),
      one_node("DepthToSpace", Shape{1, 8, 2, 4},
               {{"blocksize", int64_t{2}}, {"mode", std::string("XYZ")}}),
      one_node("DepthToSpace", Shape{1, 6, 2, 4}, {{"blocksize", int64_t{2}}})};
  for (const Graph& g : graphs) {
    PassStats st;
    auto out = lower_depth_to_space(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, "DepthToSpace"), 1u);
    EXPECT_EQ(st.rewritten, 0);
  }
}

}  // namespace
}  // namespace hone
