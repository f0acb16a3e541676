// activations=auto (activations_choice.h): a block's Program for one input
// signature is built with half activations and without, each in its own
// trial of the kernel record (kernel_choices.h), both are timed on the
// device as runs replay them, and the faster is kept: its kernel choices and
// the storage choice go into kernel_choices, the other Program and its
// choices are dropped. A recorded choice builds only that Program, untimed.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "backends/cuda/activations_choice.h"
#include "backends/cuda/cuda_block.h"
#include "core/log.h"

namespace hone::cuda {
namespace {

constexpr int kAutoWarmRuns = 3;   // lazy set-up (cuBLAS, cuDNN) stays out of the times
constexpr int kAutoTimedRuns = 9;  // the median of these

/// Choices timed in this process, keyed by all that makes the two Programs
/// (mode, label, signature, CUDA graphs on or off, both kernel plans): a
/// second backend building the same block decides the same, untimed, as
/// fastest() reuses kernel timings.
struct TimedAuto {
  bool half = false;
  double half_ms = 0, f32_ms = 0;
};
std::mutex timed_auto_mu;
std::map<std::string, TimedAuto>& timed_auto() {
  static std::map<std::string, TimedAuto> m;
  return m;
}

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

Result<std::shared_ptr<const Program>> CudaBlock::build_auto(const ShapeSignature& sig) const {
  const std::string label = activations_label(graph());
  const std::string& mode = settings_.math.mode;
  const std::string shapes = shapes_text(sig);
  const std::string half_type = settings_.math.half == kCudaR16BF ? "bf16" : "f16";
  KernelChoices* rec = settings_.choices.get();
  ActivationsDecision d;
  auto keep = [&](Built b) -> std::shared_ptr<const Program> {
    b.lines.push_back(activations_line(label + " " + shapes, d, half_type));
    publish(b.lines);
    return std::move(b.program);
  };
  // A recorded choice (a package's): that Program only, nothing timed.
  if (rec != nullptr)
    if (auto k = rec->find(KernelChoices::key(label, sig, mode))) {
      HONE_TRY(d.half, recorded_half({label, shapes, mode, *k}));
      d.how = ActivationsDecision::How::kReplayed;
      rec->count_replayed();
      HONE_LOG_DEBUG("cuda: {} {}: {} from kernel_choices, not timed", label, shapes, *k);
      HONE_TRY(Built b, build_as(sig, d.half));
      return keep(std::move(b));
    }
  // Each build's own kernel choices stay in a trial until one is kept.
  auto trial = [&](bool half) {
    if (rec != nullptr) rec->begin_trial();
    Result<Built> b = build_as(sig, half);
    KernelChoices::Trial t = rec != nullptr ? rec->end_trial() : KernelChoices::Trial{};
    return std::make_pair(std::move(b), std::move(t));
  };
  auto [h, h_trial] = trial(true);
  if (!h || !h->any_half) {
    // Nothing to choose: the f32 Program, its choices recorded as they are made.
    if (!h)
      HONE_LOG_WARN("cuda: {} {}: the {} activations plan failed ({}); f32 kept", label, shapes,
                    half_type, h.error().to_string());
    else
      HONE_LOG_DEBUG("cuda: {} {}: no value would be {}; f32 activations, not timed", label, shapes,
                     half_type);
    d.how = h ? ActivationsDecision::How::kOnlyF32 : ActivationsDecision::How::kHalfFailed;
    h = fail(ErrorCode::kInternal, "dropped");  // its Program (and device uploads) go now
    HONE_TRY(Built f, build_as(sig, false));
    return keep(std::move(f));
  }
  auto [f, f_trial] = trial(false);
  if (!f) return fail(std::move(f).error().add_context("while planning " + label + " in f32"));
  const std::string reuse_key = mode + "|" + label + "|" + shapes + "|" +
                                (pool_->graphs ? "graphs" : "no graphs") + "\n" +
                                joined_lines(h->lines) + "--\n" + joined_lines(f->lines);
  {
    std::lock_guard lock(timed_auto_mu);
    if (auto it = timed_auto().find(reuse_key); it != timed_auto().end()) {
      d = {it->second.half, ActivationsDecision::How::kReused, it->second.half_ms,
           it->second.f32_ms};
    }
  }
  if (d.how != ActivationsDecision::How::kReused) {
    // Both on one pooled stream (its handles, its math mode) and one scratch
    // arena of the larger size, given back when timed.
    HONE_TRY(std::unique_ptr<StreamPool::Exec> ex, pool_->take());
    const size_t bytes = std::max({h->program->arena_bytes, f->program->arena_bytes, size_t{256}});
    HONE_TRY(DeviceBuffer arena, DeviceBuffer::allocate(d_, bytes));
    HONE_TRY(d.f32_ms, time_program(*f->program, *ex, arena.ptr()));
    auto half_ms = time_program(*h->program, *ex, arena.ptr());
    if (!half_ms) {
      HONE_LOG_WARN("cuda: {} {}: the {} activations Program failed when timed ({}); f32 kept",
                    label, shapes, half_type, half_ms.error().to_string());
      h = fail(ErrorCode::kInternal, "dropped");
      if (rec != nullptr) rec->commit(f_trial);
      d.how = ActivationsDecision::How::kHalfFailed;
      return keep(std::move(*f));
    }
    pool_->give(std::move(ex));
    d.half_ms = *half_ms;
    d.half = half_wins(d.half_ms, d.f32_ms);
    d.how = ActivationsDecision::How::kTimed;
    std::lock_guard lock(timed_auto_mu);
    timed_auto().emplace(reuse_key, TimedAuto{d.half, d.half_ms, d.f32_ms});
  }
  HONE_LOG_DEBUG(
      "cuda: {} {}: half ({}) {:.3f} ms, f32 {:.3f} ms{}; chose {}", label, shapes, half_type,
      d.half_ms, d.f32_ms,
      d.how == ActivationsDecision::How::kReused ? " (timed earlier in this process)" : "",
      d.half ? "half" : "f32");
  if (rec != nullptr) {
    rec->commit(d.half ? h_trial : f_trial);
    rec->record(label, sig, mode, d.half ? "half" : "f32",
                d.how == ActivationsDecision::How::kTimed ? KernelChoices::How::kTimed
                                                          : KernelChoices::How::kReused);
  }
  Built kept = d.half ? std::move(*h) : std::move(*f);
  h = fail(ErrorCode::kInternal, "dropped");  // the other Program and its uploads go now
  f = fail(ErrorCode::kInternal, "dropped");
  return keep(std::move(kept));
}

Result<double> CudaBlock::time_program(const Program& program, StreamPool::Exec& ex,
                                       CUdeviceptr arena) const {
  const Api& a = d_.api();
  const CUstream s = ex.stream.get();
  // Zeros everywhere: integer inputs (token ids) index a Gather's first row,
  // in range. f32 inputs 0.01, as op timing fills them (never zeros, which
  // can run faster than data).
  HONE_CHECK_OK(
      d_.check(a.cuMemsetD32Async(arena, 0, program.arena_bytes / 4, s), "cuMemsetD32Async"));
  constexpr unsigned kPointZeroOne = 0x3C23D70Au;  // 0.01f
  for (size_t slot : program.input_slots) {
    const Program::Slot& sl = program.slots[slot];
    if (sl.dtype != DType::kF32 || sl.constant) continue;
    HONE_CHECK_OK(d_.check(a.cuMemsetD32Async(program.address(slot, arena), kPointZeroOne,
                                              static_cast<size_t>(numel_of(sl.dims)), s),
                           "cuMemsetD32Async"));
  }
  const ExecCtx ctx{d_, fixed_, s, ex.stream.blas(), ex.stream.dnn()};
  for (int i = 0; i < kAutoWarmRuns; ++i) HONE_CHECK_OK(run_steps(program, ctx, arena));
  // Timed as runs replay it: one CUDA graph where it captures (cuda_graphs),
  // else enqueued step by step.
  std::optional<GraphExec> replay;
  if (pool_->graphs && !program.no_graph.load(std::memory_order_relaxed) &&
      GraphExec::begin(d_, s)) {
    auto captured = run_steps(program, ctx, arena);
    auto made = GraphExec::end(d_, s);
    if (captured && made)
      replay = std::move(*made);
    else
      HONE_LOG_DEBUG("cuda: block '{}' is timed without a CUDA graph: {}", graph().name(),
                     (captured ? made.error() : captured.error()).to_string());
  }
  auto once = [&]() -> Result<void> {
    return replay ? replay->launch(s) : run_steps(program, ctx, arena);
  };
  HONE_CHECK_OK(once());
  HONE_TRY(EventPair ev, EventPair::create(d_));
  std::vector<double> ms;
  for (int r = 0; r < kAutoTimedRuns; ++r) {
    HONE_CHECK_OK(d_.check(a.cuEventRecord(ev.begin(), s), "cuEventRecord"));
    HONE_CHECK_OK(once());
    HONE_CHECK_OK(d_.check(a.cuEventRecord(ev.end(), s), "cuEventRecord"));
    HONE_CHECK_OK(d_.check(a.cuEventSynchronize(ev.end()), "cuEventSynchronize"));
    float t = 0;
    HONE_CHECK_OK(d_.check(a.cuEventElapsedTime(&t, ev.begin(), ev.end()), "cuEventElapsedTime"));
    ms.push_back(static_cast<double>(t));
  }
  return median_ms(std::move(ms));
}

}  // namespace hone::cuda
