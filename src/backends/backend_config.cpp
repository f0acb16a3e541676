#include "hone/backend_config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace hone {
namespace {

const char* type_name(const BackendConfig::FieldValue& v) {
  switch (v.index()) {
    case 0:
      return "bool";
    case 1:
      return "integer";
    case 2:
      return "number";
    default:
      return "string";
  }
}

const char* a_type(const BackendConfig::FieldValue& v) {
  switch (v.index()) {
    case 0:
      return "a bool";
    case 1:
      return "an integer";
    case 2:
      return "a number";
    default:
      return "a string";
  }
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string BackendConfig::to_string(const FieldValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  return std::get<std::string>(v);
}

BackendConfig& BackendConfig::declare(std::string name, FieldValue default_value, std::string doc) {
  if (Field* f = find_mut(name)) {
    *f = Field{std::move(name), default_value, default_value, std::move(doc), false};
    return *this;
  }
  fields_.push_back(Field{std::move(name), default_value, default_value, std::move(doc), false});
  return *this;
}

BackendConfig& BackendConfig::declare_record(std::string name, std::string doc) {
  const std::string n = name;
  declare(std::move(name), std::string(), std::move(doc));
  find_mut(n)->record = true;
  return *this;
}

std::vector<std::string> BackendConfig::record_fields() const {
  std::vector<std::string> out;
  for (const Field& f : fields_)
    if (f.record) out.push_back(f.name);
  return out;
}

const BackendConfig::Field* BackendConfig::find(const std::string& name) const {
  for (const Field& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

BackendConfig::Field* BackendConfig::find_mut(const std::string& name) {
  for (Field& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

Result<void> BackendConfig::set(const std::string& name, FieldValue value) {
  Field* f = find_mut(name);
  if (f == nullptr) {
    std::string known;
    for (const Field& x : fields_) known += (known.empty() ? "" : ", ") + x.name;
    return fail(ErrorCode::kInvalidArgument, "unknown config field '" + name + "' (known: " +
                                                 (known.empty() ? "none" : known) + ")");
  }
  if (value.index() != f->default_value.index()) {
    // An integer where a number is wanted is fine.
    if (std::holds_alternative<int64_t>(value) &&
        std::holds_alternative<double>(f->default_value)) {
      value = static_cast<double>(std::get<int64_t>(value));
    } else {
      return fail(
          ErrorCode::kInvalidArgument,
          "config field '" + name + "' is " + a_type(f->default_value) + ", got " + a_type(value));
    }
  }
  f->value = std::move(value);
  return {};
}

Result<void> BackendConfig::set_from_string(const std::string& name, const std::string& text) {
  const Field* f = find(name);
  if (f == nullptr) return set(name, text);  // reports the unknown name
  const auto bad = [&](const char* what) {
    return fail(ErrorCode::kInvalidArgument,
                "config field '" + name + "' wants " + what + ", got '" + text + "'");
  };
  switch (f->default_value.index()) {
    case 0:
      if (text == "true" || text == "1" || text == "on") return set(name, true);
      if (text == "false" || text == "0" || text == "off") return set(name, false);
      return bad("true or false");
    case 1: {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size()) return bad("an integer");
      return set(name, v);
    }
    case 2: {
      double v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size()) return bad("a number");
      return set(name, v);
    }
    default:
      return set(name, text);
  }
}

std::string BackendConfig::key() const {
  std::vector<const Field*> sorted;
  for (const Field& f : fields_) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(),
            [](const Field* a, const Field* b) { return a->name < b->name; });
  std::string canon;
  for (const Field* f : sorted)
    canon += f->name + ":" + type_name(f->value) + "=" + to_string(f->value) + ";";
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(canon)));
  return buf;
}

std::string BackendConfig::describe() const {
  std::string s;
  for (const Field& f : fields_)
    if (f.value != f.default_value)
      s += (s.empty() ? "" : ", ") + f.name + "=" + to_string(f.value);
  return s.empty() ? "defaults" : s;
}

}  // namespace hone
