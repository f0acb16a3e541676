#include "hone/backend.h"

namespace hone {

std::string_view to_string(Device d) {
  switch (d) {
    case Device::kCpu:
      return "cpu";
    case Device::kCuda:
      return "cuda";
  }
  return "?";
}

std::string_view to_string(BuildMode m) {
  return m == BuildMode::kAheadOfTime ? "ahead-of-time" : "just-in-time";
}

std::string_view to_string(BackendState s) {
  switch (s) {
    case BackendState::kCreated:
      return "created";
    case BackendState::kBuilt:
      return "built";
    case BackendState::kActive:
      return "active";
    case BackendState::kInactive:
      return "inactive";
    case BackendState::kLoaded:
      return "loaded";
  }
  return "?";
}

Backend::Backend() {
  config_.declare("threads", int64_t{0}, "intra-op threads; 0 uses the global pool (--threads)");
}

Result<void> Backend::configure(const std::string& field, const std::string& value) {
  if (state_ != BackendState::kCreated)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; its config can only change before build()");
  HONE_CHECK_OK_CTX(config_.set_from_string(field, value),
                    "while configuring backend '" + std::string(name()) + "'");
  return {};
}

void Backend::share_optimized(std::shared_ptr<const OptimizedGraph> optimized) {
  optimized_ = std::move(optimized);
}

Result<void> Backend::build(const Graph& graph) {
  if (state_ != BackendState::kCreated)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; build() runs once, on a created backend");
  HONE_CHECK_OK(check_threads());
  // A graph made in C++ need not have passed GraphBuilder::build(): one with
  // two values of one name, or a cycle, must be an error here, not a crash in
  // a backend.
  HONE_CHECK_OK_CTX(graph.validate(),
                    "while checking graph '" + graph.name() + "' before building");
  HONE_CHECK_OK_CTX(do_build(graph), "while building backend '" + std::string(name()) + "'");
  state_ = BackendState::kActive;
  return {};
}

// `threads` is every backend's field, so build() and load() check it here,
// once for all backends.
Result<void> Backend::check_threads() const {
  if (const int64_t t = config_.get<int64_t>("threads", 0); t < 0)
    return fail(ErrorCode::kInvalidArgument,
                std::string(name()) + ": threads must be >= 0, got " + std::to_string(t));
  return {};
}

Result<void> Backend::save(const std::filesystem::path& dir) const {
  if (state_ != BackendState::kActive && state_ != BackendState::kInactive)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; only a built backend can be saved");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return fail(ErrorCode::kNotFound, "cannot save backend '" + std::string(name()) + "': '" +
                                          dir.string() + "' is not a folder");
  HONE_CHECK_OK_CTX(do_save(dir), "while saving backend '" + std::string(name()) + "'");
  return {};
}

Result<void> Backend::load(const Graph& graph, const std::filesystem::path& dir) {
  if (state_ != BackendState::kCreated)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; load() needs a created backend");
  HONE_CHECK_OK(check_threads());
  HONE_CHECK_OK_CTX(do_load(graph, dir), "while loading backend '" + std::string(name()) +
                                             "' from '" + dir.string() + "'");
  state_ = BackendState::kLoaded;
  return {};
}

Result<void> Backend::do_save(const std::filesystem::path&) const {
  return {};
}

Result<void> Backend::do_load(const Graph& graph, const std::filesystem::path&) {
  return do_build(graph);
}

Result<void> Backend::export_artifact(const std::filesystem::path&) const {
  return fail(ErrorCode::kUnsupported,
              "backend '" + std::string(name()) + "' has no native artifact to export");
}

Result<Partition> Backend::plan(const Graph& graph) const {
  return partition_graph(graph, std::vector<NodeSupport>(graph.nodes().size(), NodeSupport::yes()),
                         {.min_block_size = 1, .require_full_compilation = false});
}

Result<std::vector<Tensor>> Backend::infer(const std::vector<Tensor>& inputs) const {
  if (state_ != BackendState::kActive)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; infer() needs an active backend");
  auto out = do_infer(inputs);
  if (out) executions_.fetch_add(1, std::memory_order_relaxed);
  return out;
}

Result<void> Backend::activate() {
  if (state_ == BackendState::kActive) return {};
  if (state_ != BackendState::kInactive && state_ != BackendState::kBuilt &&
      state_ != BackendState::kLoaded)
    return fail(ErrorCode::kFailedPrecondition,
                "backend '" + std::string(name()) + "' is " + std::string(to_string(state_)) +
                    "; only a built, loaded or inactive backend can be activated");
  state_ = BackendState::kActive;
  return {};
}

Result<void> Backend::deactivate() {
  if (state_ != BackendState::kActive)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; only an active backend can be deactivated");
  state_ = BackendState::kInactive;
  return {};
}

}  // namespace hone
