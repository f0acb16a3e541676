// Device-resident inference on the cuda backend (Backend::infer_on_device):
// inputs and outputs in device memory, no host copy, the caller's stream
// respected. Every test skips, with the reason, without a CUDA device.
#include <cstring>
#include <random>

#include "backends/cuda/cuda_api.h"
#include "cuda_test_util.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::close;
using testing_util::plan_text;
using testing_util::uniform;

Graph mlp(std::mt19937& rng) {
  GraphBuilder b("mlp");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 16});
  ValueId h = b.relu(b.add(b.matmul(x, b.constant("w1", uniform(rng, {16, 32}))),
                           b.constant("b1", uniform(rng, {32}))));
  b.output(b.sigmoid(b.matmul(h, b.constant("w2", uniform(rng, {32, 8})))), "y");
  return *std::move(b).build();
}

/// A small ResNet: a stem conv, two bottleneck blocks with residual Adds, a
/// strided conv, global pooling and a classifier; two outputs.
Graph resnet_like(std::mt19937& rng) {
  GraphBuilder b("resnet_like");
  ValueId x = b.input("image", DType::kF32, Shape{Dim::symbol("n"), 3, 32, 32});
  ValueId h = b.relu(b.conv(x, b.constant("stem", uniform(rng, {16, 3, 3, 3}, -0.3f, 0.3f)),
                            b.constant("stem_b", uniform(rng, {16})), {.pads = {1, 1, 1, 1}}));
  for (int blk = 0; blk < 2; ++blk) {
    const std::string p = "blk" + std::to_string(blk);
    ValueId r = b.relu(b.conv(h, b.constant(p + "w1", uniform(rng, {8, 16, 1, 1}, -0.3f, 0.3f)),
                              b.constant(p + "b1", uniform(rng, {8}))));
    r = b.relu(b.conv(r, b.constant(p + "w2", uniform(rng, {8, 8, 3, 3}, -0.3f, 0.3f)),
                      b.constant(p + "b2", uniform(rng, {8})), {.pads = {1, 1, 1, 1}}));
    r = b.conv(r, b.constant(p + "w3", uniform(rng, {16, 8, 1, 1}, -0.3f, 0.3f)),
               b.constant(p + "b3", uniform(rng, {16})));
    h = b.relu(b.add(r, h));
  }
  h = b.relu(b.conv(h, b.constant("down", uniform(rng, {32, 16, 3, 3}, -0.2f, 0.2f)),
                    b.constant("down_b", uniform(rng, {32})),
                    {.strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  b.output(h, "features");
  ValueId pooled = b.flatten(b.global_average_pool(h));
  b.output(b.gemm(pooled, b.constant("fc", uniform(rng, {32, 10})),
                  b.constant("fc_b", uniform(rng, {10}))),
           "logits");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

TransferCounts counts(const CudaBackend& be) {
  auto c = be.transfers();
  EXPECT_TRUE(c.has_value());
  return c.value_or(TransferCounts{});
}

/// Runs `inputs` through infer() and through infer_on_device() (inputs
/// copied to the device first), checks both give the same outputs and the
/// device call made no host copy.
void expect_device_matches_host(CudaBackend& be, const std::vector<Tensor>& inputs) {
  auto host = be.infer(inputs);
  ASSERT_TRUE(host) << host.error().to_string();
  std::vector<DeviceTensor> dev;
  for (const Tensor& t : inputs) {
    auto d = be.to_device(t);
    ASSERT_TRUE(d) << d.error().to_string();
    EXPECT_TRUE(d->owner);
    dev.push_back(*d);
  }
  const TransferCounts before = counts(be);
  const uint64_t runs = be.executions();
  auto out = be.infer_on_device(dev, {.synchronize = true});
  ASSERT_TRUE(out) << out.error().to_string();
  const TransferCounts after = counts(be);
  EXPECT_EQ(after.host_to_device, before.host_to_device) << plan_text(be);
  EXPECT_EQ(after.device_to_host, before.device_to_host) << plan_text(be);
  EXPECT_EQ(after.device_to_device - before.device_to_device, inputs.size() + host->size());
  EXPECT_EQ(be.executions(), runs + 1);
  ASSERT_EQ(out->size(), host->size());
  for (size_t i = 0; i < host->size(); ++i) {
    EXPECT_TRUE((*out)[i].owner) << "output " << i << " owns its memory";
    EXPECT_EQ((*out)[i].shape, (*host)[i].shape());
    auto back = be.to_host((*out)[i]);
    ASSERT_TRUE(back) << back.error().to_string();
    // The same kernels on the same inputs: the same bits.
    EXPECT_TRUE(back->bitwise_equal((*host)[i])) << "output " << i;
  }
}

TEST(CudaDeviceIo, MlpRunsOnTheDeviceWithNoHostCopy) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(1);
  CudaBackend be;
  ASSERT_TRUE(be.build(mlp(rng)));
  // A host inference copies its input up and its output down: counted.
  const TransferCounts c0 = counts(be);
  ASSERT_TRUE(be.infer({uniform(rng, {4, 16})}));
  const TransferCounts c1 = counts(be);
  EXPECT_EQ(c1.host_to_device - c0.host_to_device, 1u);
  EXPECT_EQ(c1.host_to_device_bytes - c0.host_to_device_bytes, 4u * 16 * 4);
  EXPECT_EQ(c1.device_to_host - c0.device_to_host, 1u);
  EXPECT_EQ(c1.device_to_host_bytes - c0.device_to_host_bytes, 4u * 8 * 4);
  for (int64_t batch : {1, 4, 7})  // each signature's program, and again (a CUDA graph)
    for (int k = 0; k < 3; ++k) expect_device_matches_host(be, {uniform(rng, {batch, 16})});
}

TEST(CudaDeviceIo, ResnetLikeConvNetMatchesTheHostPath) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(2);
  const Graph g = resnet_like(rng);
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  ASSERT_TRUE(backend_test::all_nodes_on_backend(be, g)) << plan_text(be);
  for (int k = 0; k < 3; ++k) expect_device_matches_host(be, {uniform(rng, {2, 3, 32, 32})});
  // And the host path agrees with the reference.
  const Tensor x = uniform(rng, {1, 3, 32, 32});
  auto want = eval::Interpreter().run_tensors(g, {x});
  auto dx = be.to_device(x);
  ASSERT_TRUE(want && dx);
  auto got = be.infer_on_device({*dx}, {.synchronize = true});
  ASSERT_TRUE(got) << got.error().to_string();
  for (size_t i = 0; i < want->size(); ++i) {
    auto back = be.to_host((*got)[i]);
    ASSERT_TRUE(back);
    EXPECT_TRUE(close(*back, (*want)[i], 1e-4, 1e-5)) << "output " << i;
  }
}

TEST(CudaDeviceIo, CallersStreamOrdersBeforeAndAfter) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(3);
  CudaBackend be;
  ASSERT_TRUE(be.build(mlp(rng)));
  auto d = Driver::get();
  ASSERT_TRUE(d);
  const Api& a = (*d)->api();
  ASSERT_TRUE((*d)->make_current());
  CUstream s = nullptr;
  ASSERT_EQ(a.cuStreamCreate(&s, 1 /* non-blocking: no implicit order with anything */), 0);
  const Tensor x = uniform(rng, {64, 16});
  auto dx = be.to_device(Tensor::zeros(DType::kF32, {64, 16}));
  auto want = be.infer({x});
  ASSERT_TRUE(dx && want);
  // A long copy on the caller's stream first, then the input written there:
  // hone must wait for both, or it reads zeros.
  auto big_a = be.to_device(Tensor::zeros(DType::kF32, {64 << 20}));
  auto big_b = be.to_device(Tensor::zeros(DType::kF32, {64 << 20}));
  ASSERT_TRUE(big_a && big_b);
  for (int rep = 0; rep < 4; ++rep) {
    ASSERT_EQ(a.cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(big_b->data),
                                  reinterpret_cast<CUdeviceptr>(big_a->data), big_a->nbytes(), s),
              0);
    Tensor pinned = *be.allocate_host(DType::kF32, {64, 16});
    std::memcpy(pinned.raw(), x.raw(), x.nbytes());
    ASSERT_EQ(
        a.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dx->data), pinned.raw(), x.nbytes(), s),
        0);
    auto y = be.infer_on_device({*dx}, {.stream = s});
    ASSERT_TRUE(y) << y.error().to_string();
    // Read back on the caller's stream, right after: it must wait for hone.
    Tensor host = *be.allocate_host(DType::kF32, {64, 8});
    ASSERT_EQ(a.cuMemcpyDtoHAsync(host.raw(), reinterpret_cast<CUdeviceptr>((*y)[0].data),
                                  host.nbytes(), s),
              0);
    ASSERT_EQ(a.cuStreamSynchronize(s), 0);
    EXPECT_TRUE(host.bitwise_equal((*want)[0])) << "rep " << rep;
    // Zero the input on the stream for the next round (no host sync between).
    ASSERT_EQ(a.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dx->data), 0, 64 * 16, s), 0);
  }
  ASSERT_EQ(a.cuStreamSynchronize(s), 0);
  (void)a.cuStreamDestroy(s);
}

TEST(CudaDeviceIo, CallerProvidedOutputsAreWrittenInPlace) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(4);
  CudaBackend be;
  ASSERT_TRUE(be.build(mlp(rng)));
  const Tensor x = uniform(rng, {3, 16});
  auto want = be.infer({x});
  auto dx = be.to_device(x);
  auto dy = be.to_device(Tensor::zeros(DType::kF32, {3, 8}));
  ASSERT_TRUE(want && dx && dy);
  DeviceCall call;
  call.outputs = {*dy};
  call.synchronize = true;
  auto out = be.infer_on_device({*dx}, call);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].data, dy->data);
  EXPECT_TRUE(be.to_host(*dy)->bitwise_equal((*want)[0]));
  // A wrong output shape names the output.
  call.outputs = {*be.to_device(Tensor::zeros(DType::kF32, {3, 9}))};
  auto bad = be.infer_on_device({*dx}, call);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("'y'"), std::string::npos) << bad.error().to_string();
}

TEST(CudaDeviceIo, BadInputsNameTheInputAndAxis) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(5);
  CudaBackend be;
  ASSERT_TRUE(be.build(mlp(rng)));
  auto dx = be.to_device(uniform(rng, {2, 16}));
  ASSERT_TRUE(dx);
  auto message = [&](DeviceTensor t) {
    auto r = be.infer_on_device({t});
    return r ? std::string("(no error)") : r.error().to_string();
  };
  DeviceTensor t = *dx;
  t.shape = {2, 15};
  EXPECT_NE(message(t).find("axis 1"), std::string::npos) << message(t);
  t = *dx;
  t.dtype = DType::kI32;
  EXPECT_NE(message(t).find("'x'"), std::string::npos) << message(t);
  t = *dx;
  t.device = 7;
  EXPECT_NE(message(t).find("cuda:7"), std::string::npos) << message(t);
  Tensor host = Tensor::zeros(DType::kF32, {2, 16});
  t = *dx;
  t.data = host.raw();
  EXPECT_NE(message(t).find("not memory CUDA knows"), std::string::npos) << message(t);
  Tensor pinned = *be.allocate_host(DType::kF32, {2, 16});
  t.data = pinned.raw();
  EXPECT_NE(message(t).find("host memory"), std::string::npos) << message(t);
  EXPECT_FALSE(be.infer_on_device({}));
}

TEST(CudaDeviceIo, GraphsWithReferenceNodesAreStagedThroughTheHostAndCounted) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(6);
  GraphBuilder b("mixed");
  ValueId x = b.input("x", DType::kF32, Shape{4, 6});
  ValueId h = b.relu(b.matmul(x, b.constant("w", uniform(rng, {6, 6}))));
  ValueId r = b.op("Hardmax", {h}, {{"axis", int64_t{1}}});  // no cuda kernel
  b.output(b.sigmoid(b.matmul(r, b.constant("w2", uniform(rng, {6, 3})))), "y");
  const Graph g = *std::move(b).build();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  const Tensor in = uniform(rng, {4, 6});
  auto want = be.infer({in});
  auto dx = be.to_device(in);
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_TRUE(dx) << dx.error().to_string();
  const TransferCounts before = counts(be);
  auto got = be.infer_on_device({*dx});
  ASSERT_TRUE(got) << got.error().to_string();
  const TransferCounts after = counts(be);
  // The input down and the output up, and each block's own copies between.
  EXPECT_GE(after.device_to_host - before.device_to_host, 1u);
  EXPECT_GE(after.host_to_device - before.host_to_device, 1u);
  EXPECT_TRUE(be.to_host((*got)[0])->bitwise_equal((*want)[0]));
}

TEST(CudaDeviceIoHost, RefusesBeforeBuildAndCountsNothing) {
  CudaBackend be;
  float fake = 0;
  auto r = be.infer_on_device({DeviceTensor{&fake, DType::kF32, {2, 3}, 0, nullptr}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kFailedPrecondition);
  const std::optional<TransferCounts> c = be.transfers();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->host_to_device + c->device_to_host + c->device_to_device, 0u);
  if (!CudaBackend::unavailable_reason().empty()) {
    // No GPU: no device memory either, with the machine's reason.
    auto d = be.to_device(Tensor::zeros(DType::kF32, {2}));
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), ErrorCode::kUnsupportedHardware);
  }
}

}  // namespace
}  // namespace hone::cuda
