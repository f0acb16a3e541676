// The reference backend: the plain interpreter behind the Backend interface.
#include <memory>

#include "eval/interpreter.h"
#include "hone/registry.h"

namespace hone {
namespace {

class ReferenceBackend final : public Backend {
 public:
  static const BackendCapabilities& caps() {
    static const BackendCapabilities c = [] {
      BackendCapabilities k;
      k.devices = {Device::kCpu};
      k.dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8,
                  DType::kI16, DType::kU16, DType::kI32, DType::kU32, DType::kI64, DType::kU64,
                  DType::kBool};
      k.precisions = {"f32"};
      k.build_mode = BuildMode::kJustInTime;
      k.dynamic_shapes = true;
      // Its partition is the plain ONNX graph, which hone's exporter writes.
      k.has_artifact = true;
      k.artifact_format = "onnx";
      return k;
    }();
    return c;
  }

  std::string_view name() const override { return "reference"; }
  const BackendCapabilities& capabilities() const override { return caps(); }

 protected:
  Result<void> do_build(const Graph& graph) override {
    HONE_CHECK_OK(interpreter_.check_supported(graph));
    graph_ = std::make_unique<Graph>(graph);
    return {};
  }
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& inputs) const override {
    return interpreter_.run_tensors(*graph_, inputs);
  }

 private:
  eval::Interpreter interpreter_;
  std::unique_ptr<const Graph> graph_;
};

}  // namespace

void register_reference(BackendRegistry& registry) {
  auto r = registry.add({"reference",
                         "plain op-by-op interpreter that defines the right answer",
                         ReferenceBackend::caps(),
                         [] { return std::make_unique<ReferenceBackend>(); }, {}});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
