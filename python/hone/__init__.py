"""hone: tune a model for this machine (try every backend, check, measure,
keep the best), save it, load it, run it on numpy arrays or PyTorch tensors.

    import hone, numpy as np
    m = hone.tune("mlp.onnx", [{"x": np.random.rand(b, 16).astype(np.float32)} for b in (1, 8)])
    m.save("mlp.hone"); y = hone.load("mlp.hone")(np.ones((2, 16), np.float32))

    m = hone.tune(torch_module, [torch.rand(1, 3, 224, 224), torch.rand(2, 3, 224, 224)])

Also: hone.jit (tuning just in time from the calls made, and their inspection
report), hone.Pipeline (several models in a row), hone.export, hone.sign and
hone.verify (artifacts and signed packages). hone logs to Python's logging, to
the logger "hone" (HONE_LOG=debug sets its level and gives it a stderr
handler); hone.tune(progress=f) reports each step; Ctrl-C cancels a tune.

The compiled part is hone._hone (pybind11); this package re-exports it, and
`python3 -m hone ARGS` runs the `hone` command bundled with it. Type stubs:
_hone.pyi.
"""
import logging as _logging
import os as _os

from . import _hone
from ._hone import (DeviceArray, Error, JitModel, Model, Pipeline, __version__, backends, export,
                    generate_key, inspect, jit, sign, verify)

__all__ = ["DeviceArray", "Error", "JitModel", "Model", "Module", "Pipeline", "__version__",
           "backends", "export", "generate_key", "inspect", "jit", "load", "sign", "tune", "verify"]

# Users meet these as hone.Model, hone.JitModel, ... (repr, help(), type checkers).
for _cls in (DeviceArray, Model, JitModel, Pipeline):
    _cls.__module__ = __name__


def _log_from_env():
    """HONE_LOG=debug|info|warn|error|off, as for the CLI: the level of the
    logger "hone", with a stderr handler when it has none."""
    level = _os.environ.get("HONE_LOG", "").strip().lower()
    levels = {"trace": 5, "debug": _logging.DEBUG, "info": _logging.INFO, "warn": _logging.WARNING,
              "warning": _logging.WARNING, "error": _logging.ERROR, "off": _logging.CRITICAL + 10}
    if level not in levels:
        return
    log = _logging.getLogger("hone")
    log.setLevel(levels[level])
    if not log.handlers:
        handler = _logging.StreamHandler()
        handler.setFormatter(_logging.Formatter("[%(asctime)s] [%(levelname)s] hone: %(message)s"))
        log.addHandler(handler)


_log_from_env()

from . import _dlpack, _torch  # noqa: E402
from ._torch import Module  # noqa: E402

# numpy, PyTorch CPU and CUDA tensors and anything with __dlpack__ in, the same kind out.
_dlpack.install(Model)
_dlpack.install(JitModel)
Module.__module__ = __name__


def tune(model, samples=None, **kwargs):
    """Tunes a model: an ONNX model (a path or its bytes) or a torch.nn.Module.

    For ONNX, see hone._hone.tune (samples: dicts of arrays or tensors at two or
    more batch sizes; None: random). For a torch.nn.Module, samples are its
    positional arguments (a tensor, or a tuple of tensors and nests of tuples,
    lists and dicts of tensors); it is exported through torch.onnx (dims that
    differ between samples become dynamic), tuned, and returned as hone.Module,
    called like the module; opset= and exporter= ('auto': dynamo where torch
    >= 2.5 has it, else TorchScript; 'dynamo'; 'torchscript') steer the export.
    Other keyword arguments (strategy, backends, dims,
    threads, cache, progress, ...) are hone._hone.tune's: progress=f calls f
    with a dict per step, and Ctrl-C (or an exception from f) cancels the tune
    and is raised. Raises hone.Error."""
    if _torch.is_module(model):
        onnx, extra = _torch.export(model, list(samples or []), kwargs.pop("opset", None),
                                    kwargs.pop("exporter", "auto"))
        m = _hone.tune(onnx, extra["samples"], **kwargs)
        return Module(m, extra["structure"])
    if samples is not None:
        samples = [_numpy_sample(s) for s in samples]
    return _hone.tune(model, samples, **kwargs)


def load(path, allow_env_mismatch=False, threads=-1):
    """Loads a .hone package (verified, not tuned again): a hone.Module where
    path.pytree.json records a tuned torch.nn.Module's structure, else a
    hone.Model. Raises hone.Error."""
    m = _hone.load(path, allow_env_mismatch=allow_env_mismatch, threads=threads)
    structure = _torch.load_structure(path)
    return Module(m, structure) if structure is not None else m


def _numpy_sample(s):
    if isinstance(s, dict):
        return {k: _dlpack.to_numpy(v, f"sample input '{k}'")[0] for k, v in s.items()}
    if isinstance(s, (tuple, list)):
        return type(s)(_dlpack.to_numpy(v, "sample input")[0] for v in s)
    return _dlpack.to_numpy(s, "sample input")[0]
