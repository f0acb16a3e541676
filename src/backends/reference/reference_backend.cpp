// The reference backend: the plain interpreter behind the Backend interface.
#include <memory>

#include "eval/interpreter.h"
#include "eval/kernel_util.h"
#include "hone/registry.h"

namespace hone {
namespace {

class ReferenceBackend final : public Backend {
 public:
  static const BackendCapabilities& caps() {
    static const BackendCapabilities c = [] {
      BackendCapabilities k;
      k.devices = {Device::kCpu};
      k.dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                  DType::kU8,  DType::kI16, DType::kU16, DType::kI32,  DType::kU32,
                  DType::kI64, DType::kU64, DType::kBool};
      k.precisions = {Precision::kFp32, Precision::kFp64};
      k.build_mode = BuildMode::kJustInTime;
      k.dynamic_shapes = true;
      // Its partition is the plain ONNX graph, which hone's exporter writes.
      k.has_artifact = true;
      k.artifact_format = "onnx";
      return k;
    }();
    return c;
  }

  ReferenceBackend() {
    mutable_config().declare(
        "precision", std::string("fp32"),
        "fp32: the answer in the model's own types; fp64: every f32 value, weight and input "
        "widened to f64 and f64 outputs (the ground truth tuning measures candidates against)");
  }

  std::string_view name() const override { return kReferenceBackend; }
  const BackendCapabilities& capabilities() const override { return caps(); }

 protected:
  Result<void> do_build(const Graph& graph) override {
    f64_ = precision() == Precision::kFp64;  // configure() admits only fp32 and fp64
    interpreter_ = eval::Interpreter(eval::OpRegistry::reference(),
                                     f64_ ? eval::Precision::kF64 : eval::Precision::kF32);
    HONE_CHECK_OK(interpreter_.check_supported(graph));
    graph_ = std::make_unique<Graph>(f64_ ? eval::widen_to_f64(graph) : graph);
    return {};
  }
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& inputs) const override {
    if (!f64_) return interpreter_.run_tensors(*graph_, inputs);
    std::vector<Tensor> wide;
    wide.reserve(inputs.size());
    for (const Tensor& t : inputs)
      wide.push_back(t.dtype() == DType::kF32 ? eval::cast_tensor(t, DType::kF64) : t);
    return interpreter_.run_tensors(*graph_, wide);
  }

 private:
  bool f64_ = false;
  eval::Interpreter interpreter_;
  std::unique_ptr<const Graph> graph_;
};

}  // namespace

void register_reference(BackendRegistry& registry) {
  auto r = registry.add({kReferenceBackend,
                         "plain op-by-op interpreter that defines the right answer",
                         ReferenceBackend::caps(),
                         [] { return std::make_unique<ReferenceBackend>(); },
                         {}});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
