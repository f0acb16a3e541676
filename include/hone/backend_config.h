// hone::BackendConfig: a backend's settings as named, typed fields with
// defaults, a stable key and a description of what differs from defaults.
//
//   BackendConfig c;
//   c.declare("min_block_size", int64_t{5}, "smaller supported islands fall back");
//   HONE_CHECK_OK(c.set_from_string("min_block_size", "3"));
//   c.key();        // "9b1d0c3e5f2a7781": same fields and values, same key, on any machine
//   c.describe();   // "min_block_size=3"
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "hone/error.h"

namespace hone {

class BackendConfig {
 public:
  using FieldValue = std::variant<bool, int64_t, double, std::string>;
  struct Field {
    std::string name;
    FieldValue default_value;
    FieldValue value;
    std::string doc;
    /// Holds a record of choices made by timing (declare_record()).
    bool record = false;
  };

  /// Adds a field (its type is the default's type). Redeclaring a name replaces it.
  BackendConfig& declare(std::string name, FieldValue default_value, std::string doc);
  /// Adds a string field (default "") that records the choices the backend
  /// makes by timing (STYLE.md rule 9): filled as it times, replayed untimed
  /// when given. A package saves its value as it stands at save
  /// (Backend::choice_records()); a tuning group refuses the backend while
  /// it is empty, as the ranks could time differently.
  BackendConfig& declare_record(std::string name, std::string doc);
  /// The names of the fields declared by declare_record(), in declaration order.
  std::vector<std::string> record_fields() const;

  /// Sets a field; an unknown name or a value of another type is kInvalidArgument.
  [[nodiscard]] Result<void> set(const std::string& name, FieldValue value);
  /// Parses `text` as the field's type ("true"/"false", integers, decimals).
  [[nodiscard]] Result<void> set_from_string(const std::string& name, const std::string& text);

  bool has(const std::string& name) const { return find(name) != nullptr; }
  const Field* find(const std::string& name) const;
  /// The value of a declared field of type T; `fallback` when absent or of another type.
  template <class T>
  T get(const std::string& name, T fallback) const {
    const Field* f = find(name);
    if (f == nullptr) return fallback;
    const T* v = std::get_if<T>(&f->value);
    return v ? *v : fallback;
  }

  const std::vector<Field>& fields() const { return fields_; }
  /// 16 hex digits hashing every field's name, type and value, sorted by name.
  std::string key() const;
  /// "a=1, b=true" for the fields that differ from their defaults; "defaults" when none.
  std::string describe() const;

  static std::string to_string(const FieldValue& v);

 private:
  Field* find_mut(const std::string& name);
  std::vector<Field> fields_;
};

}  // namespace hone
