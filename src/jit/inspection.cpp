#include "hone/inspection.h"

#include <nlohmann/json.hpp>

#include "hone/file_io.h"

namespace hone {

namespace {

void finish(InspectionNode& n, double root_ms) {
  double children_ms = 0;
  for (auto& c : n.children) {
    finish(c, root_ms);
    children_ms += c.total_ms;
  }
  // Children may overlap their parent's clock by rounding; self is never negative.
  n.self_ms = n.total_ms > children_ms ? n.total_ms - children_ms : 0;
  n.avg_ms = n.calls > 0 ? n.total_ms / static_cast<double>(n.calls) : 0;
  n.share = root_ms > 0 ? n.total_ms / root_ms : 0;
}

nlohmann::json leaf_json(const LeafSeen& l) {
  nlohmann::json j{{"path", l.path},
                   {"dtype", l.dtype},
                   {"shapes", l.shapes},
                   {"more_shapes", l.more_shapes},
                   {"varied_axes", l.varied_axes},
                   {"rank_varied", l.rank_varied}};
  return j;
}

nlohmann::json node_json(const InspectionNode& n, const std::string& parent) {
  const std::string id = parent.empty() ? n.name : parent + "/" + n.name;
  nlohmann::json j{{"id", id},
                   {"name", n.name},
                   {"kind", n.kind},
                   {"mode", n.mode},
                   {"state", n.state},
                   {"backend", n.backend},
                   {"reason", n.reason},
                   {"calls", n.calls},
                   {"out_of_bounds_calls", n.out_of_bounds_calls},
                   {"samples_recorded", n.samples_recorded},
                   {"total_ms", n.total_ms},
                   {"self_ms", n.self_ms},
                   {"avg_ms", n.avg_ms},
                   {"share", n.share}};
  j["inputs"] = nlohmann::json::array();
  for (const auto& l : n.inputs) j["inputs"].push_back(leaf_json(l));
  j["outputs"] = nlohmann::json::array();
  for (const auto& l : n.outputs) j["outputs"].push_back(leaf_json(l));
  j["children"] = nlohmann::json::array();
  for (const auto& c : n.children) j["children"].push_back(node_json(c, id));
  return j;
}

}  // namespace

void finish_inspection(InspectionNode& root) {
  finish(root, root.total_ms);
}

std::string inspection_json(const InspectionNode& root) {
  nlohmann::json j{{"format", "hone-inspection"}, {"version", 1}, {"root", node_json(root, "")}};
  return j.dump(1);
}

Result<void> save_inspection_report(const InspectionNode& root, const std::filesystem::path& html) {
  if (html.extension() == ".json")
    return fail(ErrorCode::kInvalidArgument,
                "the inspection report's path '" + html.string() +
                    "' ends in .json; give the .html path (the JSON is written beside it)");
  if (html.empty() || html.filename().empty())
    return fail(ErrorCode::kInvalidArgument, "the inspection report needs a file path");
  std::filesystem::path json = html;
  json.replace_extension(".json");
  HONE_CHECK_OK_CTX(write_file_atomic(json, inspection_json(root)),
                    "while writing the inspection data");
  HONE_CHECK_OK_CTX(write_file_atomic(html, inspection_html(root)),
                    "while writing the inspection page");
  return {};
}

}  // namespace hone
