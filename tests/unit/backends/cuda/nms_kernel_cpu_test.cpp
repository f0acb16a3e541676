// The cuda backend's NonMaxSuppression kernels (kernels/nms.cu, after
// ops/nms_select.h, the text NVRTC compiles) run on CPU threads, so their
// selection is checked against the reference's hone_nms_run on a machine
// without a GPU: each thread block is its threads as std::threads, one
// std::barrier its __syncthreads, a function-static its __shared__ memory,
// and the workspace laid out by nms_layout.h, as ops_nms.cpp lays it out.
// This checks the algorithm and its synchronisation (the blocks' threads
// really race; run it under TSan to check the barriers), not the CUDA
// compiler: CudaNms's tests (nms_test.cpp) run the kernels on a device.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/nms_layout.h"
#include "ops/nms.h"

namespace hone::cuda::nms_cpu {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local Dim3 threadIdx, blockIdx;
Dim3 gridDim, blockDim;
std::barrier<>* block_barrier = nullptr;

void __syncthreads() {
  block_barrier->arrive_and_wait();
}
int atomicAdd(int* p, int v) {
  return std::atomic_ref<int>(*p).fetch_add(v);
}
double __dmul_rn(double a, double b) {
  return a * b;
}

// The device text, as NVRTC sees it (its own int64_t, device functions), in
// a namespace of its own.
namespace device {
#undef HONE_OPS_NMS_SELECT_H
#undef HONE_NMS_FN
#undef HONE_NMS_MUL
#define __CUDACC_RTC__ 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
// clang-format off
#include "ops/nms_select.h"  // ahead of nms.cu, as kernels.cpp joins them
#include "backends/cuda/kernels/nms.cu"
// clang-format on
#undef __launch_bounds__
#undef __shared__
#undef __forceinline__
#undef __device__
#undef __global__
#undef __CUDACC_RTC__
}  // namespace device
using device::hone_nms_rows;
using device::hone_nms_select;

namespace {

/// Runs `kernel` on a grid of `blocks` blocks of `threads` threads, one
/// block after another, each block's threads at once.
template <class Kernel>
void run_grid(unsigned blocks, unsigned threads, Kernel kernel) {
  gridDim = {blocks, 1, 1};
  blockDim = {threads, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    std::barrier<> barrier(threads);
    block_barrier = &barrier;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&kernel, b, t] {
        blockIdx = {b, 0, 0};
        threadIdx = {t, 0, 0};
        kernel();
      });
    for (std::thread& t : ts) t.join();
  }
}

struct Case {
  int64_t batches, classes, boxes;
  int center;
  int64_t max_out;
  double iou;
  bool has_thr;
  double thr;
};

/// `c`'s boxes: random over a 150 x 150 image (corners in either order, or
/// centers and sizes), one in seven a copy of the one before; scores in 16
/// steps (ties), some -0.0 and some 0.
void make_inputs(const Case& c, std::mt19937& rng, std::vector<float>& boxes,
                 std::vector<float>& scores) {
  std::uniform_real_distribution<float> at(0.f, 150.f), side(2.f, 30.f);
  for (int64_t i = 0; i < c.batches * c.boxes; ++i) {
    const float y = at(rng), x = at(rng), h = side(rng), w = side(rng);
    if (rng() % 7 == 0 && i > 0) {
      const std::vector<float> last(boxes.end() - 4, boxes.end());
      boxes.insert(boxes.end(), last.begin(), last.end());
    } else if (c.center) {
      boxes.insert(boxes.end(), {x, y, w, h});
    } else if (rng() % 2) {
      boxes.insert(boxes.end(), {y, x, y + h, x + w});
    } else {
      boxes.insert(boxes.end(), {y + h, x + w, y, x});
    }
  }
  for (int64_t i = 0; i < c.batches * c.classes * c.boxes; ++i)
    scores.push_back(rng() % 23 == 0 ? -0.0f : static_cast<float>(rng() % 16) / 16.0f - 0.05f);
}

/// The kernels' rows for `c` on `threads` threads a block, the workspace laid
/// out as ops_nms.cpp plans it (nms_layout.h).
std::vector<int64_t> kernel_rows(const Case& c, const std::vector<float>& boxes,
                                 const std::vector<float>& scores, unsigned threads) {
  const NmsLayout l = nms_layout(c.boxes, c.max_out);
  const long long nb = c.boxes, classes = c.classes, pairs = c.batches * c.classes;
  const long long p2 = l.p2, keep_max = l.keep_max, pair_bytes = l.pair_bytes;
  const bool selects = pairs > 0 && keep_max > 0;
  std::vector<unsigned char> work(selects ? static_cast<size_t>(pairs * pair_bytes + 8 * pairs)
                                          : 16);
  const long long capacity = pairs * keep_max * 3;
  std::vector<long long> y(static_cast<size_t>(capacity + 1), -7);
  if (selects)
    run_grid(static_cast<unsigned>(pairs), threads, [&] {
      hone_nms_select(boxes.data(), scores.data(), work.data(), pair_bytes, nb, classes, p2,
                      keep_max, c.center, c.iou, c.has_thr ? 1 : 0, c.thr);
    });
  const long long rows_pairs = selects ? pairs : 0;
  run_grid(1, 32, [&] {
    hone_nms_rows(work.data(), y.data(), rows_pairs, classes, pair_bytes, p2, nb, capacity);
  });
  const long long count = y[static_cast<size_t>(capacity)];
  std::vector<int64_t> rows(y.begin(), y.begin() + 3 * count);
  return rows;
}

std::vector<int64_t> reference_rows(const Case& c, const std::vector<float>& boxes,
                                    const std::vector<float>& scores) {
  ops::NmsParams p;
  p.center = c.center, p.max_out = c.max_out, p.iou = c.iou;
  p.has_score_threshold = c.has_thr, p.score_threshold = c.thr;
  const ops::NmsDims d{c.batches, c.classes, c.boxes};
  std::vector<int64_t> work(static_cast<size_t>(std::max<int64_t>(1, d.scratch_words())));
  std::vector<int64_t> out(static_cast<size_t>(3 * d.rows_max(c.max_out) + 3));
  const int64_t n =
      ops::nms_select(p, d, boxes.data(), scores.data(), false, work.data(), out.data());
  out.resize(static_cast<size_t>(3 * n));
  return out;
}

// Random problems: 1-2 batches, 1-3 classes, up to 500 boxes (sorts of
// several powers of two, padding included), caps from 0 to every box, IoU
// thresholds 0 to 0.85, with and without a score threshold, both box
// formats; blocks of 64 threads and of 37 (no power of two).
TEST(CudaNmsKernelOnCpu, SelectsTheReferenceRows) {
  std::mt19937 rng(5);
  for (int round = 0; round < 12; ++round) {
    Case c;
    c.batches = 1 + rng() % 2, c.classes = 1 + rng() % 3;
    c.boxes = round == 0 ? 0 : round % 5 == 0 ? 1 + rng() % 5 : 50 + rng() % 450;
    c.center = static_cast<int>(rng() % 2);
    c.max_out = round % 4 == 0 ? rng() % 8 : rng() % 3 ? 100000 : 30;
    c.iou = static_cast<double>(rng() % 4) / 4.0 + 0.1 * static_cast<double>(rng() % 2);
    c.has_thr = rng() % 2 == 0;
    c.thr = static_cast<double>(rng() % 5) / 10.0 - 0.1;
    const std::string what = "batches " + std::to_string(c.batches) + " classes " +
                             std::to_string(c.classes) + " boxes " + std::to_string(c.boxes) +
                             " center " + std::to_string(c.center) + " max_out " +
                             std::to_string(c.max_out) + " iou " + std::to_string(c.iou) +
                             (c.has_thr ? " threshold " + std::to_string(c.thr) : "");
    SCOPED_TRACE(what);
    std::vector<float> boxes, scores;
    make_inputs(c, rng, boxes, scores);
    const std::vector<int64_t> want = reference_rows(c, boxes, scores);
    for (unsigned threads : {64u, 37u}) {
      const std::vector<int64_t> got = kernel_rows(c, boxes, scores, threads);
      ASSERT_EQ(got.size(), want.size()) << threads << " threads";
      EXPECT_EQ(got, want) << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace hone::cuda::nms_cpu
