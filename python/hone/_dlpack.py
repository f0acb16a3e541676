"""Tensors in and out without copies: anything with __dlpack__ (numpy arrays,
PyTorch CPU tensors, ...) goes into a Model, and the outputs come back as the
kind the caller gave.

A CPU tensor is viewed as a numpy array through DLPack (numpy.from_dlpack: the
same memory, no copy); the extension borrows a C-contiguous array in place
(python/convert.cpp, to_tensor), so a contiguous torch.Tensor of the model's
dtype is read where it lies. Outputs are numpy arrays over hone-owned memory,
kept alive by their capsule; torch.from_dlpack (torch.from_numpy where DLPack
cannot carry the array, e.g. a read-only one) wraps them without a copy.

Devices other than the CPU are refused with their name: this build's Python
path reads host memory only.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

# DLDeviceType values from the DLPack spec (dlpack.h, DLDeviceType).
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 9: "vpi", 10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}
_CPU = 1


def _torch():
    try:
        import torch  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return torch


def to_numpy(x: Any, what: str) -> tuple[Any, Optional[Callable[[np.ndarray], Any]]]:
    """(an array hone can read, a function turning an output back into x's kind).
    numpy arrays and plain Python values pass through unchanged."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return x, None
    device = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (_CPU, 0)
    if int(device[0]) != _CPU:
        name = _DEVICE_NAMES.get(int(device[0]), f"device type {int(device[0])}")
        raise TypeError(f"{what} is a {type(x).__module__}.{type(x).__name__} on {name}:{device[1]}; "
                        "this build of hone's Python module reads CPU tensors only: move it with .cpu()")
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        if x.requires_grad:
            x = x.detach()  # same memory; DLPack refuses tensors that require grad
        # Tensor.numpy() is the same memory, writable (numpy.from_dlpack marks
        # its arrays read-only, which out= cannot use).
        return x.numpy(), _to_torch
    return np.from_dlpack(x), None


def _to_torch(a: np.ndarray) -> Any:
    torch = _torch()
    if a.flags.writeable:
        try:
            return torch.from_dlpack(a)
        except (BufferError, RuntimeError, TypeError):
            pass
    return torch.from_numpy(a) if a.flags.writeable else torch.from_numpy(a.copy())


def map_outputs(out: Any, back: Optional[Callable[[np.ndarray], Any]]) -> Any:
    """out with each array turned back into the caller's kind, its structure kept."""
    if back is None:
        return out
    if isinstance(out, np.ndarray):
        return back(out)
    if isinstance(out, dict):
        return {k: map_outputs(v, back) for k, v in out.items()}
    if isinstance(out, (list, tuple)):
        return type(out)(map_outputs(v, back) for v in out)
    return out


def write_out(result: Any, out: Any) -> Any:
    """Copies the output arrays into the caller's tensors `out` (one tensor, or
    a sequence in output order); checks shape and dtype; returns `out`."""
    results = result if isinstance(result, tuple) else (result,)
    targets = out if isinstance(out, (list, tuple)) else (out,)
    if len(targets) != len(results):
        raise TypeError(f"out= has {len(targets)} tensor(s); the model has {len(results)} output(s)")
    for i, (r, t) in enumerate(zip(results, targets)):
        view, _ = to_numpy(t, f"out[{i}]")
        if not isinstance(view, np.ndarray):
            raise TypeError(f"out[{i}] is a {type(t).__name__}: give an array or tensor with __dlpack__")
        if view.shape != r.shape or view.dtype != r.dtype:
            raise TypeError(f"out[{i}] is {view.dtype}{list(view.shape)}; output {i} is "
                            f"{r.dtype}{list(r.shape)}")
        if not view.flags.writeable:
            raise TypeError(f"out[{i}] is read-only (numpy.from_dlpack gives read-only arrays: "
                            "pass a numpy array or a torch.Tensor)")
        np.copyto(view, r)
    return out


def install(model_type: type) -> None:
    """Wraps model_type.__call__ and .infer so they take and give DLPack tensors."""
    call = model_type.__call__
    infer = model_type.infer

    def __call__(self, *args, out=None, **kwargs):
        backs = []
        a2 = []
        for i, a in enumerate(args):
            v, b = to_numpy(a, f"input {i}")
            a2.append(v)
            backs.append(b)
        k2 = {}
        for k, a in kwargs.items():
            v, b = to_numpy(a, f"input '{k}'")
            k2[k] = v
            backs.append(b)
        result = call(self, *a2, **k2)
        if out is not None:
            return write_out(result, out)
        back = next((b for b in backs if b is not None), None)
        return map_outputs(result, back)

    def infer_(self, sample):
        back = [None]

        def walk(x, path):
            if isinstance(x, dict):
                return {k: walk(v, f"{path}.{k}" if path else str(k)) for k, v in x.items()}
            if isinstance(x, (list, tuple)):
                return type(x)(walk(v, f"{path}[{i}]") for i, v in enumerate(x))
            v, b = to_numpy(x, f"input '{path}'")
            back[0] = back[0] or b
            return v

        return map_outputs(infer(self, walk(sample, "")), back[0])

    # The first line keeps pybind11's form ('name(params) -> type'), which the
    # stub test (tests/python/test_stubs.py) reads the parameters from.
    __call__.__doc__ = "__call__(self, *args, out=None, **kwargs) -> object\n\n" + _body(call.__doc__) + (
        " Any tensor with __dlpack__ is accepted (numpy arrays, PyTorch CPU tensors): a "
        "C-contiguous tensor of the model's dtype is read in place, and the outputs come back "
        "as the kind given (torch in, torch out, over hone's memory: no copy). out= (a tensor "
        "or a sequence, in output order) receives the outputs instead and is returned.")
    infer_.__doc__ = "infer(self, sample) -> object\n\n" + _body(infer.__doc__) + (
        " Tensors with __dlpack__ are accepted as in __call__, and come back as the kind given.")
    model_type.__call__ = __call__
    model_type.infer = infer_


def _body(doc: str) -> str:
    """A pybind11 docstring without its signature line."""
    return doc.partition("\n")[2].strip()
