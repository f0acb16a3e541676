// hone::BackendRegistry: the backends this build of hone has, by name.
//
//   BackendRegistry& reg = hone::default_registry();   // every built-in backend
//   for (const auto& e : reg.entries()) std::cout << e.name << "\n";
//   HONE_TRY(std::unique_ptr<Backend> be, reg.create("reference"));
//
// Registration is explicit: each backend exports register_<name>(Registry&),
// called from the one list in src/backends/registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hone/backend.h"

namespace hone {

class BackendRegistry {
 public:
  struct Entry {
    std::string name;
    std::string description;
    BackendCapabilities capabilities;
    std::function<std::unique_ptr<Backend>()> factory;
    /// Why this machine cannot run the backend now ("no CUDA device", "no C++
    /// compiler"), or "" when it can; unset means always available. An
    /// unavailable backend stays registered (so tables and reports list it)
    /// but takes no part in tuning.
    std::function<std::string()> unavailable_reason;
    /// Tried by tune() only when a strategy names it (a candidate whose
    /// own tuning is slow or rarely wins); listed and created like any other.
    bool opt_in = false;
    std::string unavailable() const {
      return unavailable_reason ? unavailable_reason() : std::string();
    }
  };

  /// Adds a backend; a second entry with the same name is an error.
  [[nodiscard]] Result<void> add(Entry entry);
  [[nodiscard]] Result<std::unique_ptr<Backend>> create(const std::string& name) const;
  const Entry* find(const std::string& name) const;
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<std::string> names() const;
  /// What tune() tries when a strategy names no backends: every entry but
  /// the opt-in ones (the reference included; strategies leave it out).
  std::vector<std::string> tried_by_default() const;

 private:
  std::vector<Entry> entries_;
};

/// The name of the backend that defines the right answer: the baseline every
/// candidate is checked against and what runs a graph no other backend takes.
/// Code that needs it says kReferenceBackend, never the string.
inline constexpr const char* kReferenceBackend = "reference";

/// The registry with every backend compiled into this build.
const BackendRegistry& default_registry();

void register_reference(BackendRegistry& registry);
void register_onednn(BackendRegistry& registry);
void register_blas(BackendRegistry& registry);
void register_aot(BackendRegistry& registry);
void register_cuda(BackendRegistry& registry);

}  // namespace hone
