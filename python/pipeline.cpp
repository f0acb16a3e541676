// hone.Pipeline: several models run one after another (hone/pipeline.h),
// each stage on the reference, tuned on what it really receives
// (tune_stage), or tuning itself just in time (add_jit_stage).
//
//   p = hone.Pipeline()
//   p.add_stage("mlp", "mlp.onnx"); p.add_jit_stage("head", head, mode="eager")
//   outs = p.run({"x": x})            # every stage's outputs by name
#include "bindings.h"

#include <memory>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "args.h"
#include "hone/inspection.h"
#include "hone/pipeline.h"
#include "hooks.h"

namespace hone::python {

namespace {

/// Destroying a pipeline waits for its JIT stages' tunes: without the GIL.
void destroy_pipeline(Pipeline* p) {
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
    py::gil_scoped_release release;
    delete p;
  } else {
    delete p;
  }
}

TensorMap tensor_map(py::handle inputs, Keep& keep) {
  if (!py::isinstance<py::dict>(inputs))
    throw py::type_error("pipeline inputs are a dict of arrays by name");
  TensorMap out;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(inputs)) {
    const std::string name = py::str(k);
    out.emplace(name, to_tensor(v, std::nullopt, "input '" + name + "'", keep));
  }
  return out;
}

py::dict run_pipeline(const Pipeline& p, py::handle inputs) {
  Keep keep;
  const TensorMap in = tensor_map(inputs, keep);
  auto out = without_gil([&] { return p.run(in); });
  py::dict d;
  for (const auto& [name, t] : unwrap(std::move(out))) d[py::str(name)] = to_numpy(t);
  return d;
}

void pipeline_tune_stage(Pipeline& p, const std::string& stage, py::handle samples,
                         const std::string& strategy, py::handle backends, int threads, bool cache,
                         uint64_t seed, py::object progress) {
  Keep keep;
  std::vector<TensorMap> list;
  for (py::handle s : samples) list.push_back(tensor_map(s, keep));
  TuneOptions o = tune_options(threads, cache, seed, {}, "fp32");
  const std::shared_ptr<const Strategy> strat = strategy_of(strategy, backends);
  TuneHooks hooks(std::move(progress));
  hooks.attach(o);
  auto r = without_gil([&] { return p.tune_stage(stage, list, *strat, o); });
  hooks.finish();
  unwrap(std::move(r));
}

void pipeline_add_jit_stage(Pipeline& p, const std::string& name, py::handle model,
                            const std::string& mode, const std::string& strategy,
                            py::handle backends, size_t min_samples, bool batch_axis_required,
                            bool background, int threads, bool cache) {
  JitOptions o;
  o.mode = unwrap(parse_jit_mode(mode));
  o.min_samples = min_samples;
  o.batch_axis_required = batch_axis_required;
  o.background = background;
  o.tune = tune_options(threads, cache, 1, {}, "fp32");
  Graph g = load_graph(model);
  unwrap(p.add_jit_stage(name, std::move(g), strategy_of(strategy, backends), std::move(o)));
}

}  // namespace

void bind_pipeline(py::module_& m) {
  py::class_<Pipeline, std::shared_ptr<Pipeline>>(
      m, "Pipeline",
      "Several models run one after another: a stage reads its inputs by name from the "
      "pipeline's inputs and earlier stages' outputs. A stage runs on the reference until "
      "tune_stage() tunes it on what it really receives, or tunes itself just in time "
      "(add_jit_stage). min_time_share: JIT stages below this share of the time spent in "
      "stages are not tuned. Thread-safe once set up; run() releases the GIL.")
      .def(py::init([](double min_time_share) {
             PipelineOptions o;
             o.min_time_share = min_time_share;
             return std::shared_ptr<Pipeline>(new Pipeline(o), &destroy_pipeline);
           }),
           py::arg("min_time_share") = 0.0)
      .def(
          "add_stage",
          [](Pipeline& p, const std::string& name, py::handle model) {
            unwrap(p.add_stage(name, load_graph(model)));
          },
          py::arg("name"), py::arg("model"),
          "Appends a stage: an ONNX model (a path, its bytes or an onnx.ModelProto) that runs "
          "on the reference until tune_stage() tunes it. Raises hone.Error for a duplicate "
          "name or a model the reference cannot run.")
      .def("add_jit_stage", &pipeline_add_jit_stage, py::arg("name"), py::arg("model"),
           py::arg("mode") = "eager", py::arg("strategy") = "max-throughput",
           py::arg("backends") = py::none(), py::arg("min_samples") = 8,
           py::arg("batch_axis_required") = false, py::arg("background") = true,
           py::arg("threads") = 0, py::arg("cache") = true,
           "Appends a stage that records what it receives in run() and tunes itself in its "
           "mode, as hone.jit does ('eager', 'deferred' or 'inspect').")
      .def("run", &run_pipeline, py::arg("inputs"),
           "Runs the stages in order on a dict of arrays by name; returns every stage's "
           "outputs by name.")
      .def("tune_stage", &pipeline_tune_stage, py::arg("stage"), py::arg("samples"),
           py::arg("strategy") = "max-throughput", py::arg("backends") = py::none(),
           py::arg("threads") = 0, py::arg("cache") = true, py::arg("seed") = 1,
           py::arg("progress") = py::none(),
           "Runs samples (dicts of the pipeline's inputs, at two or more batch sizes) through "
           "the pipeline, records what `stage` receives and tunes that stage on it. progress "
           "and Ctrl-C as in hone.tune.")
      .def(
          "tune_deferred",
          [](Pipeline& p, const std::string& stage) { unwrap(p.tune_deferred(stage)); },
          py::arg("stage"), "A deferred JIT stage tunes at its next call.")
      .def(
          "wait",
          [](const Pipeline& p) {
            without_gil([&] {
              p.wait();
              return 0;
            });
          },
          "Blocks until every JIT stage's background tune has finished.")
      .def("placement", &Pipeline::placement,
           "(stage, backend running it) for each stage, in order.")
      .def(
          "save",
          [](const Pipeline& p, const std::string& dir) {
            unwrap(without_gil([&] { return p.save(dir); }));
          },
          py::arg("dir"),
          "Writes dir/<stage>.hone for each tuned stage and dir/pipeline.json naming them.")
      .def(
          "load",
          [](Pipeline& p, const std::string& dir, bool allow_env_mismatch) {
            LoadOptions o;
            o.allow_env_mismatch = allow_env_mismatch;
            return unwrap(without_gil([&] { return p.load(dir, o); }));
          },
          py::arg("dir"), py::arg("allow_env_mismatch") = false,
          "Installs the tuned stages a save() wrote to dir, by stage name; returns how many.")
      .def(
          "inspect",
          [](const Pipeline& p) {
            return py::module_::import("json").attr("loads")(inspection_json(p.inspect()));
          },
          "The inspection report as a dict: the pipeline as the root, one child per stage "
          "with its state, backend, calls, times and the shapes it received.")
      .def(
          "save_report",
          [](const Pipeline& p, const std::string& path) {
            unwrap(without_gil([&] { return p.save_report(path); }));
          },
          py::arg("path"),
          "Writes the inspection report as a self-contained HTML page at path and its JSON "
          "beside it (same name, .json).");
}

}  // namespace hone::python
