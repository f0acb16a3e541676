// The C API (include/hone/hone.h) over the C++ library: every entry point
// turns a hone::Error into a status and the thread's last-error string, and
// catches every exception, so nothing C++ crosses into the caller.
#include "hone/hone.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "hone/export.h"
#include "hone/onnx.h"
#include "hone/package.h"
#include "hone/random_samples.h"
#include "hone/strategy.h"
#include "hone/triton.h"
#include "hone/tune.h"
#include "hone/version.h"

/// The handle: the tuned model and the info arrays handed out for it.
struct hone_model {
  struct Info {
    std::string name;
    hone_dtype dtype = HONE_UNDEFINED;
    std::vector<int64_t> dims;
    std::vector<std::string> dim_names;
    std::vector<const char*> dim_name_ptrs;
  };
  explicit hone_model(hone::TunedModel m) : model(std::move(m)) {
    describe(model.spec().inputs, inputs);
    describe(model.spec().outputs, outputs);
  }
  static void describe(const std::vector<hone::TensorSpec>& specs, std::vector<Info>& out) {
    out.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      Info& info = out[i];
      info.name = specs[i].name;
      info.dtype = static_cast<hone_dtype>(specs[i].dtype);
      for (const hone::DimSpec& d : specs[i].dims) {
        const bool fixed = d.kind == hone::DimSpec::Kind::kStatic;
        info.dims.push_back(fixed ? d.size : -1);
        info.dim_names.push_back(fixed ? "" : d.name);
      }
      for (const std::string& n : info.dim_names) info.dim_name_ptrs.push_back(n.c_str());
    }
  }
  hone::TunedModel model;
  std::vector<Info> inputs, outputs;
};

namespace {

thread_local std::string g_last_error;

hone_status set_error(const hone::Error& e) {
  g_last_error = e.to_string();
  switch (e.code()) {
    case hone::ErrorCode::kInvalidArgument:
      return HONE_INVALID_ARGUMENT;
    case hone::ErrorCode::kUnsupported:
      return HONE_UNSUPPORTED;
    case hone::ErrorCode::kUnsupportedHardware:
      return HONE_UNSUPPORTED_HARDWARE;
    case hone::ErrorCode::kNotFound:
      return HONE_NOT_FOUND;
    case hone::ErrorCode::kCorrupt:
      return HONE_CORRUPT;
    case hone::ErrorCode::kOutOfMemory:
      return HONE_OUT_OF_MEMORY;
    case hone::ErrorCode::kFailedPrecondition:
      return HONE_FAILED_PRECONDITION;
    case hone::ErrorCode::kIo:
      return HONE_IO;
    case hone::ErrorCode::kInternal:
      return HONE_INTERNAL;
  }
  return HONE_INTERNAL;
}

hone_status invalid(std::string message) {
  return set_error(hone::Error(hone::ErrorCode::kInvalidArgument, std::move(message)));
}

/// Runs `body` (which returns a hone_status), turning exceptions into statuses.
template <class F>
hone_status guarded(const char* what, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return set_error(
        hone::Error(hone::ErrorCode::kOutOfMemory, std::string(what) + ": out of memory"));
  } catch (const std::exception& e) {
    return set_error(hone::Error(hone::ErrorCode::kInternal, std::string(what) + ": " + e.what()));
  } catch (...) {
    return set_error(
        hone::Error(hone::ErrorCode::kInternal, std::string(what) + ": unknown exception"));
  }
}

std::vector<std::string> split(const char* text, char sep) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == sep || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return out;
}

hone_status fill_info(const std::vector<hone_model::Info>& infos, size_t i, const char* kind,
                      hone_tensor_info* info) {
  if (info == nullptr) return invalid("info is NULL");
  if (i >= infos.size())
    return invalid(std::string(kind) + " " + std::to_string(i) + " does not exist (the model has " +
                   std::to_string(infos.size()) + ")");
  const hone_model::Info& in = infos[i];
  info->name = in.name.c_str();
  info->dtype = in.dtype;
  info->rank = in.dims.size();
  info->dims = in.dims.data();
  info->dim_names = in.dim_name_ptrs.data();
  return HONE_OK;
}

bool known_dtype(hone_dtype t) {
  return t > HONE_UNDEFINED && t <= HONE_BOOL;
}

}  // namespace

extern "C" {

const char* hone_last_error(void) {
  return g_last_error.c_str();
}

const char* hone_version(void) {
  return HONE_VERSION_STRING;
}

const char* hone_dtype_name(hone_dtype dtype) {
  if (!known_dtype(dtype)) return "?";
  return hone::dtype_name(static_cast<hone::DType>(dtype)).data();
}

size_t hone_dtype_size(hone_dtype dtype) {
  return known_dtype(dtype) ? hone::dtype_size(static_cast<hone::DType>(dtype)) : 0;
}

hone_status hone_load(const char* path, hone_model** out) {
  return guarded("hone_load", [&] {
    if (path == nullptr || out == nullptr)
      return invalid("hone_load: path and out must not be NULL");
    *out = nullptr;
    auto m = hone::load(path);
    if (!m) return set_error(m.error());
    *out = new hone_model(std::move(*m));
    return HONE_OK;
  });
}

hone_status hone_tune(const char* onnx_path, const hone_tune_options* options, hone_model** out) {
  return guarded("hone_tune", [&] {
    if (onnx_path == nullptr || out == nullptr)
      return invalid("hone_tune: onnx_path and out must not be NULL");
    *out = nullptr;
    const hone_tune_options defaults{};
    const hone_tune_options& o = options != nullptr ? *options : defaults;
    hone::TuneOptions opts;
    const std::string_view precision = o.precision != nullptr ? o.precision : "";
    if (precision == "auto" || precision == "auto,fp8") {
      opts.precision_auto = true;
      opts.precision_fp8 = precision == "auto,fp8";
    } else if (o.precision != nullptr) {
      auto p = hone::parse_precision(o.precision);
      if (!p || *p != hone::Precision::kFp32)
        return invalid("hone_tune_options.precision: 'fp32', 'auto' or 'auto,fp8', not '" +
                       std::string(o.precision) + "'");
    }
    for (const std::string& d : split(o.dims, ';')) {
      auto decl = hone::parse_dim_declaration(d);
      if (!decl) return set_error(std::move(decl).error().add_context("in hone_tune_options.dims"));
      opts.dims.push_back(*decl);
    }
    auto strategy = hone::parse_strategy(o.strategy != nullptr ? o.strategy : "max-throughput",
                                         split(o.backends, ','));
    if (!strategy)
      return set_error(std::move(strategy).error().add_context("in hone_tune_options.strategy"));
    auto graph = hone::onnx::load_model(onnx_path);
    if (!graph) return set_error(graph.error());
    const uint64_t seed = o.seed == 0 ? 1 : o.seed;
    std::vector<int64_t> batch_sizes;
    // Unbounded dims get assumed bounds (logged), as `hone tune` gives them.
    (void)hone::assume_unbounded_dims(*graph, opts.dims);
    auto samples = hone::random_samples(*graph, opts.dims, batch_sizes, seed);
    if (!samples) return set_error(samples.error());
    opts.batch_sizes = batch_sizes;
    opts.threads = o.threads;
    opts.use_cache = o.no_cache == 0;
    opts.seed = seed;
    auto tuned = hone::tune(*graph, *samples, **strategy, opts);
    if (!tuned)
      return set_error(
          std::move(tuned).error().add_context(std::string("while tuning '") + onnx_path + "'"));
    *out = new hone_model(std::move(*tuned));
    return HONE_OK;
  });
}

void hone_model_free(hone_model* model) {
  delete model;
}

size_t hone_model_input_count(const hone_model* model) {
  return model != nullptr ? model->inputs.size() : 0;
}

size_t hone_model_output_count(const hone_model* model) {
  return model != nullptr ? model->outputs.size() : 0;
}

hone_status hone_model_input_info(const hone_model* model, size_t i, hone_tensor_info* info) {
  if (model == nullptr) return invalid("model is NULL");
  return fill_info(model->inputs, i, "input", info);
}

hone_status hone_model_output_info(const hone_model* model, size_t i, hone_tensor_info* info) {
  if (model == nullptr) return invalid("model is NULL");
  return fill_info(model->outputs, i, "output", info);
}

const char* hone_model_backend(const hone_model* model) {
  return model != nullptr ? model->model.decision().backend.c_str() : "";
}

hone_status hone_model_infer(const hone_model* model, const hone_tensor* inputs, size_t n_inputs,
                             hone_tensor* outputs, size_t n_outputs) {
  return guarded("hone_model_infer", [&] {
    if (model == nullptr) return invalid("hone_model_infer: model is NULL");
    if (n_inputs != model->inputs.size())
      return invalid("hone_model_infer: the model takes " + std::to_string(model->inputs.size()) +
                     " inputs, got " + std::to_string(n_inputs));
    if (n_outputs != model->outputs.size())
      return invalid("hone_model_infer: the model gives " + std::to_string(model->outputs.size()) +
                     " outputs, got room for " + std::to_string(n_outputs));
    if ((n_inputs > 0 && inputs == nullptr) || (n_outputs > 0 && outputs == nullptr))
      return invalid("hone_model_infer: inputs and outputs must not be NULL");
    std::vector<hone::Tensor> in;
    for (size_t i = 0; i < n_inputs; ++i) {
      const hone_tensor& t = inputs[i];
      const std::string what = "input " + std::to_string(i) + " '" + model->inputs[i].name + "'";
      if (!known_dtype(t.dtype))
        return invalid(what + ": unknown dtype " + std::to_string(t.dtype));
      if (t.rank > 0 && t.dims == nullptr) return invalid(what + ": dims is NULL");
      std::vector<int64_t> shape(t.dims, t.dims + t.rank);
      size_t numel = 1;
      for (int64_t d : shape) {
        if (d < 0) return invalid(what + ": negative dim " + std::to_string(d));
        numel *= static_cast<size_t>(d);
      }
      const size_t need = numel * hone_dtype_size(t.dtype);
      if (need != t.nbytes)
        return invalid(what + ": its shape needs " + std::to_string(need) + " bytes, nbytes is " +
                       std::to_string(t.nbytes));
      if (need > 0 && t.data == nullptr) return invalid(what + ": data is NULL");
      // The library reads inputs only; borrowing avoids a copy.
      in.push_back(
          hone::Tensor::borrow(static_cast<hone::DType>(t.dtype), std::move(shape), t.data));
    }
    auto out = model->model.infer_flat(in);
    if (!out) return set_error(out.error());
    // Check every buffer before writing any, so a failure writes nothing.
    for (size_t i = 0; i < n_outputs; ++i) {
      const hone::Tensor& r = (*out)[i];
      const hone_tensor& t = outputs[i];
      const std::string what = "output " + std::to_string(i) + " '" + model->outputs[i].name + "'";
      if (t.rank < r.rank() || (r.rank() > 0 && t.dims == nullptr))
        return invalid(what + " has rank " + std::to_string(r.rank()) + "; dims has room for " +
                       std::to_string(t.rank));
      if (t.nbytes < r.nbytes() || (r.nbytes() > 0 && t.data == nullptr))
        return invalid(what + " is " + r.describe() + ", " + std::to_string(r.nbytes()) +
                       " bytes; the buffer holds " + std::to_string(t.nbytes));
    }
    for (size_t i = 0; i < n_outputs; ++i) {
      const hone::Tensor& r = (*out)[i];
      hone_tensor& t = outputs[i];
      t.dtype = static_cast<hone_dtype>(r.dtype());
      t.rank = r.rank();
      for (size_t a = 0; a < r.rank(); ++a) t.dims[a] = r.dim(a);
      if (r.nbytes() > 0) std::memcpy(t.data, r.raw(), r.nbytes());
    }
    return HONE_OK;
  });
}

hone_status hone_model_infer_device(const hone_model* model, const hone_tensor* inputs,
                                    size_t n_inputs, const hone_tensor* outputs, size_t n_outputs,
                                    int device, void* stream) {
  return guarded("hone_model_infer_device", [&] {
    const std::string fn = "hone_model_infer_device: ";
    if (model == nullptr) return invalid(fn + "model is NULL");
    if (n_inputs != model->inputs.size())
      return invalid(fn + "the model takes " + std::to_string(model->inputs.size()) +
                     " inputs, got " + std::to_string(n_inputs));
    if (n_outputs != model->outputs.size())
      return invalid(fn + "the model gives " + std::to_string(model->outputs.size()) +
                     " outputs, got " + std::to_string(n_outputs));
    if ((n_inputs > 0 && inputs == nullptr) || (n_outputs > 0 && outputs == nullptr))
      return invalid(fn + "inputs and outputs must not be NULL");
    // Each tensor as a device view: dtype known, dims given, nbytes its size.
    auto view = [&](const hone_tensor& t, const std::string& what,
                    hone::DeviceTensor& v) -> std::optional<hone_status> {
      if (!known_dtype(t.dtype))
        return invalid(what + ": unknown dtype " + std::to_string(t.dtype));
      if (t.rank > 0 && t.dims == nullptr) return invalid(what + ": dims is NULL");
      v = hone::DeviceTensor{t.data, static_cast<hone::DType>(t.dtype),
                             std::vector<int64_t>(t.dims, t.dims + t.rank), device, nullptr};
      for (int64_t d : v.shape)
        if (d < 0) return invalid(what + ": negative dim " + std::to_string(d));
      if (v.nbytes() != t.nbytes)
        return invalid(what + ": its shape needs " + std::to_string(v.nbytes()) +
                       " bytes, nbytes is " + std::to_string(t.nbytes));
      return std::nullopt;
    };
    std::vector<hone::DeviceTensor> in(n_inputs);
    hone::DeviceCall call;
    call.stream = stream;
    call.outputs.resize(n_outputs);
    for (size_t i = 0; i < n_inputs; ++i)
      if (auto bad = view(inputs[i],
                          "input " + std::to_string(i) + " '" + model->inputs[i].name + "'", in[i]))
        return *bad;
    for (size_t i = 0; i < n_outputs; ++i)
      if (auto bad =
              view(outputs[i], "output " + std::to_string(i) + " '" + model->outputs[i].name + "'",
                   call.outputs[i]))
        return *bad;
    auto out = model->model.infer_on_device(in, call);
    return out ? HONE_OK : set_error(out.error());
  });
}

hone_status hone_model_save(const hone_model* model, const char* path) {
  return guarded("hone_model_save", [&] {
    if (model == nullptr || path == nullptr)
      return invalid("hone_model_save: model and path must not be NULL");
    auto s = hone::save(model->model, path);
    return s ? HONE_OK : set_error(s.error());
  });
}

hone_status hone_model_export(const hone_model* model, const char* dir, const char* format) {
  return guarded("hone_model_export", [&] {
    if (model == nullptr || dir == nullptr)
      return invalid("hone_model_export: model and dir must not be NULL");
    if (format != nullptr && std::strcmp(format, "triton") == 0) {
      auto r = hone::export_triton(model->model, dir);
      return r ? HONE_OK : set_error(r.error());
    }
    hone::ExportOptions eo;
    if (format != nullptr) eo.format = format;
    auto r = hone::export_artifact(model->model, dir, eo);
    return r ? HONE_OK : set_error(r.error());
  });
}

}  // extern "C"
