#include "functional/matrix.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

namespace hone::functional {
namespace {

struct Marker {
  std::string suite, name;
  std::vector<std::string> templates;
};

std::vector<Marker>& markers() {
  static std::vector<Marker> m;
  return m;
}

// "Backends/Lifecycle" -> "Lifecycle"; "Build/reference" -> "Build".
std::string strip_prefix(const std::string& s) {
  const auto p = s.find('/');
  return p == std::string::npos ? s : s.substr(p + 1);
}
std::string strip_suffix(const std::string& s) {
  const auto p = s.find('/');
  return p == std::string::npos ? s : s.substr(0, p);
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// A failure message on one line, for a matrix cell: gtest's lines joined,
// cut to a length a cell can show.
std::string one_line(const std::string& s) {
  std::string out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(start, end - start);
    const auto b = line.find_first_not_of(' ');
    if (b != std::string::npos) out += (out.empty() ? "" : " | ") + line.substr(b);
    start = end + 1;
  }
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

}  // namespace

bool declare_matrix(const char* suite, const char* name,
                    std::initializer_list<const char*> templates) {
  Marker m{suite, name, {}};
  for (const char* t : templates) m.templates.emplace_back(t);
  markers().push_back(std::move(m));
  return true;
}

std::string expand_cell_template(const std::string& tmpl,
                                 const std::map<std::string, std::string>& params) {
  std::string s = tmpl;
  if (s.find('/') == std::string::npos) s += "/{backend}";
  for (const auto& [key, value] : params) {
    const std::string pat = "{" + key + "}";
    for (size_t p = s.find(pat); p != std::string::npos; p = s.find(pat, p + value.size()))
      s.replace(p, pat.size(), value);
  }
  return s;
}

MarkerResolution resolve_markers(const testing::UnitTest& unit,
                                 const std::set<std::string>& known_ids) {
  MarkerResolution out;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const testing::TestSuite* suite = unit.GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const testing::TestInfo* info = suite->GetTestInfo(j);
      const std::string suite_name = strip_prefix(info->test_suite_name());
      const std::string test_name = strip_suffix(info->name());
      std::map<std::string, std::string> params;
      if (info->value_param() != nullptr) params["backend"] = info->value_param();
      for (const Marker& m : markers()) {
        if (m.suite != suite_name || m.name != test_name) continue;
        for (const auto& t : m.templates) {
          const std::string id = expand_cell_template(t, params);
          if (id.find('{') != std::string::npos || !known_ids.count(id)) out.unknown.insert(id);
          out.cells_by_test[std::string(info->test_suite_name()) + "." + info->name()].push_back(
              id);
        }
      }
    }
  }
  return out;
}

void record_cell(std::map<std::string, CellResult>& cells, const std::string& id, Outcome outcome,
                 const std::string& reason, const std::string& test) {
  CellResult& c = cells[id];
  if (c.tests.empty()) {
    c.outcome = outcome;
  } else if (static_cast<int>(outcome) > static_cast<int>(c.outcome)) {
    c.outcome = outcome;  // a worse result replaces the reasons of better ones
    c.reasons.clear();
  }
  if (outcome == c.outcome && !reason.empty()) c.reasons.push_back(reason);
  c.tests.push_back(test);
}

MatrixRecorder::MatrixRecorder(std::map<std::string, std::vector<std::string>> cells_by_test,
                               std::string results_path)
    : cells_by_test_(std::move(cells_by_test)), results_path_(std::move(results_path)) {}

void MatrixRecorder::OnTestEnd(const testing::TestInfo& info) {
  const std::string full = std::string(info.test_suite_name()) + "." + info.name();
  auto it = cells_by_test_.find(full);
  if (it == cells_by_test_.end()) return;
  const testing::TestResult* r = info.result();
  Outcome outcome = Outcome::kPassed;
  std::string reason;
  if (r->Failed()) {
    outcome = Outcome::kFailed;
    for (int i = 0; i < r->total_part_count(); ++i)
      if (r->GetTestPartResult(i).failed()) {
        reason = one_line(r->GetTestPartResult(i).message());
        break;
      }
  } else if (r->Skipped()) {
    outcome = Outcome::kSkipped;
    for (int i = 0; i < r->total_part_count(); ++i)
      if (r->GetTestPartResult(i).skipped()) reason = one_line(r->GetTestPartResult(i).message());
  }
  for (const auto& id : it->second) record_cell(cells_, id, outcome, reason, full);
}

void MatrixRecorder::OnTestProgramEnd(const testing::UnitTest&) {
  if (results_path_.empty()) return;
  nlohmann::json j;
  const std::string when = now_iso();
  j["run"] = {{"time", when}};
  if (const char* c = std::getenv("HONE_COMMIT")) j["run"]["commit"] = c;
  j["cells"] = nlohmann::json::object();
  for (const auto& [id, c] : cells_) {
    static constexpr const char* kNames[] = {"passed", "skipped", "failed"};
    nlohmann::json cell = {
        {"status", kNames[static_cast<int>(c.outcome)]}, {"tests", c.tests}, {"updated", when}};
    std::string reason;
    for (const auto& r : c.reasons)
      if (reason.find(r) == std::string::npos) reason += (reason.empty() ? "" : "; ") + r;
    if (!reason.empty()) cell["reason"] = reason;
    j["cells"][id] = std::move(cell);
  }
  std::ofstream out(results_path_, std::ios::trunc);
  out << j.dump(1) << "\n";
}

void fail_if_no_reason(const std::string& reason) {
  if (reason.empty()) ADD_FAILURE() << "HONE_SKIP needs a reason the feature matrix can show";
}

}  // namespace hone::functional
