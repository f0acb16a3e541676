#include "hone/shape.h"

namespace hone {

std::string Dim::to_string() const {
  if (is_static()) return std::to_string(value_);
  if (is_symbolic()) return symbol_;
  return "?";
}

Shape Shape::of(const std::vector<int64_t>& dims) {
  Shape s;
  s.dims_.reserve(dims.size());
  for (int64_t d : dims) s.dims_.emplace_back(d);
  return s;
}

bool Shape::is_static() const {
  for (const auto& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (const auto& d : dims_) {
    if (!d.is_static()) return -1;
    n *= d.value();
  }
  return n;
}

Result<std::vector<int64_t>> Shape::to_static() const {
  return bind({});
}

Result<std::vector<int64_t>> Shape::bind(const std::map<std::string, int64_t>& bindings) const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (size_t i = 0; i < dims_.size(); ++i) {
    const Dim& d = dims_[i];
    if (d.is_static()) {
      out.push_back(d.value());
    } else if (d.is_symbolic()) {
      auto it = bindings.find(d.symbol_name());
      if (it == bindings.end())
        return fail(ErrorCode::kInvalidArgument, "dim " + std::to_string(i) + " of shape " +
                                                     to_string() + " is symbol '" +
                                                     d.symbol_name() + "' with no value given");
      out.push_back(it->second);
    } else {
      return fail(ErrorCode::kInvalidArgument,
                  "dim " + std::to_string(i) + " of shape " + to_string() + " is unknown");
    }
  }
  return out;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i].to_string();
  }
  return s + "]";
}

std::string shape_to_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

int64_t shape_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace hone
