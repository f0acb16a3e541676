#include "backends/cuda/cudnn_api.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "core/log.h"

namespace hone::cuda {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLib = "libcudnn.so.9";
// cuDNN 9's libcudnn.so.9 is a thin layer that loads these by name when first
// needed; loading them first from the same folder lets that lookup find them
// even when the folder is on no search path (a pip wheel). In dependency order.
constexpr const char* kParts[] = {"libcudnn_graph.so.9",
                                  "libcudnn_ops.so.9",
                                  "libcudnn_cnn.so.9",
                                  "libcudnn_heuristic.so.9",
                                  "libcudnn_engines_runtime_compiled.so.9",
                                  "libcudnn_engines_precompiled.so.9"};

std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

template <class Fn>
Result<void> bind(void* lib, Fn& fn, const char* symbol) {
  if (void* p = dlsym(lib, symbol)) {
    fn = reinterpret_cast<Fn>(p);
    return {};
  }
  return fail(ErrorCode::kUnsupportedHardware,
              std::string(kLib) + " lacks " + symbol + "; is it older than cuDNN 8?");
}

Result<void> bind_all(void* h, CudnnApi& a) {
#define HONE_BIND(f) HONE_CHECK_OK(bind(h, a.f, #f))
  HONE_BIND(cudnnGetVersion);
  HONE_BIND(cudnnGetErrorString);
  HONE_BIND(cudnnCreate);
  HONE_BIND(cudnnDestroy);
  HONE_BIND(cudnnSetStream);
  HONE_BIND(cudnnCreateTensorDescriptor);
  HONE_BIND(cudnnDestroyTensorDescriptor);
  HONE_BIND(cudnnSetTensor4dDescriptor);
  HONE_BIND(cudnnSetTensorNdDescriptor);
  HONE_BIND(cudnnCreateFilterDescriptor);
  HONE_BIND(cudnnDestroyFilterDescriptor);
  HONE_BIND(cudnnSetFilter4dDescriptor);
  HONE_BIND(cudnnSetFilterNdDescriptor);
  HONE_BIND(cudnnCreateConvolutionDescriptor);
  HONE_BIND(cudnnDestroyConvolutionDescriptor);
  HONE_BIND(cudnnSetConvolution2dDescriptor);
  HONE_BIND(cudnnSetConvolutionNdDescriptor);
  HONE_BIND(cudnnSetConvolutionGroupCount);
  HONE_BIND(cudnnSetConvolutionMathType);
  HONE_BIND(cudnnCreateActivationDescriptor);
  HONE_BIND(cudnnDestroyActivationDescriptor);
  HONE_BIND(cudnnSetActivationDescriptor);
  HONE_BIND(cudnnFindConvolutionForwardAlgorithm);
  HONE_BIND(cudnnGetConvolutionForwardAlgorithm_v7);
  HONE_BIND(cudnnGetConvolutionForwardWorkspaceSize);
  HONE_BIND(cudnnConvolutionForward);
  HONE_BIND(cudnnConvolutionBiasActivationForward);
#undef HONE_BIND
  return {};
}

/// Opens `candidate` (a path, or a bare name for the loader), first loading
/// the sub-libraries beside a path. The handle, or dlerror's text.
std::pair<void*, std::string> open(const std::string& candidate) {
  if (candidate.find('/') != std::string::npos) {
    if (!fs::exists(candidate)) return {nullptr, "not there"};
    const fs::path dir = fs::path(candidate).parent_path();
    for (const char* part : kParts)
      if (fs::exists(dir / part)) (void)dlopen((dir / part).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return {h, ""};
  const char* e = dlerror();
  return {nullptr, e != nullptr ? e : "unknown dlopen error"};
}

}  // namespace

std::vector<std::string> Cudnn::candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("HONE_CUDNN_PATH"); p != nullptr && *p != '\0') {
    std::error_code ec;
    out.push_back(fs::is_directory(p, ec) ? (fs::path(p) / kLib).string() : std::string(p));
  }
  out.emplace_back(kLib);
  std::vector<std::string> prefixes;
  for (const char* env : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* p = std::getenv(env); p != nullptr && *p != '\0') prefixes.emplace_back(p);
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    prefixes.push_back(std::string(home) + "/.local");
  prefixes.insert(prefixes.end(), {"/usr/local", "/usr"});
  for (const std::string& pre : prefixes)
    for (const char* kind : {"site-packages", "dist-packages"})
      for (const std::string& p :
           glob_paths(pre + "/lib/python3*/" + kind + "/nvidia/cudnn/lib/" + kLib))
        out.push_back(p);
  out.push_back(std::string("/usr/local/cuda/lib64/") + kLib);
  return out;
}

Result<const Cudnn*> Cudnn::load() {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  std::string tried;
  for (const std::string& c : Cudnn::candidates()) {
    auto [h, why] = open(c);
    if (h == nullptr) {
      tried += (tried.empty() ? "" : "; ") + c + ": " + why;
      continue;
    }
    std::unique_ptr<Cudnn> dnn(new Cudnn());
    CudnnApi& a = dnn->api_;
    if (auto r = bind_all(h, a); !r) {
      tried += (tried.empty() ? "" : "; ") + c + ": " + r.error().message();
      continue;
    }
    const size_t v = a.cudnnGetVersion();
    if (v < 8000) {
      tried += (tried.empty() ? "" : "; ") + c + ": version " + std::to_string(v) + " < 8.0";
      continue;
    }
    Dl_info info{};
    std::string where = c;
    if (dladdr(reinterpret_cast<void*>(a.cudnnGetVersion), &info) != 0 && info.dli_fname)
      where = info.dli_fname;
    const size_t major = v >= 90000 ? v / 10000 : v / 1000;  // 9.1.0 is 90100, 8.9.7 is 8907
    dnn->description_ = "cuDNN " + std::to_string(major) + "." + std::to_string(v / 100 % 100) +
                        "." + std::to_string(v % 100) + " (" + where + ")";
    HONE_CHECK_OK_CTX(dnn->check(a.cudnnCreate(&dnn->planning_), "cudnnCreate"),
                      "with " + dnn->description_);
    HONE_LOG_DEBUG("cuda: convolutions on {}", dnn->description_);
    return dnn.release();  // lives as long as the process, like the driver
  }
  return fail(
      ErrorCode::kUnsupportedHardware,
      "cuDNN not found (set HONE_CUDNN_PATH to libcudnn.so.9 or its folder); tried " + tried);
}

Result<const Cudnn*> Cudnn::get() {
  static const Result<const Cudnn*> dnn = load();
  return dnn;
}

std::mutex& Cudnn::planning_mutex() const {
  static std::mutex mu;
  return mu;
}

Result<void> Cudnn::check(int status, const char* what) const {
  if (status == 0) return {};
  constexpr int kAllocFailed = 2;  // CUDNN_STATUS_ALLOC_FAILED
  const char* text = api_.cudnnGetErrorString ? api_.cudnnGetErrorString(status) : nullptr;
  return fail(status == kAllocFailed ? ErrorCode::kOutOfMemory : ErrorCode::kInternal,
              std::string(what) + ": " +
                  (text != nullptr ? text : "cuDNN status " + std::to_string(status)));
}

}  // namespace hone::cuda
