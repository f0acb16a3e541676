// hone.export, hone.generate_key, hone.sign and hone.verify: deployable
// artifacts (hone/export.h) and signed packages (hone/signing.h) from Python.
//
//   hone.export(model, "deploy/", format="onnx")   # a hone.Model or a .hone path
//   hone.generate_key("me.key"); hone.sign("m.hone", "me.key")
//   hone.verify("m.hone", trusted_keys=["me.key.pub"])["trusted"]
#include "bindings.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "args.h"
#include "hone/package.h"
#include "hone/signing.h"
#include "hooks.h"
#include "model.h"

namespace hone::python {

namespace {

std::vector<std::filesystem::path> key_paths(py::handle list) {
  std::vector<std::filesystem::path> out;
  for (const std::string& s : string_list(list, "trusted_keys")) out.emplace_back(s);
  return out;
}

py::dict export_any(py::handle model, const std::string& dir, const std::string& format,
                    const std::string& backend, const std::string& name) {
  if (py::isinstance<Model>(model))
    return export_model(model.cast<const Model&>(), dir, format, backend, name);
  if (py::hasattr(model, "model") && py::isinstance<Model>(model.attr("model")))
    return export_model(model.attr("model").cast<const Model&>(), dir, format, backend, name);
  const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
  auto loaded = without_gil([&] { return load(path, LoadOptions{}); });
  const Model m{std::make_shared<const TunedModel>(unwrap(std::move(loaded)))};
  return export_model(m, dir, format, backend, name);
}

py::dict verify_package(const std::string& package, py::handle trusted_keys) {
  const auto keys = trusted_key_files(key_paths(trusted_keys));
  auto r = without_gil([&] { return check_package_signature(package, keys); });
  const SignatureStatus s = unwrap(std::move(r));
  py::dict d;
  d["signed"] = s.is_signed;
  d["trusted"] = s.trusted;
  d["key_id"] = s.key_id;
  d["trusted_by"] = s.trusted_by;
  return d;
}

}  // namespace

void bind_package(py::module_& m) {
  m.def("export", &export_any, py::arg("model"), py::arg("dir"), py::arg("format") = "",
        py::arg("backend") = "", py::arg("name") = "",
        "Writes a deployable artifact that runs without hone, as Model.export does, for a "
        "hone.Model (or hone.Module) or a .hone package's path: format 'onnx', 'native-so' "
        "(with backend='aot') or 'triton' (a model folder named `name` in the Triton "
        "repository `dir`); empty: the chosen backend's format. dir is written atomically and "
        "must not hold files. Returns what was written (format, path, files with SHA-256).");
  m.def(
      "generate_key",
      [](const std::string& path) {
        return unwrap(without_gil([&] { return generate_signing_key(path); }));
      },
      py::arg("path"),
      "Writes a new Ed25519 private key to path (PEM, mode 0600; it must not exist) and its "
      "public key to path + '.pub'. Returns the key id.");
  m.def(
      "sign",
      [](const std::string& package, const std::string& key) {
        return unwrap(without_gil([&] { return sign_package(package, key); }));
      },
      py::arg("package"), py::arg("key"),
      "Signs a .hone package in place (atomically, after verifying it whole) with the "
      "private key file `key`. Returns the key id.");
  m.def("verify", &verify_package, py::arg("package"), py::arg("trusted_keys") = py::none(),
        "Verifies a .hone package whole and its signature: {'signed', 'trusted', 'key_id', "
        "'trusted_by'}; trusted when a key of trusted_keys (public-key files) or of the keys "
        "folder ($HONE_TRUSTED_KEYS, else ~/.config/hone/trusted-keys/) signed it. Raises "
        "hone.Error when the package or its signature does not verify (altered after "
        "signing).");
}

}  // namespace hone::python
