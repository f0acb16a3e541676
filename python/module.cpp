// The `hone` Python module: tune, load, inspect and list backends from
// Python, on numpy arrays. Mirrors AITune's flow:
//
//   import hone, numpy as np
//   samples = [{"x": np.random.rand(b, 16).astype(np.float32)} for b in (1, 8)]
//   m = hone.tune("mlp.onnx", samples)          # try every backend, keep the best
//   m.save("mlp.hone"); y = hone.load("mlp.hone")(samples[0]["x"])
//
// Errors are hone.Error (a RuntimeError) with hone's message and context;
// wrong Python types are TypeError. hone's log goes to Python's `logging`
// (the logger "hone"); Ctrl-C cancels a tune (hooks.h). The JIT, pipelines,
// export and signing are in jit.cpp, pipeline.cpp and package.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "bindings.h"
#include "convert.h"
#include "hone/onnx.h"
#include "hone/package.h"
#include "hone/random_samples.h"
#include "hone/registry.h"
#include "hone/strategy.h"
#include "hone/tune.h"
#include "hooks.h"
#include "model.h"

namespace hone::python {
namespace {

Model tune_model(py::handle model, py::handle samples, const std::string& strategy,
                 py::handle backends, py::handle dims, std::vector<int64_t> batch_sizes,
                 int threads, bool cache, uint64_t seed,
                 std::map<std::string, std::map<std::string, std::string>> configs,
                 const std::string& precision, py::object progress) {
  Graph graph = load_graph(model);
  TuneOptions o = tune_options(threads, cache, seed, std::move(configs), precision);
  o.dims = dim_declarations(dims);
  const std::shared_ptr<const Strategy> strat = strategy_of(strategy, backends);
  Keep keep;
  std::vector<Sample> list;
  if (samples.is_none()) {
    // Unbounded dims get assumed bounds (logged), as `hone tune` gives them.
    sync_log_level();
    (void)assume_unbounded_dims(graph, o.dims);
    list = unwrap(random_samples(graph, o.dims, batch_sizes, seed));
  } else {
    for (py::handle s : samples) list.push_back(sample_of(s, graph, keep));
  }
  o.batch_sizes = batch_sizes;
  TuneHooks hooks(std::move(progress));
  hooks.attach(o);
  Result<TunedModel> tuned = without_gil([&] { return tune(graph, list, *strat, o); });
  hooks.finish();  // a KeyboardInterrupt (Ctrl-C) or the callback's exception cancelled it
  return Model{std::make_shared<const TunedModel>(unwrap(std::move(tuned)))};
}

py::dict value_info(const Value& v) {
  py::dict d;
  d["name"] = v.name;
  d["dtype"] = std::string(dtype_name(v.dtype));
  if (v.shape) {
    py::list dims;
    for (const Dim& dim : v.shape->dims()) {
      if (dim.is_static())
        dims.append(dim.value());
      else if (dim.is_symbolic())
        dims.append(dim.symbol_name());
      else
        dims.append(py::none());
    }
    d["shape"] = dims;
  } else {
    d["shape"] = py::none();
  }
  return d;
}

py::dict inspect(py::handle model) {
  Graph g = load_graph(model);
  py::dict d;
  d["name"] = g.name();
  py::list inputs, outputs;
  for (ValueId id : g.inputs()) inputs.append(value_info(g.value(id)));
  for (ValueId id : g.outputs()) outputs.append(value_info(g.value(id)));
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  std::map<std::string, int64_t> ops;
  for (const Node& n : g.nodes()) ++ops[n.op_type];
  d["ops"] = ops;
  d["nodes"] = g.nodes().size();
  d["parameter_bytes"] = g.parameter_bytes();
  d["opsets"] = g.opsets();
  return d;
}

py::list backends() {
  py::list out;
  for (const BackendRegistry::Entry& e : default_registry().entries()) {
    py::dict d;
    d["name"] = e.name;
    d["description"] = e.description;
    const std::string why = e.unavailable();
    d["available"] = why.empty();
    d["unavailable_reason"] = why;
    py::list devices, dtypes;
    for (Device dev : e.capabilities.devices) devices.append(std::string(to_string(dev)));
    for (DType t : e.capabilities.dtypes) dtypes.append(std::string(dtype_name(t)));
    d["devices"] = devices;
    d["dtypes"] = dtypes;
    py::list precisions;
    for (Precision p : e.capabilities.precisions) precisions.append(std::string(to_string(p)));
    d["precisions"] = precisions;
    d["build_mode"] = std::string(to_string(e.capabilities.build_mode));
    d["artifact_format"] = e.capabilities.artifact_format;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace hone::python

// hone._hone: the package python/hone/ re-exports it as `hone` (build/python/hone/
// in a build tree, the installed wheel's hone/ after `pip install .`).
PYBIND11_MODULE(_hone, m) {
  namespace hp = hone::python;
  m.doc() =
      "hone: tune a model for this machine (try every backend, check, measure, keep the best), "
      "save it, load it, run it on numpy arrays.";
  hp::register_error(m);
  hp::install_log_bridge();
  hp::bind_model(m);
  hp::bind_jit(m);
  hp::bind_pipeline(m);
  hp::bind_package(m);
  m.def("tune", &hp::tune_model, pybind11::arg("model"),
        pybind11::arg("samples") = pybind11::none(), pybind11::arg("strategy") = "max-throughput",
        pybind11::arg("backends") = pybind11::none(), pybind11::arg("dims") = pybind11::none(),
        pybind11::arg("batch_sizes") = std::vector<int64_t>{}, pybind11::arg("threads") = 0,
        pybind11::arg("cache") = true, pybind11::arg("seed") = 1,
        pybind11::arg("configs") = std::map<std::string, std::map<std::string, std::string>>{},
        pybind11::arg("precision") = "fp32", pybind11::arg("progress") = pybind11::none(),
        "Tunes an ONNX model (a path, its bytes or an onnx.ModelProto) on samples: a list of dicts "
        "of numpy arrays "
        "(or arrays, or tuples of arrays in input order), at two or more batch sizes; None: "
        "random samples. strategy: 'max-throughput', 'min-latency', 'first-wins', "
        "'one-backend', 'latency-budget:MS'. backends: candidates (list or 'a,b'). dims: "
        "{'batch': (1, 8, 32)} or ['seq=16']. precision: 'fp32' (strict, the default) or "
        "'auto' (also every reduced precision each backend declares, each judged by its own "
        "bound; the mixed plan with fp32 nodes where one fails). progress: called with a dict per "
        "step (candidate, step, candidate_index, "
        "candidate_count, fraction, eta_s). Ctrl-C, or an exception from progress, cancels "
        "the tune at its next step and is raised. Returns a hone.Model; raises hone.Error.");
  m.def(
      "load",
      [](const std::string& path, bool allow_env_mismatch, int threads) {
        hone::LoadOptions o;
        o.allow_env_mismatch = allow_env_mismatch;
        o.threads = threads;
        hone::Result<hone::TunedModel> r = hp::without_gil([&] { return hone::load(path, o); });
        return hp::Model{std::make_shared<const hone::TunedModel>(hp::unwrap(std::move(r)))};
      },
      pybind11::arg("path"), pybind11::arg("allow_env_mismatch") = false,
      pybind11::arg("threads") = -1,
      "Loads a .hone package (verified, not tuned again) as a hone.Model.");
  m.def("inspect", &hp::inspect, pybind11::arg("model"),
        "What an ONNX model (a path, its bytes or an onnx.ModelProto) takes, gives and holds, as a "
        "dict.");
  m.def("backends", &hp::backends,
        "The backends in this build: name, capabilities, whether this machine can run them.");
  m.attr("__version__") = HONE_VERSION_STRING;
}
