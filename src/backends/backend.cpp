#include "hone/backend.h"

#include <algorithm>

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
  config_.declare("threads", int64_t{0}, "intra-op threads; 0 uses the global pool (--threads)")
      .declare("precision", std::string("fp32"),
               "the arithmetic of f32 models: one of this backend's precisions (fp32: strict; "
               "fp64, tf32, bf16, fp16 where listed); f32/f16/half/bfloat16 are accepted")
      .declare("fp32_nodes", std::string(),
               "under a reduced precision, these nodes (comma-separated names of the optimized "
               "graph) compute in fp32: mixed precision, backends that list it only");
}

namespace {

std::string precision_list(const BackendCapabilities& c) {
  std::string s;
  for (Precision p : c.precisions) s += (s.empty() ? "" : ", ") + std::string(to_string(p));
  return s;
}

}  // namespace

Result<void> Backend::configure(const std::string& field, const std::string& value) {
  if (state_ != BackendState::kCreated)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; its config can only change before build()");
  const std::string where = "while configuring backend '" + std::string(name()) + "'";
  // Packages made before the precision field record allow_reduced_precision=false;
  // its old meaning (reduced precision where available) is now precision=NAME.
  if (field == "allow_reduced_precision" && !config_.has(field)) {
    if (value == "false") return {};
    return fail(Error(ErrorCode::kInvalidArgument,
                      "allow_reduced_precision was replaced by precision=NAME (this backend has " +
                          precision_list(capabilities()) + ")")
                    .add_context(where));
  }
  if (field == "precision") {
    auto p = parse_precision(value);
    if (!p) return fail(std::move(p).error().add_context(where));
    const auto& caps = capabilities();
    // fp32 is every backend's default, listed or not (a test's bare capabilities).
    if (*p != Precision::kFp32 &&
        std::find(caps.precisions.begin(), caps.precisions.end(), *p) == caps.precisions.end()) {
      if (auto it = caps.precision_needs.find(*p); it != caps.precision_needs.end()) {
        const auto why = caps.precision_why_not.find(*p);
        return fail(Error(ErrorCode::kUnsupportedHardware,
                          std::string(to_string(*p)) + " needs " + it->second +
                              ", which this machine lacks" +
                              (why != caps.precision_why_not.end() ? " (" + why->second + ")"
                                                                   : std::string()))
                        .add_context(where));
      }
      return fail(Error(ErrorCode::kUnsupported, "backend '" + std::string(name()) + "' has no " +
                                                     std::string(to_string(*p)) +
                                                     " (its precisions: " + precision_list(caps) +
                                                     ")")
                      .add_context(where));
    }
    HONE_CHECK_OK_CTX(config_.set(field, std::string(to_string(*p))), where);
    return {};
  }
  if (field == "fp32_nodes" && !value.empty() && !capabilities().mixed_precision)
    return fail(Error(ErrorCode::kUnsupported,
                      "backend '" + std::string(name()) +
                          "' cannot keep single nodes in fp32 (no mixed precision)")
                    .add_context(where));
  HONE_CHECK_OK_CTX(config_.set_from_string(field, value), where);
  return {};
}

Precision Backend::precision() const {
  // configure() stored a canonical name; a subclass that redeclared the field
  // with another default still holds a parseable one.
  auto p = parse_precision(config_.get<std::string>("precision", "fp32"));
  return p ? *p : Precision::kFp32;
}

Result<void> Backend::set_precision(Precision p) {
  return configure("precision", std::string(to_string(p)));
}

std::vector<std::string> Backend::fp32_nodes() const {
  std::vector<std::string> out;
  const std::string s = config_.get<std::string>("fp32_nodes", "");
  size_t start = 0;
  while (start < s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Result<void> Backend::set_fp32_nodes(const std::vector<std::string>& nodes) {
  std::string s;
  for (const std::string& n : nodes) {
    if (n.find(',') != std::string::npos)
      return fail(ErrorCode::kInvalidArgument,
                  "node name '" + n + "' holds a comma; fp32_nodes cannot name it");
    s += (s.empty() ? "" : ",") + n;
  }
  return configure("fp32_nodes", s);
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

std::vector<std::pair<std::string, std::string>> Backend::choice_records() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& f : config_.record_fields())
    out.emplace_back(f, config_.get<std::string>(f, ""));
  return out;
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

std::string DeviceTensor::describe() const {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "] on cuda:" + std::to_string(device);
}

Result<std::vector<DeviceTensor>> Backend::infer_on_device(const std::vector<DeviceTensor>& inputs,
                                                           const DeviceCall& call) const {
  if (state_ != BackendState::kActive)
    return fail(ErrorCode::kFailedPrecondition, "backend '" + std::string(name()) + "' is " +
                                                    std::string(to_string(state_)) +
                                                    "; infer_on_device() needs an active backend");
  auto check = [](const DeviceTensor& t, const std::string& what) -> Result<void> {
    for (size_t a = 0; a < t.shape.size(); ++a)
      if (t.shape[a] < 0)
        return fail(ErrorCode::kInvalidArgument,
                    what + " axis " + std::to_string(a) + " is negative (" + t.describe() + ")");
    if (t.dtype == DType::kUndefined)
      return fail(ErrorCode::kInvalidArgument, what + " has no dtype");
    if (t.data == nullptr && t.numel() > 0)
      return fail(ErrorCode::kInvalidArgument, what + " (" + t.describe() + ") has no data");
    return {};
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    HONE_CHECK_OK(check(inputs[i], "device input " + std::to_string(i)));
  for (size_t i = 0; i < call.outputs.size(); ++i)
    HONE_CHECK_OK(check(call.outputs[i], "device output " + std::to_string(i)));
  auto out = do_infer_on_device(inputs, call);
  if (out) executions_.fetch_add(1, std::memory_order_relaxed);
  return out;
}

Result<std::vector<DeviceTensor>> Backend::do_infer_on_device(
    const std::vector<DeviceTensor>& inputs, const DeviceCall& call) const {
  (void)inputs;
  (void)call;
  return fail(ErrorCode::kUnsupported,
              "backend '" + std::string(name()) +
                  "' runs on the host and reads host memory: device-resident inference "
                  "(infer_on_device) needs a backend that runs on a GPU, such as 'cuda'");
}

Result<DeviceTensor> Backend::to_device(const Tensor& t) const {
  (void)t;
  return fail(ErrorCode::kUnsupported,
              "backend '" + std::string(name()) + "' runs on the host: it has no device memory");
}

Result<Tensor> Backend::to_host(const DeviceTensor& t) const {
  (void)t;
  return fail(ErrorCode::kUnsupported,
              "backend '" + std::string(name()) + "' runs on the host: it has no device memory");
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
