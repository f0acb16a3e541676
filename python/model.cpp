#include "model.h"

#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "args.h"
#include "convert.h"
#include "device.h"
#include "hone/export.h"
#include "hone/file_io.h"
#include "hone/package.h"
#include "hone/triton.h"
#include "hooks.h"

namespace hone::python {

namespace {

py::list tensor_specs(const std::vector<TensorSpec>& specs, const GraphSpec& spec) {
  py::list out;
  for (const TensorSpec& t : specs) {
    py::dict d;
    d["name"] = t.name;
    d["path"] = t.path;
    d["dtype"] = std::string(dtype_name(t.dtype));
    d["shape"] = spec_shape(t);
    d["batch_axis"] = t.batch_axis;
    py::dict bounds;
    for (const DimSpec& dim : t.dims)
      if (auto it = spec.bounds.find(dim.name); !dim.name.empty() && it != spec.bounds.end())
        bounds[py::str(dim.name)] = py::make_tuple(it->second.min, it->second.opt, it->second.max);
    d["bounds"] = bounds;
    out.append(d);
  }
  return out;
}

/// model(x), model(x, y), model(x=..., y=...): graph inputs by position or
/// name; one output comes back as an array, several as a tuple.
py::object call(const Model& self, py::args args, py::kwargs kwargs) {
  const TunedModel& m = *self.tuned;
  const auto& specs = m.spec().inputs;
  const Graph& g = m.graph();
  InputNames in;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    in.names.push_back(v.name);
    in.dtypes.emplace_back(i < specs.size() ? specs[i].dtype : v.dtype);
  }
  Keep keep;
  std::vector<Tensor> inputs = call_inputs(in, args, kwargs, keep);
  Result<std::vector<Tensor>> out = [&] {
    py::gil_scoped_release release;
    return m.infer_flat(inputs);
  }();
  flush_log();
  return call_outputs(unwrap(std::move(out)));
}

/// model.infer({...}): an input tree in, the output tree out.
py::object infer(const Model& self, py::handle sample) {
  const TunedModel& m = *self.tuned;
  Keep keep;
  SampleValue in = to_sample(sample, input_dtypes(m.spec()), keep);
  Result<SampleValue> out = [&] {
    py::gil_scoped_release release;
    return m.infer(in);
  }();
  flush_log();
  return from_sample(unwrap(std::move(out)));
}

/// model.input_buffer(input, shape): a zero-filled array for one graph input
/// in the memory the chosen backend copies from fastest.
py::array input_buffer(const Model& self, py::handle which, const std::vector<int64_t>& shape) {
  const TunedModel& m = *self.tuned;
  const Graph& g = m.graph();
  const auto& specs = m.spec().inputs;
  size_t i = g.inputs().size();
  if (py::isinstance<py::str>(which)) {
    const std::string name = which.cast<std::string>();
    for (i = 0; i < g.inputs().size() && g.value(g.inputs()[i]).name != name; ++i) {
    }
    if (i == g.inputs().size()) throw py::key_error("the model has no input named '" + name + "'");
  } else {
    const auto at = which.cast<int64_t>();
    if (at < 0 || at >= static_cast<int64_t>(g.inputs().size()))
      throw py::index_error("input " + std::to_string(at) + ": the model has " +
                            std::to_string(g.inputs().size()) + " input(s)");
    i = static_cast<size_t>(at);
  }
  const Value& v = g.value(g.inputs()[i]);
  const DType dt = i < specs.size() ? specs[i].dtype : v.dtype;
  if (dt == DType::kUndefined)
    throw py::value_error("input '" + v.name + "' has no known element type");
  Result<Tensor> t = [&] {
    py::gil_scoped_release release;
    return m.backend().allocate_host(dt, shape);
  }();
  return to_numpy(unwrap(std::move(t)));
}

/// The report's page at `path` and its JSON beside it, as the CLI writes them.
void save_report(const Model& self, const std::string& path) {
  const std::filesystem::path html(path);
  if (html.extension() == ".json")
    raise(Error(
        ErrorCode::kInvalidArgument,
        "the report page '" + path + "' would be overwritten by its .json; give a .html path"));
  std::filesystem::path json = html;
  json.replace_extension(".json");
  const TuneReport& r = self.tuned->report();
  unwrap(without_gil([&]() -> Result<void> {
    HONE_CHECK_OK(write_file_atomic(html, r.html()));
    return write_file_atomic(json, r.json());
  }));
}

}  // namespace

py::dict export_model(const Model& self, const std::string& dir, const std::string& format,
                      const std::string& backend, const std::string& name) {
  py::dict d;
  if (format == "triton") {
    if (!backend.empty())
      throw py::value_error("format 'triton' exports the ONNX graph; backend does not apply");
    TritonOptions o;
    o.name = name;
    Result<TritonRecord> result = [&] {
      py::gil_scoped_release release;
      return export_triton(*self.tuned, dir, o);
    }();
    TritonRecord r = unwrap(std::move(result));
    d["format"] = "triton";
    d["name"] = r.name;
    d["path"] = r.model_dir.string();
    d["max_batch_size"] = r.max_batch_size;
    d["config"] = r.config;
    return d;
  }
  if (!name.empty()) throw py::value_error("name applies to format 'triton' only");
  ExportOptions o;
  o.format = format;
  o.backend = backend;
  Result<ExportRecord> r = [&] {
    py::gil_scoped_release release;
    return export_artifact(*self.tuned, dir, o);
  }();
  ExportRecord rec = unwrap(std::move(r));
  d["format"] = rec.format;
  d["path"] = dir;
  d["produced_by"] = rec.backend;
  py::list files;
  for (const auto& [f, sum] : rec.files) files.append(py::make_tuple(f, sum));
  d["files"] = files;
  d["max_batch_measured"] = rec.max_batch_measured;
  return d;
}

void bind_model(py::module_& m) {
  bind_device_array(m);
  py::class_<Model> cls(
      m, "Model",
      "A tuned model: the chosen backend, built. Call it on numpy arrays (graph "
      "inputs by position or name) or use infer() with an input tree. Thread-safe; "
      "inference releases the GIL.");
  cls.def("__call__", &call,
          "Runs one call on numpy arrays: graph inputs by position or by name. One output "
          "comes back as an array, several as a tuple in graph order. Raises TypeError for a "
          "wrong dtype or input count, hone.Error for a shape outside the tuned bounds.")
      .def("infer", &infer, py::arg("sample"),
           "Runs one call: a dict (tree) of inputs to the tree of outputs.")
      .def(
          "save",
          [](const Model& self, const std::string& path) {
            Result<void> r = [&] {
              py::gil_scoped_release release;
              return save(*self.tuned, path);
            }();
            unwrap(std::move(r));
          },
          py::arg("path"), "Saves the model as a .hone package (atomically).")
      .def("input_buffer", &input_buffer, py::arg("input"), py::arg("shape"),
           "A zero-filled array for graph input `input` (its name or position) of `shape`, in "
           "the memory the chosen backend copies from fastest: page-locked host memory on cuda, "
           "which reaches the GPU in one DMA (about three times the rate of ordinary memory on "
           "an H200). Fill it and pass it to the model, as often as you like.")
      .def("export", &export_model, py::arg("dir"), py::arg("format") = "", py::arg("backend") = "",
           py::arg("name") = "",
           "Writes a deployable artifact: format 'onnx', 'native-so' (with backend='aot') or "
           "'triton' (a model folder named `name` in the Triton repository `dir`); returns "
           "what was written.")
      .def_property_readonly(
          "backend", [](const Model& self) { return self.tuned->decision().backend; },
          "The name of the backend tuning chose.")
      .def_property_readonly(
          "inputs",
          [](const Model& self) {
            return tensor_specs(self.tuned->spec().inputs, self.tuned->spec());
          },
          "The graph inputs: dicts of name, path, dtype, shape (ints and dim "
          "names), batch_axis and bounds ({dim: (min, opt, max)}).")
      .def_property_readonly(
          "outputs",
          [](const Model& self) {
            return tensor_specs(self.tuned->spec().outputs, self.tuned->spec());
          },
          "The graph outputs, described as inputs are.")
      .def_property_readonly(
          "report",
          [](const Model& self) {
            return py::module_::import("json").attr("loads")(self.tuned->report().json());
          },
          "The tuning report (its JSON) as a dict; report['decision'] holds the choice.")
      .def(
          "report_html", [](const Model& self) { return self.tuned->report().html(); },
          "The tuning report as a self-contained HTML page with plots.")
      .def("save_report", &save_report, py::arg("path"),
           "Writes the tuning report as its self-contained HTML page at path and its JSON "
           "beside it (same name, .json), each atomically; raises hone.Error for a path "
           "ending in .json.")
      .def("__repr__", [](const Model& self) {
        return "<hone.Model '" + self.tuned->graph().name() + "' on " +
               self.tuned->decision().backend + ">";
      });
  add_device_methods(cls);
}

}  // namespace hone::python
