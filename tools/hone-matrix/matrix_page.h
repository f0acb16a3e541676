// The feature-matrix page: its data model (tabs, rows, columns, cells), the
// self-contained HTML it renders to, and merging a test run's cell updates.
//
//   HONE_TRY(auto data, matrix::data_from_features(features_json));   // all untested
//   HONE_TRY(auto merged, matrix::merge_updates(data, updates_json));  // validates
//   std::string html = matrix::render_page(merged);
//
// A cell ID is "<tab>.<row>/<column>". The page keeps every status in one
// inline <script type="application/json" id="matrix-data"> block, so tools and
// tests read the page, never scrape the table.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hone/error.h"

namespace hone::matrix {

enum class CellStatus { kUntested, kPassed, kSkipped, kFailed };

std::string_view to_string(CellStatus s);
[[nodiscard]] Result<CellStatus> parse_status(std::string_view s);
/// The worse of two results: failed > skipped > passed > untested.
CellStatus worst(CellStatus a, CellStatus b);

/// Page data from a features definition (tests/functional/features.json):
/// tabs with rows and columns expanded ("backends" → the backend list), every
/// cell untested. Errors name the malformed tab or row.
[[nodiscard]] Result<nlohmann::json> data_from_features(const nlohmann::json& features);
/// Every cell ID the data defines.
std::set<std::string> cell_ids(const nlohmann::json& data);
/// Checks structure, statuses and that every cell belongs to a tab/row/column.
[[nodiscard]] Result<void> validate_data(const nlohmann::json& data);
/// Applies {"cells": {ID: {status, reason, tests, updated}}} to a copy of
/// `data`; an ID the data lacks, or a bad status, is an error listing them.
/// Cells the updates do not mention keep their old value.
[[nodiscard]] Result<nlohmann::json> merge_updates(const nlohmann::json& data,
                                                   const nlohmann::json& updates);

/// A run made elsewhere (the functional suite on a GPU machine): only the
/// cells of `backend` (its column, or its row in tabs whose rows are
/// backends) are taken, each stamped with a "source" line from the
/// updates' "run" object (device, driver, commit, time, all required), and
/// the page's own "run" is kept. Errors name what is missing.
[[nodiscard]] Result<nlohmann::json> merge_backend_from(const nlohmann::json& data,
                                                        const nlohmann::json& updates,
                                                        const std::string& backend);

/// The whole self-contained page (inline CSS and JS, no network).
std::string render_page(const nlohmann::json& data);
/// The JSON inside a rendered page's matrix-data block.
[[nodiscard]] Result<nlohmann::json> extract_data(std::string_view html);
/// "matrix: 12 passed, 3 skipped, 0 failed, 140 untested (155 cells)"
std::string summary(const nlohmann::json& data);

}  // namespace hone::matrix
