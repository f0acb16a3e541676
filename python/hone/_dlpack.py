"""Tensors in and out without copies: anything with __dlpack__ (numpy arrays,
PyTorch CPU and CUDA tensors, CuPy arrays, ...) goes into a Model, and the
outputs come back as the kind the caller gave.

A CPU tensor is viewed as a numpy array through DLPack (numpy.from_dlpack: the
same memory, no copy); the extension borrows a C-contiguous array in place
(python/convert.cpp, to_tensor), so a contiguous torch.Tensor of the model's
dtype is read where it lies. Outputs are numpy arrays over hone-owned memory,
kept alive by their capsule; torch.from_dlpack (torch.from_numpy where DLPack
cannot carry the array, e.g. a read-only one) wraps them without a copy.

A CUDA tensor (DLPack device type kDLCUDA, 2) goes through the device path
(python/device.cpp) when the model's backend runs on a GPU (Model.device ==
'cuda'): its DLPack capsule is read in place, with no copy to the host, on the
caller's current stream (torch.cuda.current_stream().cuda_stream, CuPy's
current stream; passed to __dlpack__(stream=...) too, so the producer orders
its work before hone's), and the outputs come back as CUDA tensors of the kind
given (torch.from_dlpack / cupy.from_dlpack over hone's device memory, freed
by hone's deleter when dropped; a hone.DeviceArray for other producers).
Inputs must be row-major and dense (x.contiguous() otherwise: hone copies
none). out= with CUDA tensors writes into them in place. Every input of one
call is on the same side: all CUDA or all host. A CUDA tensor given to a
model whose backend runs on the host is a TypeError naming the backend (move
it with .cpu()), as is one given to a JitModel or to Model.infer (its tree of
inputs is read on the host): hone never copies a device tensor behind the
caller's back. Whether the backend itself staged through host memory (a
graph with nodes on the reference) is in Model.transfers().
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

# DLDeviceType values from the DLPack spec (dlpack.h, DLDeviceType).
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 9: "vpi", 10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}
_CPU = 1
_CUDA = 2


def _torch():
    try:
        import torch  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return torch


def _device(x: Any) -> tuple[int, int]:
    """x's DLPack device (type, ordinal); (1, 0) for host values."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return _CPU, 0
    if not hasattr(x, "__dlpack_device__"):
        return _CPU, 0
    device = x.__dlpack_device__()
    return int(device[0]), int(device[1])


def _describe(x: Any) -> str:
    kind, ordinal = _device(x)
    name = _DEVICE_NAMES.get(kind, f"device type {kind}")
    return f"a {type(x).__module__}.{type(x).__name__} on {name}:{ordinal}"


def is_cuda(x: Any) -> bool:
    """Whether x is a tensor in CUDA device memory (DLPack kDLCUDA)."""
    return _device(x)[0] == _CUDA


def to_numpy(x: Any, what: str) -> tuple[Any, Optional[Callable[[np.ndarray], Any]]]:
    """(an array hone can read, a function turning an output back into x's kind).
    numpy arrays and plain Python values pass through unchanged."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return x, None
    device = _device(x)
    if device[0] != _CPU:
        hint = (" (a CUDA tensor goes in without a copy to a Model whose backend runs on the GPU: "
                "call the model itself, model(x))" if device[0] == _CUDA else "")
        raise TypeError(f"{what} is {_describe(x)}; this path reads host memory: move it with "
                        f".cpu(){hint}")
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


def _stream_of(x: Any, ordinal: int) -> int:
    """The caller's current CUDA stream for x's producer, as a pointer (0: the
    legacy default stream): PyTorch's or CuPy's current stream, else 0."""
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return int(torch.cuda.current_stream(ordinal).cuda_stream)
    module = type(x).__module__.split(".")[0]
    if module == "cupy":
        import cupy  # noqa: PLC0415 (the producer's own library, present when x is one)
        return int(cupy.cuda.get_current_stream().ptr)
    return 0


def _capsule(x: Any, stream: int, what: str) -> Any:
    """x's DLPack capsule, its producer asked to order its work before `stream`
    (DLPack's stream argument: 1 names the legacy default stream)."""
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor) and x.requires_grad:
        x = x.detach()  # same memory; DLPack refuses tensors that require grad
    try:
        return x.__dlpack__(stream=stream if stream != 0 else 1)
    except TypeError:  # a producer without the stream argument
        return x.__dlpack__()
    except (BufferError, RuntimeError) as e:
        raise TypeError(f"{what} ({_describe(x)}) cannot be exported through DLPack: {e}") from e


def _from_device(a: Any, like: Any) -> Any:
    """A hone.DeviceArray as the kind of `like` (torch or CuPy), no copy."""
    torch = _torch()
    if torch is not None and isinstance(like, torch.Tensor):
        return torch.from_dlpack(a)
    if type(like).__module__.split(".")[0] == "cupy":
        import cupy  # noqa: PLC0415
        return cupy.from_dlpack(a)
    return a


def call_device(model: Any, args: tuple, kwargs: dict, out: Any) -> Any:
    """Model.__call__ on CUDA tensors: no host copy (see the module docstring)."""
    names = [i["name"] for i in model.inputs] if hasattr(model, "inputs") else []
    given = list(args)
    if kwargs:
        if len(names) < len(args) + len(kwargs):
            raise TypeError(f"the model takes {len(names)} input(s), got {len(args) + len(kwargs)}")
        given += [None] * (len(names) - len(given))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"the model has no input named '{k}' (inputs: {', '.join(names)})")
            given[names.index(k)] = v
    labels = [f"input '{names[i]}'" if i < len(names) else f"input {i}" for i in range(len(given))]
    for x, what in zip(given, labels):
        if x is None:
            raise TypeError(f"{what} is missing")
    first = next(x for x in given if is_cuda(x))
    for x, what in zip(given, labels):
        if not is_cuda(x):
            raise TypeError(f"{what} is {_describe(x)} while another input is {_describe(first)}: "
                            "give every input on the GPU, or every input on the host")
    what = f"{labels[given.index(first)]} is {_describe(first)}"
    if not hasattr(model, "_infer_device"):
        raise TypeError(f"{what}; a {type(model).__name__} reads host memory: move the tensor "
                        "with .cpu(), or tune first and call the tuned hone.Model")
    if model.device != "cuda":
        raise TypeError(f"{what}; this model runs on backend '{model.backend}', which reads host "
                        "memory: move the tensor with .cpu(), or tune for a GPU backend "
                        "(backends=['cuda'])")
    ordinal = _device(first)[1]
    stream = _stream_of(first, ordinal)
    capsules = [_capsule(x, stream, what) for x, what in zip(given, labels)]
    targets = None
    if out is not None:
        targets = list(out) if isinstance(out, (list, tuple)) else [out]
        for i, t in enumerate(targets):
            if not is_cuda(t):
                raise TypeError(f"out[{i}] is {_describe(t)}; the inputs are on the GPU, so out= "
                                "takes CUDA tensors")
        targets = [_capsule(t, stream, f"out[{i}]") for i, t in enumerate(targets)]
    arrays = model._infer_device(capsules, stream, targets)
    if out is not None:
        return out
    results = [_from_device(a, first) for a in arrays]
    return results[0] if len(results) == 1 else tuple(results)


def install(model_type: type) -> None:
    """Wraps model_type.__call__ and .infer so they take and give DLPack tensors."""
    call = model_type.__call__
    infer = model_type.infer

    def __call__(self, *args, out=None, **kwargs):
        if any(is_cuda(a) for a in args) or any(is_cuda(a) for a in kwargs.values()):
            return call_device(self, args, kwargs, out)
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
        "or a sequence, in output order) receives the outputs instead and is returned." + (
            " CUDA tensors (torch, CuPy, any DLPack kDLCUDA producer; contiguous) go in and out "
            "with no host copy where the backend runs on the GPU (Model.device == 'cuda'), on "
            "the caller's current stream, and come back as CUDA tensors of the kind given (out= "
            "takes CUDA tensors then); on a host backend they are a TypeError naming the "
            "backend." if hasattr(model_type, "_infer_device") else
            " CUDA tensors are a TypeError: calls are read on the host."))
    infer_.__doc__ = "infer(self, sample) -> object\n\n" + _body(infer.__doc__) + (
        " Host tensors with __dlpack__ are accepted as in __call__, and come back as the kind "
        "given" + ("; CUDA tensors go through __call__ (model(x)), not infer()."
                   if hasattr(model_type, "_infer_device") else "."))
    model_type.__call__ = __call__
    model_type.infer = infer_


def _body(doc: str) -> str:
    """A pybind11 docstring without its signature line."""
    return doc.partition("\n")[2].strip()
