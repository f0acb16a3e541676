// How a group of ranks turns its results into one: the reduction of a
// candidate's figures (throughput the minimum, latency the maximum, correct
// only when correct everywhere, the first failing rank's error), and the
// decision hash every rank compares. Pure functions: no MPI here.
//
//   CandidateResult agreed = dist::reduce_candidate(per_rank);   // index = rank
//   std::string h = dist::decision_hash(report.decision);
#pragma once

#include <string>
#include <vector>

#include "hone/tune_report.h"

namespace hone::dist {

/// The group's result of one candidate from every rank's (index = rank;
/// at least one). Rank 0's names, config, partition and kernel plan; built,
/// checked, correct and cached only when so on every rank; the first
/// failing rank's error or correctness failure, its message naming that
/// rank; a skip on any rank skips it. Per batch size measured on every rank:
/// the latencies (p50, p90, p99, mean, min, max) and cv their maximum, the
/// throughput and runs their minimum. A batch some rank lacks is dropped.
CandidateResult reduce_candidate(const std::vector<CandidateResult>& per_rank);

/// Hex SHA-256 of the decision's deterministic JSON: backend, config,
/// kernel plan, figures, reason, losers.
std::string decision_hash(const Decision& decision);

}  // namespace hone::dist
