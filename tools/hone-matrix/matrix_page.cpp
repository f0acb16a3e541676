#include "hone-matrix/matrix_page.h"

#include <map>

namespace hone::matrix {

using nlohmann::json;

std::string_view to_string(CellStatus s) {
  switch (s) {
    case CellStatus::kUntested:
      return "untested";
    case CellStatus::kPassed:
      return "passed";
    case CellStatus::kSkipped:
      return "skipped";
    case CellStatus::kFailed:
      return "failed";
  }
  return "untested";
}

Result<CellStatus> parse_status(std::string_view s) {
  if (s == "untested") return CellStatus::kUntested;
  if (s == "passed") return CellStatus::kPassed;
  if (s == "skipped") return CellStatus::kSkipped;
  if (s == "failed") return CellStatus::kFailed;
  return fail(ErrorCode::kInvalidArgument,
              "unknown cell status '" + std::string(s) + "' (passed, skipped, failed, untested)");
}

CellStatus worst(CellStatus a, CellStatus b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

namespace {

Result<std::vector<std::string>> expand_list(const json& spec, const json& backends,
                                             const std::string& where) {
  std::vector<std::string> out;
  if (spec.is_string() && spec.get<std::string>() == "backends") {
    for (const auto& b : backends) out.push_back(b.get<std::string>());
    return out;
  }
  if (!spec.is_array())
    return fail(ErrorCode::kInvalidArgument, where + " must be \"backends\" or a list");
  for (const auto& item : spec) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_object() && item.contains("id") && item["id"].is_string()) {
      out.push_back(item["id"].get<std::string>());
    } else {
      return fail(ErrorCode::kInvalidArgument,
                  where + " has an entry without an id: " + item.dump());
    }
  }
  return out;
}

std::string row_title(const json& rows_spec, const std::string& id) {
  if (rows_spec.is_array())
    for (const auto& r : rows_spec)
      if (r.is_object() && r.value("id", "") == id) return r.value("title", id);
  return id;
}

}  // namespace

Result<json> data_from_features(const json& features) {
  if (!features.is_object() || !features.contains("tabs") || !features["tabs"].is_array())
    return fail(ErrorCode::kInvalidArgument, "features must be an object with a 'tabs' list");
  const json backends = features.value("backends", json::array());
  if (!backends.is_array())
    return fail(ErrorCode::kInvalidArgument, "features 'backends' must be a list of names");
  json data;
  data["title"] = features.value("title", "feature matrix");
  data["tabs"] = json::array();
  data["cells"] = json::object();
  std::set<std::string> tab_ids;
  for (const auto& tab : features["tabs"]) {
    if (!tab.is_object() || !tab.contains("id") || !tab["id"].is_string())
      return fail(ErrorCode::kInvalidArgument, "a tab has no string 'id': " + tab.dump());
    const std::string tid = tab["id"];
    if (!tab_ids.insert(tid).second)
      return fail(ErrorCode::kInvalidArgument, "tab '" + tid + "' is defined twice");
    HONE_TRY(auto rows,
             expand_list(tab.value("rows", json::array()), backends, "tab '" + tid + "' rows"));
    HONE_TRY(auto cols, expand_list(tab.value("columns", json("backends")), backends,
                                    "tab '" + tid + "' columns"));
    json t;
    t["id"] = tid;
    t["title"] = tab.value("title", tid);
    t["columns"] = cols;
    t["rows"] = json::array();
    for (const auto& r : rows) {
      t["rows"].push_back({{"id", r}, {"title", row_title(tab.value("rows", json()), r)}});
      for (const auto& c : cols) data["cells"][tid + "." + r + "/" + c] = {{"status", "untested"}};
    }
    data["tabs"].push_back(std::move(t));
  }
  return data;
}

std::set<std::string> cell_ids(const json& data) {
  std::set<std::string> ids;
  if (!data.contains("tabs")) return ids;
  for (const auto& tab : data["tabs"])
    for (const auto& r : tab["rows"])
      for (const auto& c : tab["columns"])
        ids.insert(tab["id"].get<std::string>() + "." + r["id"].get<std::string>() + "/" +
                   c.get<std::string>());
  return ids;
}

Result<void> validate_data(const json& data) {
  if (!data.is_object() || !data.contains("tabs") || !data["tabs"].is_array() ||
      !data.contains("cells") || !data["cells"].is_object())
    return fail(ErrorCode::kCorrupt, "matrix data must have 'tabs' (list) and 'cells' (object)");
  for (const auto& tab : data["tabs"]) {
    if (!tab.contains("id") || !tab.contains("rows") || !tab.contains("columns") ||
        !tab["rows"].is_array() || !tab["columns"].is_array())
      return fail(ErrorCode::kCorrupt,
                  "matrix tab needs id, rows and columns: " + tab.dump().substr(0, 200));
    for (const auto& r : tab["rows"])
      if (!r.is_object() || !r.contains("id") || !r["id"].is_string())
        return fail(ErrorCode::kCorrupt, "tab '" + tab["id"].dump() + "' has a row without an id");
    for (const auto& c : tab["columns"])
      if (!c.is_string())
        return fail(ErrorCode::kCorrupt, "tab '" + tab["id"].dump() + "' has a non-string column");
  }
  const auto ids = cell_ids(data);
  std::string unknown;
  for (const auto& [id, cell] : data["cells"].items()) {
    if (!ids.count(id)) unknown += (unknown.empty() ? "" : ", ") + id;
    if (!cell.is_object() || !cell.contains("status") || !cell["status"].is_string())
      return fail(ErrorCode::kCorrupt, "cell '" + id + "' has no status");
    HONE_CHECK_OK_CTX(parse_status(cell["status"].get<std::string>()), "in cell '" + id + "'");
    if (cell["status"] == "skipped" && cell.value("reason", "").empty())
      return fail(ErrorCode::kCorrupt, "cell '" + id + "' is skipped without a reason");
  }
  if (!unknown.empty())
    return fail(ErrorCode::kCorrupt, "Unknown feature-matrix cell IDs: " + unknown);
  for (const auto& id : ids)
    if (!data["cells"].contains(id))
      return fail(ErrorCode::kCorrupt, "cell '" + id + "' is missing from the data");
  return {};
}

Result<json> merge_updates(const json& data, const json& updates) {
  HONE_CHECK_OK_CTX(validate_data(data), "in the base matrix");
  if (!updates.is_object() || !updates.contains("cells") || !updates["cells"].is_object())
    return fail(ErrorCode::kInvalidArgument, "updates must be an object with a 'cells' object");
  const auto ids = cell_ids(data);
  std::string unknown;
  for (const auto& [id, cell] : updates["cells"].items())
    if (!ids.count(id)) unknown += (unknown.empty() ? "" : ", ") + id;
  if (!unknown.empty())
    return fail(ErrorCode::kInvalidArgument, "Unknown feature-matrix cell IDs: " + unknown);
  json out = data;
  for (const auto& [id, cell] : updates["cells"].items()) {
    if (!cell.is_object() || !cell.contains("status") || !cell["status"].is_string())
      return fail(ErrorCode::kInvalidArgument, "update for '" + id + "' has no status");
    HONE_CHECK_OK_CTX(parse_status(cell["status"].get<std::string>()), "in update '" + id + "'");
    out["cells"][id] = cell;
  }
  if (updates.contains("run")) out["run"] = updates["run"];
  HONE_CHECK_OK_CTX(validate_data(out), "after merging");
  return out;
}

Result<json> merge_backend_from(const json& data, const json& updates, const std::string& backend) {
  if (!updates.is_object() || !updates.contains("run") || !updates["run"].is_object())
    return fail(ErrorCode::kInvalidArgument,
                "a run made elsewhere needs a 'run' object saying where it ran");
  const json& run = updates["run"];
  std::string source = "run on ";
  for (const char* key : {"device", "driver", "commit", "time"}) {
    if (!run.contains(key) || !run[key].is_string() || run[key].get<std::string>().empty())
      return fail(ErrorCode::kInvalidArgument, std::string("the run's provenance lacks '") + key +
                                                   "' (device, driver, commit, time)");
    const std::string v = run[key].get<std::string>();
    source += std::string(key) == "device" ? v : std::string(", ") + key + " " + v;
  }
  if (!updates.contains("cells") || !updates["cells"].is_object())
    return fail(ErrorCode::kInvalidArgument, "updates must be an object with a 'cells' object");
  HONE_CHECK_OK_CTX(validate_data(data), "in the base matrix");
  // The backend's cells: its column, or its row where a tab lists backends as rows.
  std::set<std::string> mine;
  for (const auto& tab : data["tabs"])
    for (const auto& r : tab["rows"])
      for (const auto& c : tab["columns"])
        if (r["id"] == backend || c == backend)
          mine.insert(tab["id"].get<std::string>() + "." + r["id"].get<std::string>() + "/" +
                      c.get<std::string>());
  json picked = {{"cells", json::object()}};
  for (const auto& [id, cell] : updates["cells"].items()) {
    if (!mine.count(id)) continue;
    json c = cell;
    if (c.is_object()) c["source"] = source;
    picked["cells"][id] = std::move(c);
  }
  if (picked["cells"].empty())
    return fail(ErrorCode::kInvalidArgument,
                "the updates have no cell of backend '" + backend + "'");
  HONE_TRY(json out, merge_updates(data, picked));
  return out;
}

Result<json> extract_data(std::string_view html) {
  constexpr std::string_view kOpen = "<script type=\"application/json\" id=\"matrix-data\">";
  const size_t a = html.find(kOpen);
  if (a == std::string_view::npos)
    return fail(ErrorCode::kCorrupt,
                "page has no <script type=\"application/json\" id=\"matrix-data\"> block");
  const size_t start = a + kOpen.size();
  const size_t end = html.find("</script>", start);
  if (end == std::string_view::npos)
    return fail(ErrorCode::kCorrupt, "the matrix-data block is not closed");
  json data = json::parse(html.substr(start, end - start), nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded())
    return fail(ErrorCode::kCorrupt, "the matrix-data block is not valid JSON");
  HONE_CHECK_OK(validate_data(data));
  return data;
}

std::string summary(const json& data) {
  std::map<std::string, int> n;
  for (const auto& [id, cell] : data["cells"].items()) ++n[cell.value("status", "untested")];
  const int total = n["passed"] + n["skipped"] + n["failed"] + n["untested"];
  return "matrix: " + std::to_string(n["passed"]) + " passed, " + std::to_string(n["skipped"]) +
         " skipped, " + std::to_string(n["failed"]) + " failed, " + std::to_string(n["untested"]) +
         " untested (" + std::to_string(total) + " cells)";
}

}  // namespace hone::matrix
