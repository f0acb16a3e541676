// Backend::infer_on_device on machines without a GPU: backends that run on
// the host refuse it naming themselves, the base checks the state and the
// tensors first. The cuda side is in backends/cuda/device_io_test.cpp.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/registry.h"

namespace hone {
namespace {

Graph tiny() {
  GraphBuilder b("tiny");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  b.output(b.relu(x), "y");
  return *std::move(b).build();
}

TEST(DeviceInference, HostBackendsRefuseNamingThemselves) {
  const Graph g = tiny();
  float fake = 0;  // never read: the refusal comes first
  const DeviceTensor x{&fake, DType::kF32, {2, 3}, 0, nullptr};
  int tried = 0;
  for (const char* name : {"reference", "onednn", "blas", "aot", "select"}) {
    if (default_registry().find(name) == nullptr) continue;  // HONE_WITH_<NAME>=OFF
    if (!default_registry().find(name)->unavailable().empty()) continue;
    SCOPED_TRACE(name);
    auto be = default_registry().create(name);
    ASSERT_TRUE(be) << be.error().to_string();
    // A machine may lack what a backend builds with (aot's C compiler on the
    // GPU machine): such a backend is not what this test is about.
    if (auto built = (*be)->build(g); !built) {
      EXPECT_NE(std::string(name), kReferenceBackend) << built.error().to_string();
      continue;
    }
    auto r = (*be)->infer_on_device({x});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(r.error().message().find("backend '" + std::string(name) + "' runs on the host"),
              std::string::npos)
        << r.error().message();
    EXPECT_EQ((*be)->to_device(Tensor::zeros(DType::kF32, {2, 3})).error().code(),
              ErrorCode::kUnsupported);
    EXPECT_EQ((*be)->to_host(x).error().code(), ErrorCode::kUnsupported);
    EXPECT_FALSE((*be)->transfers().has_value());
    EXPECT_EQ((*be)->executions(), 0u);
    ++tried;
  }
  EXPECT_GE(tried, 1);  // the reference always builds
}

TEST(DeviceInference, TheBaseChecksStateAndTensorsFirst) {
  const Graph g = tiny();
  auto be = default_registry().create(kReferenceBackend);
  ASSERT_TRUE(be);
  float fake = 0;
  auto unbuilt = (*be)->infer_on_device({DeviceTensor{&fake, DType::kF32, {2, 3}, 0, nullptr}});
  ASSERT_FALSE(unbuilt);
  EXPECT_EQ(unbuilt.error().code(), ErrorCode::kFailedPrecondition);
  ASSERT_TRUE((*be)->build(g));
  auto message = [&](const DeviceTensor& t, const DeviceCall& call = {}) {
    auto r = (*be)->infer_on_device({t}, call);
    EXPECT_FALSE(r);
    if (r) return std::string();
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    return r.error().message();
  };
  EXPECT_NE(message({&fake, DType::kF32, {2, -3}, 0, nullptr}).find("device input 0 axis 1"),
            std::string::npos);
  EXPECT_NE(message({nullptr, DType::kF32, {2, 3}, 0, nullptr}).find("has no data"),
            std::string::npos);
  EXPECT_NE(message({&fake, DType::kUndefined, {2, 3}, 0, nullptr}).find("no dtype"),
            std::string::npos);
  DeviceCall call;
  call.outputs.push_back({nullptr, DType::kF32, {2, 3}, 0, nullptr});
  EXPECT_NE(message({&fake, DType::kF32, {2, 3}, 0, nullptr}, call).find("device output 0"),
            std::string::npos);
  // A tensor of no elements needs no data.
  auto empty = (*be)->infer_on_device({DeviceTensor{nullptr, DType::kF32, {0, 3}, 0, nullptr}});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), ErrorCode::kUnsupported);
}

TEST(DeviceInference, DescribeNamesDtypeShapeAndDevice) {
  const DeviceTensor t{nullptr, DType::kF32, {1, 3, 224, 224}, 1, nullptr};
  EXPECT_EQ(t.describe(), "f32[1,3,224,224] on cuda:1");
  EXPECT_EQ(t.numel(), 3 * 224 * 224);
  EXPECT_EQ(t.nbytes(), size_t{3 * 224 * 224 * 4});
}

}  // namespace
}  // namespace hone
