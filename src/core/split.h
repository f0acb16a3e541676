// Splits a list written as text into its pieces, as the config fields that
// hold lists write them (kernel_choices: entries joined by ';', a select
// entry's accepted backends by '+').
//
//   split("a;b;;c", ';')  // {"a", "b", "", "c"}
//   split("", ';')        // {""}: one empty piece, for the caller to judge
#pragma once

#include <string>
#include <vector>

namespace hone {

/// Every piece of `text` between `sep`s, empty ones included.
inline std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find(sep, pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace hone
