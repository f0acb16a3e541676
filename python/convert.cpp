#include "convert.h"

#include <cstring>
#include <utility>

#include <pybind11/eval.h>

namespace hone::python {

namespace {

py::object g_error;  // hone.Error

}  // namespace

void register_error(py::module_& m) {
  // A plain Exception subclass made in Python, so it carries attributes.
  py::dict scope;
  py::exec(R"(
class Error(RuntimeError):
    """A hone error: str() is the message with its context chain; .code is the
    kind ('invalid argument', 'not found', ...), .message the message alone and
    .context the 'while ...' lines, innermost first."""
    def __init__(self, text, code="internal", message="", context=()):
        super().__init__(text)
        self.code = code
        self.message = message or text
        self.context = list(context)
)",
           scope);
  g_error = scope["Error"];
  g_error.attr("__module__") = "hone";
  m.attr("Error") = g_error;
}

void raise(const Error& e) {
  py::list context;
  for (const std::string& c : e.context()) context.append(c);
  py::object exc = g_error(e.to_string(), std::string(to_string(e.code())), e.message(), context);
  PyErr_SetObject(g_error.ptr(), exc.ptr());
  throw py::error_already_set();
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::kF32:
      return py::dtype::of<float>();
    case DType::kF64:
      return py::dtype::of<double>();
    case DType::kF16:
      return py::dtype("float16");
    case DType::kI8:
      return py::dtype::of<int8_t>();
    case DType::kU8:
      return py::dtype::of<uint8_t>();
    case DType::kI16:
      return py::dtype::of<int16_t>();
    case DType::kU16:
      return py::dtype::of<uint16_t>();
    case DType::kI32:
      return py::dtype::of<int32_t>();
    case DType::kU32:
      return py::dtype::of<uint32_t>();
    case DType::kI64:
      return py::dtype::of<int64_t>();
    case DType::kU64:
      return py::dtype::of<uint64_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
    case DType::kBF16:
    case DType::kUndefined:
      break;
  }
  throw py::type_error("dtype " + std::string(dtype_name(t)) + " has no numpy equivalent");
}

namespace {

std::optional<DType> hone_dtype(const py::dtype& d) {
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kI8, DType::kU8, DType::kI16,
                  DType::kU16, DType::kI32, DType::kU32, DType::kI64, DType::kU64, DType::kBool})
    if (d.is(numpy_dtype(t)) || d.equal(numpy_dtype(t))) return t;
  return std::nullopt;
}

}  // namespace

Tensor to_tensor(py::handle obj, std::optional<DType> want, const std::string& what, Keep& keep) {
  const bool is_array = py::isinstance<py::array>(obj);
  py::array arr;
  if (is_array) {
    arr = py::reinterpret_borrow<py::array>(obj);
  } else {
    py::module_ np = py::module_::import("numpy");
    arr = want ? np.attr("asarray")(obj, numpy_dtype(*want)) : np.attr("asarray")(obj);
  }
  std::optional<DType> dt = hone_dtype(arr.dtype());
  if (!dt)
    throw py::type_error(what + ": numpy dtype " + py::str(arr.dtype()).cast<std::string>() +
                         " has no hone dtype");
  if (want && *dt != *want)
    throw py::type_error(what + " is " + std::string(dtype_name(*dt)) + " (numpy " +
                         py::str(arr.dtype()).cast<std::string>() + "); the model takes " +
                         std::string(dtype_name(*want)) + ": convert it with .astype(numpy." +
                         py::str(numpy_dtype(*want)).cast<std::string>() + ")");
  // Borrow C-contiguous arrays; copy others into C order first.
  if (!(arr.flags() & py::array::c_style))
    arr = py::module_::import("numpy").attr("ascontiguousarray")(arr);
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  keep.push_back(arr);
  // hone reads inputs only; the const_cast lets a read-only array be borrowed.
  return Tensor::borrow(*dt, std::move(shape), const_cast<void*>(arr.data()));
}

py::array to_numpy(const Tensor& t) {
  // The capsule owns a Tensor sharing the bytes, so the array keeps them
  // alive; a borrowed tensor (a view into memory hone may reuse) is cloned.
  auto* owner = new Tensor(t.owns() ? t : t.clone());
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(numpy_dtype(owner->dtype()), shape, {}, owner->raw(), base);
}

SampleValue to_sample(py::handle obj, const std::map<std::string, DType>& wants, Keep& keep,
                      const std::string& path) {
  auto want_at = [&](const std::string& p) -> std::optional<DType> {
    auto it = wants.find(p);
    return it == wants.end() ? std::nullopt : std::optional<DType>(it->second);
  };
  if (py::isinstance<py::dict>(obj)) {
    SampleMap m;
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
      if (!py::isinstance<py::str>(k))
        throw py::type_error("sample keys are strings; got " + py::repr(k).cast<std::string>() +
                             (path.empty() ? "" : " at '" + path + "'"));
      const std::string key = k.cast<std::string>();
      const std::string child = path.empty() ? key : path + "." + key;
      m.emplace(key, to_sample(v, wants, keep, child));
    }
    return m;
  }
  if (py::isinstance<py::array>(obj)) return to_tensor(obj, want_at(path), "'" + path + "'", keep);
  if (py::isinstance<py::bool_>(obj) || py::isinstance<py::int_>(obj) ||
      py::isinstance<py::float_>(obj)) {
    // A number where the model wants a tensor becomes a 0-d tensor of its dtype.
    if (want_at(path)) return to_tensor(obj, want_at(path), "'" + path + "'", keep);
    return obj.cast<double>();
  }
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
    bool nested = false;
    for (py::handle item : seq)
      nested = nested || py::isinstance<py::array>(item) || py::isinstance<py::dict>(item);
    // A list of numbers is a tensor; a list of arrays or trees is a list.
    if (!nested || want_at(path)) return to_tensor(obj, want_at(path), "'" + path + "'", keep);
    SampleList l;
    for (size_t i = 0; i < seq.size(); ++i)
      l.push_back(to_sample(seq[i], wants, keep, path + "[" + std::to_string(i) + "]"));
    return l;
  }
  throw py::type_error("cannot use a " + py::str(obj.get_type()).cast<std::string>() +
                       " as a sample value" + (path.empty() ? "" : " at '" + path + "'") +
                       "; give numpy arrays, numbers, dicts and lists");
}

py::object from_sample(const SampleValue& v) {
  switch (v.kind()) {
    case SampleValue::Kind::kTensor:
      return to_numpy(v.tensor());
    case SampleValue::Kind::kScalar:
      return py::float_(v.scalar());
    case SampleValue::Kind::kMap: {
      py::dict d;
      for (const auto& [k, child] : v.map()) d[py::str(k)] = from_sample(child);
      return d;
    }
    case SampleValue::Kind::kList: {
      py::list l;
      for (const auto& child : v.list()) l.append(from_sample(child));
      return l;
    }
  }
  return py::none();
}

std::map<std::string, DType> input_dtypes(const GraphSpec& spec) {
  std::map<std::string, DType> out;
  for (const TensorSpec& t : spec.inputs)
    if (!t.scalar_leaf) out[t.path] = t.dtype;
  return out;
}

py::list spec_shape(const TensorSpec& t) {
  py::list dims;
  for (const DimSpec& d : t.dims) {
    if (d.kind == DimSpec::Kind::kStatic)
      dims.append(d.size);
    else if (d.name.empty())
      dims.append(py::none());
    else
      dims.append(d.name);
  }
  return dims;
}

}  // namespace hone::python
