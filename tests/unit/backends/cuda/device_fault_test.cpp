// Device faults survived: a run that needs more device memory than is free
// (another process holding the GPU, a batch too large) fails with
// kOutOfMemory naming the bytes asked for and the device's free and total
// memory, gives back what it took, is not remembered (the same batch runs
// once memory is back) and never runs on the host reference in its place;
// a tune whose cuda candidate runs out of memory goes on with the others.
// Skipped, with the reason, without a CUDA device.
#include <random>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/device_pool.h"
#include "cuda_test_util.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone::cuda {
namespace {

using testing_util::uniform;

constexpr int64_t kIn = 16, kOut = 4096;
constexpr size_t kMiB = size_t{1} << 20;

/// x[batch, 16] -> MatMul 16x4096 -> Relu: 16 KiB of output per row, little
/// work, so a batch of 16384 needs 256 MiB of device memory for its output
/// and the reference computes it in a moment.
Graph wide_rows() {
  std::mt19937 rng(41);
  GraphBuilder b("wide_rows");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kIn});
  b.output(b.relu(b.matmul(x, b.constant("w", uniform(rng, {kIn, kOut}, -0.5f, 0.5f)))), "y");
  return *std::move(b).build();
}

/// Holds the device's free memory but about `leave` bytes until destroyed,
/// as another process on the same GPU would.
class Hog {
 public:
  Hog(const Driver& d, size_t leave) : d_(d) {
    for (size_t chunk : {size_t{1024} * kMiB, size_t{64} * kMiB, size_t{4} * kMiB}) {
      for (;;) {
        auto info = d.memory_info();
        if (!info || info->first < leave + chunk) break;
        CUdeviceptr p = 0;
        if (d.api().cuMemAlloc(&p, chunk) != 0) break;
        held_.push_back(p);
      }
    }
  }
  ~Hog() {
    for (CUdeviceptr p : held_) (void)d_.api().cuMemFree(p);
  }
  Hog(const Hog&) = delete;
  Hog& operator=(const Hog&) = delete;

 private:
  const Driver& d_;
  std::vector<CUdeviceptr> held_;
};

/// The device's free bytes once hone's pool has given its cached blocks back.
size_t free_after_trim(const Driver& d) {
  DevicePool::trim(d);
  auto info = d.memory_info();
  EXPECT_TRUE(info) << info.error().to_string();
  return info ? info->first : 0;
}

Tensor rows(int64_t batch, uint32_t seed) {
  std::mt19937 rng(seed);
  return uniform(rng, {batch, kIn}, -1.0f, 1.0f);
}

TEST(CudaDeviceFault, ABatchThatDoesNotFitFailsClearlyLeaksNothingAndRunsLater) {
  HONE_REQUIRE_CUDA();
  auto d = Driver::get();
  ASSERT_TRUE(d) << d.error().to_string();
  ASSERT_TRUE((*d)->make_current());
  const Graph g = wide_rows();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  const Tensor small = rows(2, 1), big = rows(16384, 2);
  ASSERT_TRUE(be.infer({small}));
  const size_t before = free_after_trim(**d);
  {
    Hog hog(**d, 96 * kMiB);
    auto r = be.infer({big});
    ASSERT_FALSE(r) << "batch 16384 ran with about 96 MiB of device memory free";
    EXPECT_EQ(r.error().code(), ErrorCode::kOutOfMemory) << r.error().to_string();
    const std::string text = r.error().to_string();
    EXPECT_NE(text.find("bytes of device memory"), std::string::npos) << text;
    EXPECT_NE(text.find("free of"), std::string::npos) << text;
    EXPECT_EQ(be.fallback_runs(), 0u) << "the batch that did not fit ran on the reference";
    // The batch that fits still runs beside the other process.
    auto again = be.infer({small});
    EXPECT_TRUE(again) << again.error().to_string();
  }
  // Everything the failed run took is back (the pool's cache given back too;
  // 16 MiB of slack for the driver's own bookkeeping).
  const size_t after = free_after_trim(**d);
  EXPECT_GE(after + 16 * kMiB, before)
      << "device memory free before " << before << ", after " << after;
  // Not remembered as a failure: with the memory back, the batch runs on the GPU.
  const uint64_t kernels = be.kernel_executions();
  auto ok = be.infer({big});
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_GT(be.kernel_executions(), kernels);
  EXPECT_EQ(be.fallback_runs(), 0u);
  auto want = eval::Interpreter().run_tensors(g, {big});
  ASSERT_TRUE(want);
  EXPECT_TRUE(testing_util::close((*ok)[0], (*want)[0], 1e-4, 1e-5));
}

TEST(CudaDeviceFault, ATuneGoesOnWhenTheCudaCandidateRunsOutOfMemory) {
  HONE_REQUIRE_CUDA();
  auto d = Driver::get();
  ASSERT_TRUE(d) << d.error().to_string();
  ASSERT_TRUE((*d)->make_current());
  const size_t before = free_after_trim(**d);
  TuneOptions o;
  o.threads = 4;
  o.use_cache = false;
  o.profile.warmup = 1;
  o.profile.min_runs = 2;
  o.profile.window = 2;
  o.profile.max_runs = 4;
  o.candidate_budget_s = 2.0;
  o.batch_sizes = {8192};
  SampleMap m;
  m.emplace("x", rows(8192, 3));
  const std::vector<Sample> samples{Sample(std::move(m))};
  Result<TunedModel> tuned = [&] {
    Hog hog(**d, 64 * kMiB);
    return tune(wide_rows(), samples, MaxThroughput({"cuda"}), o);
  }();
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const TuneReport& r = tuned->report();
  const CandidateResult* cuda = nullptr;
  for (const auto& c : r.candidates)
    if (c.backend == "cuda") cuda = &c;
  ASSERT_NE(cuda, nullptr) << r.table();
  ASSERT_TRUE(cuda->error.has_value()) << r.table();
  EXPECT_EQ(cuda->error->code(), ErrorCode::kOutOfMemory) << cuda->error->to_string();
  EXPECT_FALSE(cuda->lost_because.empty());
  EXPECT_NE(r.decision.chosen(), "cuda") << r.table();
  const size_t after = free_after_trim(**d);
  EXPECT_GE(after + 16 * kMiB, before)
      << "device memory free before " << before << ", after " << after;
}

}  // namespace
}  // namespace hone::cuda
