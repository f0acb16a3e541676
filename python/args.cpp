#include "args.h"

#include <utility>

#include "hone/onnx.h"
#include "hone/precision.h"

namespace hone::python {

Graph load_graph(py::handle model) {
  if (!py::isinstance<py::bytes>(model) && !py::isinstance<py::str>(model) &&
      py::hasattr(model, "SerializeToString"))
    return load_graph(model.attr("SerializeToString")());
  if (py::isinstance<py::bytes>(model)) {
    const std::string bytes = model.cast<std::string>();
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    // External data, if any, is looked up in the working directory.
    return unwrap(onnx::load_model_from_bytes(std::span<const uint8_t>(p, bytes.size()), "."));
  }
  // str or os.PathLike
  const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
  return unwrap(onnx::load_model(path));
}

std::vector<std::string> string_list(py::handle obj, const char* what) {
  std::vector<std::string> out;
  if (obj.is_none()) return out;
  if (py::isinstance<py::str>(obj)) {
    std::string s = obj.cast<std::string>(), cur;
    for (char c : s + ",") {
      if (c == ',') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    return out;
  }
  for (py::handle item : obj) {
    if (!py::isinstance<py::str>(item)) throw py::type_error(std::string(what) + " are strings");
    out.push_back(item.cast<std::string>());
  }
  return out;
}

std::vector<DimDeclaration> dim_declarations(py::handle dims) {
  std::vector<std::string> texts;
  if (dims.is_none()) return {};
  if (py::isinstance<py::dict>(dims)) {
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(dims)) {
      std::string text = k.cast<std::string>() + "=";
      if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
        std::string sep;
        for (py::handle b : v) {
          text += sep + std::to_string(b.cast<int64_t>());
          sep = ":";
        }
      } else {
        text += py::str(v).cast<std::string>();
      }
      texts.push_back(text);
    }
  } else {
    texts = string_list(dims, "dims");
  }
  std::vector<DimDeclaration> out;
  for (const std::string& t : texts) out.push_back(unwrap(parse_dim_declaration(t)));
  return out;
}

Sample sample_of(py::handle obj, const Graph& g, Keep& keep) {
  std::map<std::string, DType> wants;
  for (ValueId id : g.inputs()) wants[g.value(id).name] = g.value(id).dtype;
  if (py::isinstance<py::dict>(obj)) return to_sample(obj, wants, keep);
  py::list items;
  if (py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj)) {
    for (py::handle item : obj) items.append(item);
  } else {
    items.append(obj);
  }
  if (items.size() != g.inputs().size())
    throw py::value_error("a sample gives " + std::to_string(items.size()) +
                          " input(s); the model takes " + std::to_string(g.inputs().size()) +
                          " (or give a dict of inputs by name)");
  py::dict d;
  for (size_t i = 0; i < items.size(); ++i) d[py::str(g.value(g.inputs()[i]).name)] = items[i];
  return to_sample(d, wants, keep);
}

std::shared_ptr<const Strategy> strategy_of(const std::string& strategy, py::handle backends) {
  return unwrap(parse_strategy(strategy, string_list(backends, "backends")));
}

TuneOptions tune_options(int threads, bool cache, uint64_t seed,
                         std::map<std::string, std::map<std::string, std::string>> configs,
                         const std::string& precision) {
  TuneOptions o;
  if (precision == "auto")
    o.precision_auto = true;
  else if (auto p = parse_precision(precision); !p || *p != Precision::kFp32)
    throw py::value_error("precision takes 'fp32' or 'auto', not '" + precision + "'");
  o.threads = threads;
  o.use_cache = cache;
  o.seed = seed;
  o.configs = std::move(configs);
  return o;
}

std::vector<Tensor> call_inputs(const InputNames& in, const py::args& args,
                                const py::kwargs& kwargs, Keep& keep) {
  const size_t n = in.names.size();
  if (args.size() + kwargs.size() != n)
    throw py::type_error("the model takes " + std::to_string(n) + " input(s), got " +
                         std::to_string(args.size() + kwargs.size()));
  std::vector<Tensor> inputs(n);
  std::vector<bool> given(n, false);
  auto set = [&](size_t i, py::handle obj) {
    inputs[i] = to_tensor(obj, in.dtypes[i], "input '" + in.names[i] + "'", keep);
    given[i] = true;
  };
  for (size_t i = 0; i < args.size(); ++i) set(i, args[i]);
  for (auto [k, v] : kwargs) {
    const std::string name = k.cast<std::string>();
    size_t i = 0;
    while (i < n && in.names[i] != name) ++i;
    if (i == n) throw py::type_error("the model has no input named '" + name + "'");
    if (given[i]) throw py::type_error("input '" + name + "' given twice");
    set(i, v);
  }
  return inputs;
}

py::object call_outputs(const std::vector<Tensor>& outputs) {
  if (outputs.size() == 1) return to_numpy(outputs[0]);
  py::tuple t(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) t[i] = to_numpy(outputs[i]);
  return t;
}

}  // namespace hone::python
