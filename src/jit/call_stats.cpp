#include "jit/call_stats.h"

#include <algorithm>

namespace hone::jit_internal {

void CallStats::note(std::map<std::string, Leaf>& leaves, std::vector<std::string>& order,
                     const std::string& path, const std::string& dtype,
                     const std::vector<int64_t>& shape) {
  auto [it, fresh] = leaves.try_emplace(path);
  Leaf& l = it->second;
  if (fresh) {
    order.push_back(path);
    l.seen.path = path;
    l.seen.dtype = dtype;
    l.first_shape = shape;
  } else if (l.seen.dtype != dtype && l.seen.dtype.find(dtype) == std::string::npos) {
    l.seen.dtype += "|" + dtype;  // a leaf whose dtype changed between calls shows both
  }
  if (std::find(l.seen.shapes.begin(), l.seen.shapes.end(), shape) == l.seen.shapes.end()) {
    if (l.seen.shapes.size() < LeafSeen::kMaxShapes)
      l.seen.shapes.push_back(shape);
    else
      ++l.seen.more_shapes;  // counts calls with shapes past the kept ones
  }
  if (shape.size() != l.first_shape.size()) {
    l.seen.rank_varied = true;
    return;
  }
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] != l.first_shape[a] &&
        std::find(l.seen.varied_axes.begin(), l.seen.varied_axes.end(), static_cast<int>(a)) ==
            l.seen.varied_axes.end()) {
      l.seen.varied_axes.push_back(static_cast<int>(a));
      std::sort(l.seen.varied_axes.begin(), l.seen.varied_axes.end());
    }
}

void CallStats::record(double ms, const Leaves& inputs, const Leaves& outputs) {
  std::lock_guard lock(mu_);
  ++calls_;
  total_ms_ += ms;
  auto each = [](std::map<std::string, Leaf>& m, std::vector<std::string>& order,
                 const Leaves& ls) {
    for (const auto& [path, v] : ls) {
      if (v->is_tensor())
        note(m, order, path, std::string(dtype_name(v->tensor().dtype())), v->tensor().shape());
      else
        note(m, order, path, "scalar", {});
    }
  };
  each(inputs_, input_order_, inputs);
  each(outputs_, output_order_, outputs);
}

void CallStats::record_named(double ms, const Named& inputs, const Named& outputs) {
  std::lock_guard lock(mu_);
  ++calls_;
  total_ms_ += ms;
  for (const auto& [name, t] : inputs)
    note(inputs_, input_order_, name, std::string(dtype_name(t->dtype())), t->shape());
  for (const auto& [name, t] : outputs)
    note(outputs_, output_order_, name, std::string(dtype_name(t->dtype())), t->shape());
}

void CallStats::record_failure(double ms) {
  std::lock_guard lock(mu_);
  ++calls_;
  total_ms_ += ms;
}

uint64_t CallStats::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

double CallStats::total_ms() const {
  std::lock_guard lock(mu_);
  return total_ms_;
}

void CallStats::fill(InspectionNode& node) const {
  std::lock_guard lock(mu_);
  node.calls = calls_;
  node.total_ms = total_ms_;
  node.inputs.clear();
  node.outputs.clear();
  for (const auto& p : input_order_) node.inputs.push_back(inputs_.at(p).seen);
  for (const auto& p : output_order_) node.outputs.push_back(outputs_.at(p).seen);
}

}  // namespace hone::jit_internal
