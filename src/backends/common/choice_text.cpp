#include "backends/common/choice_text.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/split.h"

namespace hone {

namespace {

bool reserved(unsigned char c) {
  return c == '%' || c == ';' || c == '=' || c == '|' || c < 0x20 || c == 0x7F;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/// `s` with its %XX escapes undone; nothing when one is broken.
std::optional<std::string> unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_value(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

/// Whether `s` is "[d,...]" groups of non-negative integers ("[]" for a scalar), at least one.
bool valid_shapes(const std::string& s) {
  if (s.empty()) return false;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '[') return false;
    const size_t close = s.find(']', i);
    if (close == std::string::npos) return false;
    const std::string inner = s.substr(i + 1, close - i - 1);
    if (!inner.empty()) {
      size_t p = 0;
      while (p <= inner.size()) {
        size_t e = inner.find(',', p);
        if (e == std::string::npos) e = inner.size();
        const std::string num = inner.substr(p, e - p);
        if (num.empty() || num.size() > 18 ||
            !std::all_of(num.begin(), num.end(), [](unsigned char c) { return std::isdigit(c); }))
          return false;
        p = e + 1;
      }
    }
    i = close + 1;
  }
  return true;
}

Error bad_entry(const ChoiceSyntax& s, const std::string& item, const std::string& why) {
  const std::string word = s.choice.empty() ? "CHOICE" : s.choice;
  std::string upper;
  for (const char c : word) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return Error(ErrorCode::kInvalidArgument, s.field + " entry '" + item + "': " + why +
                                                " (expected LABEL|SHAPES|MODE=" + upper +
                                                ", ';'-separated, or '-')");
}

}  // namespace

std::string choice_shapes_text(const std::vector<std::vector<int64_t>>& in) {
  std::string out;
  for (const auto& d : in) {
    out += '[';
    for (size_t i = 0; i < d.size(); ++i) out += (i ? "," : "") + std::to_string(d[i]);
    out += ']';
  }
  return out;
}

std::string escape_choice_text(const std::string& s) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!reserved(c)) {
      out += ch;
      continue;
    }
    out += '%';
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string choice_key(const std::string& label, const std::vector<std::vector<int64_t>>& in,
                       const std::string& mode) {
  return escape_choice_text(label) + "|" + choice_shapes_text(in) + "|" + mode;
}

std::string choice_key(const ChoiceEntry& e) {
  return escape_choice_text(e.label) + "|" + e.shapes + "|" + e.mode;
}

std::string choice_entry_text(const ChoiceEntry& e) {
  return choice_key(e) + "=" + escape_choice_text(e.kernel);
}

Result<ChoiceEntries> parse_choice_text(const std::string& text, const ChoiceSyntax& syntax) {
  ChoiceEntries out;
  if (text.empty() || text == "-") return out;
  const std::string word = syntax.choice.empty() ? "choice" : syntax.choice;
  for (const std::string& item : split(text, ';')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return fail(bad_entry(syntax, item, "no '='"));
    const std::string key = item.substr(0, eq), choice_text = item.substr(eq + 1);
    const size_t bar1 = key.find('|');
    const size_t bar2 = bar1 == std::string::npos ? bar1 : key.find('|', bar1 + 1);
    if (bar2 == std::string::npos || key.find('|', bar2 + 1) != std::string::npos)
      return fail(bad_entry(syntax, item, "the key is not LABEL|SHAPES|MODE"));
    ChoiceEntry e;
    const auto label = unescape(key.substr(0, bar1));
    const auto choice = unescape(choice_text);
    if (!label || !choice) return fail(bad_entry(syntax, item, "a broken %XX escape"));
    e.label = *label;
    e.shapes = key.substr(bar1 + 1, bar2 - bar1 - 1);
    e.mode = key.substr(bar2 + 1);
    e.kernel = *choice;
    if (e.label.empty()) return fail(bad_entry(syntax, item, "an empty label"));
    if (e.kernel.empty()) return fail(bad_entry(syntax, item, "an empty " + word));
    if (!valid_shapes(e.shapes))
      return fail(bad_entry(syntax, item, "shapes '" + e.shapes + "' are not [d,...] groups"));
    if (syntax.valid_mode != nullptr && !syntax.valid_mode(e.mode))
      return fail(bad_entry(syntax, item, "mode '" + e.mode + "' is not " + syntax.modes));
    // The canonical key, so "%3b" and "%3B" cannot name one decision twice.
    if (!out.emplace(choice_key(e), std::move(e)).second)
      return fail(bad_entry(syntax, item, "its key is given twice"));
  }
  return out;
}

std::string format_choice_text(const ChoiceEntries& entries) {
  if (entries.empty()) return "-";
  std::string out;
  for (const auto& [key, e] : entries)
    out += (out.empty() ? "" : ";") + key + "=" + escape_choice_text(e.kernel);
  return out;
}

std::vector<std::string> choice_lines(const ChoiceEntries& entries) {
  std::vector<std::string> out;
  for (const auto& [key, e] : entries)
    out.push_back("choice: " + e.label + " " + e.shapes + " " + e.mode + " -> " + e.kernel);
  return out;
}

}  // namespace hone
