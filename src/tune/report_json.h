// JSON pieces of the tuning report shared by the report and the package
// manifest. Internal to src/; includes nlohmann/json, so keep it out of
// widely included headers.
#pragma once

#include <nlohmann/json.hpp>

#include "hone/tune_report.h"

namespace hone::tune_internal {

nlohmann::json figures_json(const LatencyFigures& f);
LatencyFigures figures_from(const nlohmann::json& j);
nlohmann::json candidate_json(const CandidateResult& c);
CandidateResult candidate_from(const nlohmann::json& j);
nlohmann::json decision_json(const Decision& d);
Decision decision_from(const nlohmann::json& j);

}  // namespace hone::tune_internal
