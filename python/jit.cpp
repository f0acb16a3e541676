// hone.jit and hone.JitModel: tuning just in time from the calls a Python
// program makes (hone/jit.h), and the inspection report of those calls.
//
//   m = hone.jit("mlp.onnx", mode="deferred")
//   for x in batches: m(x)          # runs on the reference, recorded
//   m.tune_now(); m.inspect()       # tuned on the recorded calls; the report as a dict
#include "bindings.h"

#include <memory>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "args.h"
#include "hone/inspection.h"
#include "hone/jit.h"
#include "hooks.h"
#include "model.h"

namespace hone::python {

namespace {

struct Jit : std::enable_shared_from_this<Jit> {
  InputNames inputs;
  std::map<std::string, DType> wants;
  std::unique_ptr<JitModel> model;
};

/// Destroying a JitModel waits for its background tune: without the GIL, so
/// other Python threads run meanwhile (the tune itself never takes it).
void destroy_jit(Jit* j) {
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
    py::gil_scoped_release release;
    delete j;
  } else {
    delete j;
  }
}

std::shared_ptr<Jit> make_jit(py::handle model, const std::string& mode,
                              const std::string& strategy, py::handle backends, size_t min_samples,
                              bool batch_axis_required, bool background, size_t max_samples_stored,
                              const std::string& spill_dir, int threads, bool cache, uint64_t seed,
                              std::map<std::string, std::map<std::string, std::string>> configs,
                              const std::string& precision) {
  Graph graph = load_graph(model);
  JitOptions o;
  o.mode = unwrap(parse_jit_mode(mode));
  o.min_samples = min_samples;
  o.batch_axis_required = batch_axis_required;
  o.background = background;
  o.max_samples_stored = max_samples_stored;
  o.spill_dir = spill_dir;
  o.tune = tune_options(threads, cache, seed, std::move(configs), precision);
  std::shared_ptr<Jit> j(new Jit, &destroy_jit);
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    j->inputs.names.push_back(v.name);
    j->inputs.dtypes.push_back(v.dtype == DType::kUndefined ? std::nullopt
                                                            : std::optional<DType>(v.dtype));
    if (v.dtype != DType::kUndefined) j->wants[v.name] = v.dtype;
  }
  j->model = std::make_unique<JitModel>(std::move(graph), strategy_of(strategy, backends), o);
  return j;
}

py::object jit_call(Jit& self, py::args args, py::kwargs kwargs) {
  Keep keep;
  std::vector<Tensor> inputs = call_inputs(self.inputs, args, kwargs, keep);
  auto out = without_gil([&] { return self.model->infer_flat(inputs); });
  return call_outputs(unwrap(std::move(out)));
}

py::object jit_infer(Jit& self, py::handle sample) {
  Keep keep;
  SampleValue in = to_sample(sample, self.wants, keep);
  auto out = without_gil([&] { return self.model->infer(in); });
  return from_sample(unwrap(std::move(out)));
}

py::object json_of(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

}  // namespace

void bind_jit(py::module_& m) {
  py::class_<Jit, std::shared_ptr<Jit>>(
      m, "JitModel",
      "A model tuned just in time (hone.jit): calls run on the reference and are recorded "
      "until it tunes on them (mode 'eager': after min_samples calls, on a background thread; "
      "'deferred': when asked), then on the tuned backend, swapped in between calls; mode "
      "'inspect' never tunes. inspect() and save_report() give what it saw. Thread-safe; "
      "calls release the GIL.")
      .def("__call__", &jit_call,
           "Runs one call on numpy arrays (graph inputs by position or by name), on the "
           "backend running now; records it while recording. One output comes back as an "
           "array, several as a tuple.")
      .def("infer", &jit_infer, py::arg("sample"),
           "Runs one call: a dict (tree) of inputs to the tree of outputs.")
      .def(
          "tune_deferred", [](Jit& self) { unwrap(self.model->tune_deferred()); },
          "Mode 'deferred': the next call starts the tune (in the background unless "
          "background=False). Raises hone.Error in other modes or once a tune started.")
      .def(
          "tune_now",
          [](Jit& self) { unwrap(without_gil([&] { return self.model->tune_now(); })); },
          "Tunes now on the recorded calls, in this thread, and swaps the tuned model in. "
          "Raises hone.Error in mode 'inspect', without recorded calls, once a tune started, "
          "or with the tune's own error.")
      .def(
          "wait",
          [](Jit& self) {
            without_gil([&] {
              self.model->wait();
              return 0;
            });
          },
          "Blocks until a tune running in the background has finished.")
      .def(
          "inspect",
          [](const Jit& self) { return json_of(inspection_json(self.model->inspect())); },
          "The inspection report as a dict: {'format': 'hone-inspection', 'version': 1, "
          "'root': {...}}; the root holds mode, state, backend, calls, samples_recorded, "
          "times (total_ms, avg_ms) and the dtypes and shapes seen per input and output.")
      .def(
          "save_report",
          [](const Jit& self, const std::string& path) {
            unwrap(without_gil([&] { return self.model->save_report(path); }));
          },
          py::arg("path"),
          "Writes the inspection report as a self-contained HTML page at path and its JSON "
          "beside it (same name, .json), each atomically.")
      .def_property_readonly(
          "mode", [](const Jit& self) { return std::string(to_string(self.model->mode())); },
          "'eager', 'deferred' or 'inspect'.")
      .def_property_readonly(
          "state", [](const Jit& self) { return std::string(to_string(self.model->state())); },
          "'recording', 'tuning', 'tuned', 'failed', 'skipped' or 'inspecting'.")
      .def_property_readonly(
          "backend",
          [](const Jit& self) {
            const TunedModel* t = self.model->tuned();
            return t != nullptr ? std::string(t->backend().name()) : std::string("reference");
          },
          "The backend calls run on now: 'reference' until the tuned model is swapped in.")
      .def_property_readonly(
          "recorded", [](const Jit& self) { return self.model->recorded(); },
          "Calls recorded so far (it stops growing once a tune starts).")
      .def_property_readonly(
          "out_of_bounds_calls", [](const Jit& self) { return self.model->out_of_bounds_calls(); },
          "Calls after tuning that fell outside the tuned bounds and ran on the reference.")
      .def_property_readonly(
          "tuning_error",
          [](const Jit& self) -> py::object {
            auto e = self.model->tuning_error();
            if (!e) return py::none();
            return py::str(e->to_string());
          },
          "Why tuning failed or was skipped, or None.")
      .def_property_readonly(
          "tuned",
          [](Jit& self) -> py::object {
            const TunedModel* t = self.model->tuned();
            if (t == nullptr) return py::none();
            // Shares ownership of this JitModel, which keeps the tuned model alive.
            return py::cast(Model{std::shared_ptr<const TunedModel>(self.shared_from_this(), t)});
          },
          "The tuned hone.Model once tuning succeeded (to save or export), else None.")
      .def("__repr__", [](const Jit& self) {
        return "<hone.JitModel " + std::string(to_string(self.model->mode())) + ", " +
               std::string(to_string(self.model->state())) + ">";
      });

  m.def("jit", &make_jit, py::arg("model"), py::arg("mode") = "eager",
        py::arg("strategy") = "max-throughput", py::arg("backends") = py::none(),
        py::arg("min_samples") = 8, py::arg("batch_axis_required") = false,
        py::arg("background") = true, py::arg("max_samples_stored") = 64, py::arg("spill_dir") = "",
        py::arg("threads") = 0, py::arg("cache") = true, py::arg("seed") = 1,
        py::arg("configs") = std::map<std::string, std::map<std::string, std::string>>{},
        py::arg("precision") = "fp32",
        "Wraps an ONNX model (a path, its bytes or an onnx.ModelProto) to tune just in time "
        "from the calls made on it. mode: 'eager' (tunes once min_samples calls, and with "
        "batch_axis_required two batch sizes, were seen), 'deferred' (tunes when "
        "tune_deferred() or tune_now() asks) or 'inspect' (never tunes; only the report). "
        "background=False tunes inside the call that starts it. At most max_samples_stored "
        "calls stay in memory; past that they go to spill_dir. strategy, backends, threads, "
        "cache, seed, configs and precision are hone.tune's. Returns a hone.JitModel.");
}

}  // namespace hone::python
