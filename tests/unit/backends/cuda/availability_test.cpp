// The cuda backend where CUDA may be absent: the registry entry says why it
// is unavailable, build() fails with kUnsupportedHardware naming the reason,
// and what needs no device (proposals, partitions) still works.
#include <cstdlib>
#include <filesystem>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cudnn_api.h"
#include "cuda_test_util.h"
#include "hone/registry.h"

namespace hone::cuda {
namespace {

using testing_util::uniform;

Graph small_model() {
  std::mt19937 rng(1);
  GraphBuilder b("small");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  b.output(b.relu(b.matmul(x, b.constant("w", uniform(rng, {8, 4})))), "y");
  return *std::move(b).build();
}

TEST(CudaAvailability, RegisteredWithGpuCapabilities) {
  const auto* e = default_registry().find("cuda");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->capabilities.devices, std::vector<Device>{Device::kCuda});
  EXPECT_EQ(e->capabilities.dtypes, std::vector<DType>{DType::kF32});
  ASSERT_TRUE(static_cast<bool>(e->unavailable_reason))
      << "cuda must say whether this machine can run it";
}

TEST(CudaAvailability, WithoutADeviceTheEntryIsUnavailableAndBuildFails) {
  if (CudaBackend::unavailable_reason().empty()) GTEST_SKIP() << "this machine has a CUDA device";
  const auto* e = default_registry().find("cuda");
  ASSERT_NE(e, nullptr);
  const std::string why = e->unavailable();
  EXPECT_TRUE(why.starts_with("no CUDA device: ") || why.find("found but") != std::string::npos)
      << why;
  auto be = default_registry().create("cuda");
  ASSERT_TRUE(be);
  auto r = (*be)->build(small_model());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupportedHardware) << r.error().to_string();
  EXPECT_EQ(r.error().message(), why);
  EXPECT_EQ((*be)->state(), BackendState::kCreated);
  // Not built: infer refuses instead of crashing.
  std::mt19937 rng(2);
  EXPECT_FALSE((*be)->infer({uniform(rng, {2, 8})}));
}

TEST(CudaAvailability, MissingLibrariesAreNamedInTheReason) {
  LibraryNames names;
  names.driver = {"libcuda-hone-test-missing.so.1"};
  auto d = Driver::probe(names);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), ErrorCode::kUnsupportedHardware);
  EXPECT_TRUE(
      d.error().message().starts_with("no CUDA device: libcuda-hone-test-missing.so.1 not found"))
      << d.error().message();
}

TEST(CudaAvailability, MissingCublasIsNamedWhenADeviceExists) {
  HONE_REQUIRE_CUDA();
  LibraryNames names;
  names.cublas = {"libcublas-hone-missing.so.13", "libcublas-hone-missing.so.12"};
  auto d = Driver::probe(names);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), ErrorCode::kUnsupportedHardware);
  EXPECT_NE(d.error().message().find("found but none of libcublas-hone-missing.so.13, "
                                     "libcublas-hone-missing.so.12 found"),
            std::string::npos)
      << d.error().message();
}

TEST(CudaAvailability, ProposalsNeedNoDevice) {
  std::mt19937 rng(3);
  GraphBuilder b("mixed");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 8, 8});
  ValueId c =
      b.conv(x, b.constant("w", uniform(rng, {4, 3, 3, 3})), b.constant("b", uniform(rng, {4})));
  ValueId t = b.op("Cast", {c}, {{"to", int64_t{11}}});  // f64: no cuda kernel makes it
  b.output(b.op("Cast", {t}, {{"to", int64_t{1}}}), "y");
  b.output(b.op("Clip", {c, x}), "clipped");  // runtime bounds: hone_clip_typed
  Graph g = *std::move(b).build();
  CudaBackend be;
  const std::vector<NodeSupport> p = be.propose(g);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_TRUE(p[0].supported) << p[0].reason;
  EXPECT_FALSE(p[1].supported);
  EXPECT_NE(p[1].reason.find("Cast to f64"), std::string::npos) << p[1].reason;
  EXPECT_FALSE(p[2].supported);
  EXPECT_NE(p[2].reason.find("Cast from f64"), std::string::npos) << p[2].reason;
  EXPECT_TRUE(p[3].supported) << p[3].reason;
  auto part = be.plan(g);
  ASSERT_TRUE(part) << part.error().to_string();
  EXPECT_GE(part->nodes_on_backend(), 1u);
}

TEST(CudaAvailability, CudnnSearchListStartsWithHoneCudnnPath) {
  const char* old = std::getenv("HONE_CUDNN_PATH");
  const std::string saved = old != nullptr ? old : "";
  const std::string dir = ::testing::TempDir();
  setenv("HONE_CUDNN_PATH", dir.c_str(), 1);
  auto c = Cudnn::candidates();
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(std::filesystem::path(c[0]), std::filesystem::path(dir) / "libcudnn.so.9")
      << "a folder names the library inside it";
  EXPECT_EQ(c[1], "libcudnn.so.9") << "then the loader's own search";
  EXPECT_EQ(c.back(), "/usr/local/cuda/lib64/libcudnn.so.9");
  setenv("HONE_CUDNN_PATH", "/opt/x/libcudnn.so.9.1", 1);
  EXPECT_EQ(Cudnn::candidates()[0], "/opt/x/libcudnn.so.9.1") << "a file is taken as it is";
  if (old != nullptr)
    setenv("HONE_CUDNN_PATH", saved.c_str(), 1);
  else
    unsetenv("HONE_CUDNN_PATH");
}

TEST(CudaAvailability, WithoutADeviceCudnnSaysWhy) {
  if (CudaBackend::unavailable_reason().empty()) GTEST_SKIP() << "this machine has a CUDA device";
  auto dnn = Cudnn::get();
  ASSERT_FALSE(dnn);
  EXPECT_EQ(dnn.error().code(), ErrorCode::kUnsupportedHardware);
  EXPECT_TRUE(dnn.error().message().starts_with("no CUDA device: ")) << dnn.error().message();
}

}  // namespace
}  // namespace hone::cuda
