// dist::Group: the TuneGroup of `mpirun -np N hone tune`, over a Transport.
// Every agreement is one exchange of sealed messages (dist/envelope.h), so a
// rank that failed anywhere joins the others' next exchange with its error
// and every rank fails with it; exchanges time out instead of waiting forever.
//
//   HONE_TRY(auto t, dist::open_mpi());
//   dist::Group g(std::move(t), {.split_candidates = false, .timeout_s = 600});
//   options.group = &g;   // hone::tune on every rank; on a local error: g.fail_everywhere(e)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dist/transport.h"
#include "hone/tune_group.h"

namespace hone::dist {

struct GroupOptions {
  bool split_candidates = false;  // --distribute candidates
  double timeout_s = 600;         // per exchange: how long a rank waits for the slowest
};

class Group final : public TuneGroup {
 public:
  Group(std::unique_ptr<Transport> transport, GroupOptions options);

  int rank() const override { return transport_->rank(); }
  int size() const override { return transport_->size(); }
  bool split_candidates() const override { return options_.split_candidates; }

  /// One agreement point: every rank's data (index = rank), or the lowest
  /// failing rank's error. After a failure, no rank talks again: every later
  /// call returns that error at once.
  [[nodiscard]] Result<std::vector<std::string>> exchange(std::string_view step,
                                                          const Result<std::string>& mine);
  /// This rank failed: the other ranks learn it at their next exchange.
  /// Returns the group's error (the lowest failing rank's; this one's when
  /// the group already failed with it).
  Error fail_everywhere(const Error& error);
  /// The error the group failed with, if it did.
  const std::optional<Error>& failure() const { return failure_; }

  Result<void> agree_candidate(CandidateResult& r) override;
  Result<void> agree_batch_search(BatchSearchResult& s) override;
  Result<std::vector<CandidateResult>> share_candidates(
      const std::vector<CandidateResult>& mine) override;
  Result<void> agree_report(TuneReport& r) override;

 private:
  /// A failure every rank found in the same messages: no exchange needed.
  std::unexpected<Error> all_fail(Error error);

  std::unique_ptr<Transport> transport_;
  GroupOptions options_;
  std::optional<Error> failure_;
};

}  // namespace hone::dist
