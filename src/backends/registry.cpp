#include "hone/registry.h"

#ifdef HONE_WITH_ONEDNN
#include "backends/select/select_backend.h"
#endif

namespace hone {

Result<void> BackendRegistry::add(Entry entry) {
  if (find(entry.name) != nullptr)
    return fail(ErrorCode::kInvalidArgument, "backend '" + entry.name + "' is registered twice");
  entries_.push_back(std::move(entry));
  return {};
}

const BackendRegistry::Entry* BackendRegistry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

Result<std::unique_ptr<Backend>> BackendRegistry::create(const std::string& name) const {
  const Entry* e = find(name);
  if (e == nullptr) {
    std::string known;
    for (const auto& x : entries_) known += (known.empty() ? "" : ", ") + x.name;
    return fail(ErrorCode::kNotFound, "no backend named '" + name + "' (known: " + known + ")");
  }
  return e->factory();
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::vector<std::string> BackendRegistry::tried_by_default() const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    if (!e.opt_in) out.push_back(e.name);
  return out;
}

const BackendRegistry& default_registry() {
  // The one list of built-in backends; CMake's HONE_WITH_<BACKEND> options
  // say which are built.
  static const BackendRegistry registry = [] {
    BackendRegistry r;
    register_reference(r);
#ifdef HONE_WITH_ONEDNN
    register_onednn(r);
#endif
#ifdef HONE_WITH_BLAS
    register_blas(r);
#endif
#ifdef HONE_WITH_AOT
    register_aot(r);
#endif
#ifdef HONE_WITH_CUDA
    register_cuda(r);
#endif
#ifdef HONE_WITH_ONEDNN
    // Per-op selection among the CPU backends; the rest runs on onednn.
    register_select(r);
#endif
    return r;
  }();
  return registry;
}

}  // namespace hone
