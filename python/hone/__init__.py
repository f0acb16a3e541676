"""hone: tune an ONNX model for this machine (try every backend, check,
measure, keep the best), save it, load it, run it on numpy arrays.

    import hone, numpy as np
    m = hone.tune("mlp.onnx", [{"x": np.random.rand(b, 16).astype(np.float32)} for b in (1, 8)])
    m.save("mlp.hone"); y = hone.load("mlp.hone")(np.ones((2, 16), np.float32))

The compiled part is hone._hone (pybind11); this package re-exports it, and
`python3 -m hone ARGS` runs the `hone` command bundled with it. Type stubs:
_hone.pyi.
"""
from ._hone import Error, Model, __version__, backends, inspect, load, tune

__all__ = ["Error", "Model", "__version__", "backends", "inspect", "load", "tune"]

# Users meet these as hone.Model and hone.Error (repr, help(), type checkers).
Model.__module__ = __name__

from . import _dlpack  # noqa: E402

# numpy, PyTorch CPU tensors and anything with __dlpack__ in, the same kind out.
_dlpack.install(Model)
