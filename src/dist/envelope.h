// What each rank sends at an agreement point: the step it is at, and either
// its data or its error. Every agreement is one all-gather of these, so a
// rank that failed anywhere can join whatever step the others are at, and
// they all fail with its error. Pure functions: no MPI here.
//
//   std::string mine = dist::seal("candidate onednn", Result<std::string>(data));
//   HONE_TRY(std::vector<std::string> data, dist::open_all("candidate onednn", gathered));
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"

namespace hone::dist {

/// This rank's message for `step`: its data, or its error (code, message
/// and context kept).
std::string seal(std::string_view step, const Result<std::string>& mine);

/// Every rank's data (index = rank), or the error of the lowest rank that
/// failed, its message starting "rank R: " (unless every rank failed with the
/// same error: then that error as it is); an error naming both steps when
/// the ranks are out of step, and one naming the rank whose message is
/// unreadable.
Result<std::vector<std::string>> open_all(std::string_view step,
                                          const std::vector<std::string>& sealed);

}  // namespace hone::dist
