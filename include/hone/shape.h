// hone::Dim and hone::Shape: tensor shapes whose dims are numbers or named
// symbols ("batch", "seq"), as graph values carry them.
//
//   Shape s{Dim::symbol("batch"), 3, 224, 224};
//   s.to_string();                 // "[batch,3,224,224]"
//   auto concrete = s.bind({{"batch", 8}});   // Result<std::vector<int64_t>>
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone {

/// One dimension: a non-negative number, a named symbol, or unknown
/// (neither: a dim nobody could name, like ONNX's dim without value or param).
class Dim {
 public:
  Dim() = default;                       // unknown
  Dim(int64_t value) : value_(value) {}  // NOLINT: numbers convert implicitly
  static Dim symbol(std::string name) {
    Dim d;
    d.symbol_ = std::move(name);
    return d;
  }
  static Dim unknown() { return Dim(); }

  bool is_static() const { return value_ >= 0; }
  bool is_symbolic() const { return value_ < 0 && !symbol_.empty(); }
  bool is_unknown() const { return value_ < 0 && symbol_.empty(); }
  /// The number; -1 when not static.
  int64_t value() const { return value_; }
  const std::string& symbol_name() const { return symbol_; }
  std::string to_string() const;

  bool operator==(const Dim&) const = default;

 private:
  int64_t value_ = -1;
  std::string symbol_;
};

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<Dim> dims) : dims_(dims) {}
  explicit Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}
  static Shape of(const std::vector<int64_t>& dims);

  size_t rank() const { return dims_.size(); }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& dims() { return dims_; }
  bool is_static() const;
  /// Product of static dims; -1 if any dim is not static.
  int64_t numel() const;
  /// Concrete dims when all are static.
  Result<std::vector<int64_t>> to_static() const;
  /// Concrete dims, resolving symbols from `bindings`; unknown dims are an error.
  Result<std::vector<int64_t>> bind(const std::map<std::string, int64_t>& bindings) const;
  /// "[batch,3,224,224]"; unknown dims print as "?".
  std::string to_string() const;

  bool operator==(const Shape&) const = default;

 private:
  std::vector<Dim> dims_;
};

/// "[2,3,4]" for concrete dims.
std::string shape_to_string(const std::vector<int64_t>& dims);
/// Product of dims (1 for a scalar).
int64_t shape_numel(const std::vector<int64_t>& dims);

}  // namespace hone
