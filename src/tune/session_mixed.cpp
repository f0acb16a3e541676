// Mixed precision by bisection: a reduced-precision candidate that failed the
// gate gets the smallest set of nodes to keep in fp32 that this search finds.
//
// The nodes are those of the graph the backends build (the passes' result),
// in topological order. Keeping every node in fp32 must pass, or there is no
// mixed plan. Then, assuming more fp32 nodes never hurt: a binary search for
// the shortest prefix [0, end) that passes, a second for the latest start of
// a window [start, end) that still passes, and last, pruning: runs of nodes
// inside the window (halving in length down to one node) are dropped when the
// plan still passes without them (the window's two ends are needed by
// construction). Every probe is one build and one run of the check inputs;
// the search stops at kMaxProbes or the tune's time budget.
#include <algorithm>
#include <chrono>

#include <fmt/core.h>

#include "core/log.h"
#include "tune/session.h"

namespace hone::tune_internal {
namespace {

constexpr int kMaxProbes = 48;

std::vector<std::string> slice(const std::vector<std::string>& xs, size_t from, size_t to) {
  return {xs.begin() + static_cast<std::ptrdiff_t>(from),
          xs.begin() + static_cast<std::ptrdiff_t>(to)};
}

}  // namespace

std::unique_ptr<Backend> Session::search_fp32_nodes(const std::string& name, CandidateResult& r,
                                                    int index) {
  if (!options_.mixed_precision || r.error) return nullptr;
  // The precision the candidate's name or the user's --config asked for.
  auto probe = create_backend(name);
  if (!probe || !is_reduced((*probe)->precision()) || !(*probe)->capabilities().mixed_precision)
    return nullptr;
  const Graph& g = optimized_ && optimized_->graph ? *optimized_->graph : graph_;
  auto order = g.topological_order();
  if (!order || order->empty()) return nullptr;
  std::vector<std::string> nodes;
  for (NodeId id : *order) nodes.push_back(g.node(id).name);

  const auto t0 = std::chrono::steady_clock::now();
  int probes = 0;
  auto passes = [&](const std::vector<std::string>& keep) {
    ++probes;
    CandidateResult probe;
    probe.backend = name;
    emit(name, fmt::format("mixed precision: probe {} ({} nodes in fp32)", probes, keep.size()),
         index, 0.2);
    auto be = build_and_check(name, probe, index, keep);
    HONE_LOG_DEBUG("tune: {}: {} nodes in fp32: {}", name, keep.size(),
                   be            ? "passes"
                   : probe.error ? probe.error->message()
                                 : "fails the gate");
    return be != nullptr;
  };
  auto out_of_time = [&] {
    return probes >= kMaxProbes ||
           (options_.time_budget_s > 0 && elapsed_s() >= options_.time_budget_s);
  };

  const std::string pure = r.correctness.message;
  if (!passes(nodes)) {
    r.lost_because = fmt::format("{}; keeping all {} nodes in fp32 fails too, so no mixed plan",
                                 pure, nodes.size());
    return nullptr;
  }
  // The shortest prefix that passes ([0, 0) is the pure plan, which failed).
  size_t lo = 1, hi = nodes.size();
  while (lo < hi && !out_of_time()) {
    const size_t mid = lo + (hi - lo) / 2;
    if (passes(slice(nodes, 0, mid)))
      hi = mid;
    else
      lo = mid + 1;
  }
  const size_t end = hi;
  // The latest start of a window ending there that still passes.
  size_t first = 0, last = end - 1;
  while (first < last && !out_of_time()) {
    const size_t mid = first + (last - first + 1) / 2;
    if (passes(slice(nodes, mid, end)))
      first = mid;
    else
      last = mid - 1;
  }
  std::vector<std::string> keep = slice(nodes, first, end);
  // Pruning inside the window (its ends are needed by the two searches): runs
  // of nodes are dropped where the plan passes without them, halving the run
  // length down to single nodes, so a window of mostly harmless nodes (Relu,
  // reshapes) costs a few probes rather than one per node.
  for (size_t run = std::max<size_t>(1, (keep.size() - std::min<size_t>(keep.size(), 2)) / 2);
       keep.size() > 2 && !out_of_time(); run /= 2) {
    for (size_t i = 1; i + 1 < keep.size() && !out_of_time();) {
      const size_t n = std::min(run, keep.size() - 1 - i);
      std::vector<std::string> without = keep;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i),
                    without.begin() + static_cast<std::ptrdiff_t>(i + n));
      if (passes(without))
        keep = std::move(without);
      else
        i += n;
    }
    if (run == 1) break;
  }

  CandidateResult mixed;
  mixed.backend = name;
  auto be = build_and_check(name, mixed, index, keep);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!be) return nullptr;  // a flaky probe: keep the pure plan's failure
  // The pure plan stays in the report as its own row, saying why it lost.
  CandidateResult failed = std::move(r);
  failed.backend = name + " (no fp32 nodes)";
  failed.lost_because = fmt::format("wrong results: {}; {} keeps {} of {} nodes in fp32 instead",
                                    pure, name, keep.size(), nodes.size());
  order_.insert(std::find(order_.begin(), order_.end(), name), failed.backend);
  results_[failed.backend] = std::move(failed);
  r = std::move(mixed);
  std::string names;
  for (const auto& n : keep) names += (names.empty() ? "" : ", ") + n;
  HONE_LOG_INFO(
      "tune: {} fails the gate; with {} of {} nodes in fp32 it passes ({} probes, "
      "{:.1f} s): {}",
      name, keep.size(), nodes.size(), probes, s, names);
  return be;
}

}  // namespace hone::tune_internal
