"""hone: tune a model for this machine (try every backend, check, measure,
keep the best), save it, load it, run it on numpy arrays or PyTorch tensors.

    import hone, numpy as np
    m = hone.tune("mlp.onnx", [{"x": np.random.rand(b, 16).astype(np.float32)} for b in (1, 8)])
    m.save("mlp.hone"); y = hone.load("mlp.hone")(np.ones((2, 16), np.float32))

    m = hone.tune(torch_module, [torch.rand(1, 3, 224, 224), torch.rand(2, 3, 224, 224)])

The compiled part is hone._hone (pybind11); this package re-exports it, and
`python3 -m hone ARGS` runs the `hone` command bundled with it. Type stubs:
_hone.pyi.
"""
from . import _hone
from ._hone import Error, Model, __version__, backends, inspect

__all__ = ["Error", "Model", "Module", "__version__", "backends", "inspect", "load", "tune"]

# Users meet these as hone.Model and hone.Error (repr, help(), type checkers).
Model.__module__ = __name__

from . import _dlpack, _torch  # noqa: E402
from ._torch import Module  # noqa: E402

# numpy, PyTorch CPU tensors and anything with __dlpack__ in, the same kind out.
_dlpack.install(Model)
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
    threads, cache, ...) are hone._hone.tune's. Raises hone.Error."""
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
