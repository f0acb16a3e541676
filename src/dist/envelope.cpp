#include "dist/envelope.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace hone::dist {

using nlohmann::json;

std::string seal(std::string_view step, const Result<std::string>& mine) {
  json j = {{"step", std::string(step)}, {"ok", mine.has_value()}};
  if (mine) {
    j["data"] = *mine;
  } else {
    j["code"] = static_cast<int>(mine.error().code());
    j["message"] = mine.error().message();
    j["context"] = mine.error().context();
  }
  // Data may hold any bytes a report holds; replace what is not UTF-8 rather than throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::vector<std::string>> open_all(std::string_view step,
                                          const std::vector<std::string>& sealed) {
  std::vector<json> msgs;
  for (size_t r = 0; r < sealed.size(); ++r) {
    json j = json::parse(sealed[r], nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j.contains("ok"))
      return fail(ErrorCode::kCorrupt,
                  fmt::format("rank {} sent an unreadable message at step '{}'", r, step));
    msgs.push_back(std::move(j));
  }
  // The lowest failing rank's error first: it is what every rank reports.
  // When every rank failed alike (an error they agreed on), no rank is named.
  bool alike = true;
  for (const json& j : msgs)
    alike = alike && !j.value("ok", false) &&
            j.value("message", "") == msgs[0].value("message", "") &&
            j.value("context", json::array()) == msgs[0].value("context", json::array());
  for (size_t r = 0; r < msgs.size(); ++r) {
    const json& j = msgs[r];
    if (j.value("ok", false)) continue;
    const int code = j.value("code", static_cast<int>(ErrorCode::kInternal));
    const bool known = code >= 0 && code <= static_cast<int>(ErrorCode::kInternal);
    const std::string message = j.value("message", std::string("failed"));
    Error e(known ? static_cast<ErrorCode>(code) : ErrorCode::kInternal,
            alike && msgs.size() > 1 ? message : fmt::format("rank {}: {}", r, message));
    for (const auto& c : j.value("context", std::vector<std::string>{})) e.add_context(c);
    return fail(std::move(e));
  }
  std::vector<std::string> out;
  for (size_t r = 0; r < msgs.size(); ++r) {
    const std::string at = msgs[r].value("step", "");
    if (at != step)
      return fail(ErrorCode::kInternal,
                  fmt::format("the ranks are out of step: rank {} is at '{}' while this rank is "
                              "at '{}' (were they given different arguments?)",
                              r, at, step));
    out.push_back(msgs[r].value("data", ""));
  }
  return out;
}

}  // namespace hone::dist
