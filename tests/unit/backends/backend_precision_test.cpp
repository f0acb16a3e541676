// Every backend's `precision` and `fp32_nodes` fields: parsed into
// hone::Precision when set, limited to the precisions the backend lists.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/registry.h"

namespace hone {
namespace {

std::unique_ptr<Backend> reference() {
  auto be = default_registry().create(kReferenceBackend);
  EXPECT_TRUE(be) << be.error().to_string();
  return std::move(*be);
}

TEST(BackendPrecision, DefaultIsStrictFp32) {
  auto be = reference();
  EXPECT_EQ(be->precision(), Precision::kFp32);
  EXPECT_TRUE(be->fp32_nodes().empty());
}

TEST(BackendPrecision, ConfigureParsesAndStoresTheCanonicalName) {
  auto be = reference();
  ASSERT_TRUE(be->configure("precision", "f64"));
  EXPECT_EQ(be->precision(), Precision::kFp64);
  EXPECT_EQ(be->config().get<std::string>("precision", ""), "fp64");
  // The same setting spelled two ways is one config key.
  auto a = reference(), b = reference();
  ASSERT_TRUE(a->configure("precision", "f32"));
  ASSERT_TRUE(b->set_precision(Precision::kFp32));
  EXPECT_EQ(a->config().key(), b->config().key());
}

TEST(BackendPrecision, APrecisionTheBackendLacksIsRefusedNamingWhatItHas) {
  auto be = reference();
  auto r = be->configure("precision", "bf16");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("fp32, fp64"), std::string::npos) << r.error().message();
  auto bad = be->configure("precision", "fp4");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(be->precision(), Precision::kFp32);
}

TEST(BackendPrecision, Fp32NodesNeedMixedPrecision) {
  auto be = reference();
  ASSERT_FALSE(be->capabilities().mixed_precision);
  auto r = be->set_fp32_nodes({"conv1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(be->set_fp32_nodes({}));  // none is always fine
  auto onednn = default_registry().create("onednn");
  if (!onednn) GTEST_SKIP() << "onednn is not built in";
  ASSERT_TRUE((*onednn)->capabilities().mixed_precision);
  ASSERT_TRUE((*onednn)->set_fp32_nodes({"a", "b/c"}));
  EXPECT_EQ((*onednn)->fp32_nodes(), (std::vector<std::string>{"a", "b/c"}));
  EXPECT_FALSE((*onednn)->set_fp32_nodes({"a,b"}));
}

TEST(BackendPrecision, Fp32NodesMustNameNodesOfTheBuiltGraph) {
  auto onednn = default_registry().create("onednn");
  if (!onednn) GTEST_SKIP() << "onednn is not built in";
  GraphBuilder b("two_relus");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  b.output(b.relu(b.relu(x)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  const std::string first = g->nodes().front().name;
  // A typo keeps nothing in fp32: the build says so, naming the name.
  ASSERT_TRUE((*onednn)->set_fp32_nodes({first, "no_such_node"}));
  auto r = (*onednn)->build(*g);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("'no_such_node', which is no node"), std::string::npos)
      << r.error().to_string();
  auto ok = default_registry().create("onednn");
  ASSERT_TRUE(ok && (*ok)->set_fp32_nodes({first}));
  EXPECT_TRUE((*ok)->build(*g)) << first;
}

TEST(BackendPrecision, OldPackagesFieldAllowReducedPrecisionFalseIsAccepted) {
  auto be = reference();
  EXPECT_TRUE(be->configure("allow_reduced_precision", "false"));
  auto on = be->configure("allow_reduced_precision", "true");
  ASSERT_FALSE(on);
  EXPECT_NE(on.error().message().find("precision="), std::string::npos);
}

}  // namespace
}  // namespace hone
