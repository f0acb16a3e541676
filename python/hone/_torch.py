"""Tune a torch.nn.Module: export it through torch.onnx, tune the ONNX model,
and hand back hone.Module, called like the original.

    net = torchvision.models.resnet18().eval()
    m = hone.tune(net, [torch.rand(1, 3, 224, 224), torch.rand(2, 3, 224, 224)])
    m.save("r18.hone"); y = hone.load("r18.hone")(torch.rand(1, 3, 224, 224))

A sample is the module's positional arguments: one tensor, or a tuple of
arguments, each a tensor or a nest of tuples, lists and dicts of tensors. The
module is exported through a wrapper taking the flattened tensors (in_0,
in_1, ... in a recorded order) and giving its flattened outputs (out_0, ...),
so nested inputs and outputs keep their structure on the way back. A dim that
differs between samples becomes a dynamic axis, shared by name where its sizes
match across inputs (the batch axis, say), as AITune infers its GraphSpec.

The structure is saved next to the package as PATH.pytree.json; hone.load
returns a hone.Module when it finds one.
"""
from __future__ import annotations

import io
import json
import os
from typing import Any, Optional

import numpy as np

from . import _hone

# Exported with this opset through the TorchScript exporter (torch < 2.5 has
# no dynamo=True; hone reads opsets 1-26).
TORCHSCRIPT_OPSET = 17
SPEC_SUFFIX = ".pytree.json"


def torch_module():
    try:
        import torch  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return torch


def is_module(obj: Any) -> bool:
    torch = torch_module()
    return torch is not None and isinstance(obj, torch.nn.Module)


# -- trees: nested tuples, lists and dicts of tensors, as JSON-able specs --

def flatten(tree: Any, torch) -> tuple[list, Any]:
    """(the tensors in order, the spec that rebuilds tree from them)."""
    leaves: list = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            leaves.append(x)
            return {"t": "tensor"}
        if isinstance(x, np.ndarray):
            leaves.append(torch.from_numpy(x))
            return {"t": "tensor"}
        if isinstance(x, (tuple, list)):
            return {"t": type(x).__name__, "c": [walk(v) for v in x]}
        if isinstance(x, dict):
            if not all(isinstance(k, str) for k in x):
                raise TypeError("hone.tune: dict keys in a sample must be strings")
            return {"t": "dict", "k": list(x), "c": [walk(v) for v in x.values()]}
        if x is None or isinstance(x, (bool, int, float, str)):
            return {"t": "const", "v": x}
        raise TypeError(f"hone.tune: a {type(x).__name__} in a sample or output; hone takes "
                        "tensors in tuples, lists and dicts (and constants: None, bool, int, float, str)")

    return leaves, walk(tree)


def unflatten(spec: Any, leaves: list) -> Any:
    it = iter(leaves)

    def build(s):
        t = s["t"]
        if t == "tensor":
            return next(it)
        if t == "const":
            return s["v"]
        children = [build(c) for c in s["c"]]
        if t == "dict":
            return dict(zip(s["k"], children))
        return tuple(children) if t == "tuple" else children

    return build(spec)


def same_structure(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# -- dynamic axes --

def infer_dynamic_axes(shapes_per_sample: list[list[tuple]], prefix: str) -> dict[int, dict[int, str]]:
    """{leaf: {axis: name}} for the dims that differ between samples. Dims with
    the same sizes in every sample share a name: 'batch' for axis 0, else
    dim_<sizes>."""
    names: dict[tuple, str] = {}
    out: dict[int, dict[int, str]] = {}
    first = shapes_per_sample[0]
    for leaf, shape in enumerate(first):
        for axis in range(len(shape)):
            sizes = tuple(s[leaf][axis] for s in shapes_per_sample)
            if len(set(sizes)) == 1:
                continue
            if sizes not in names:
                names[sizes] = "batch" if axis == 0 and "batch" not in names.values() else \
                    f"{prefix}{len(names)}"
            out.setdefault(leaf, {})[axis] = names[sizes]
    return out


# -- export --

def export(module, samples: list, opset: Optional[int] = None,
           exporter: str = "auto") -> tuple[bytes, dict]:
    """The module as ONNX bytes and its structure: {'in': spec, 'out': spec,
    'inputs': names, 'outputs': names, 'exporter': ...}."""
    torch = torch_module()
    if not samples:
        raise ValueError("hone.tune(module, samples): a torch.nn.Module needs samples (its positional "
                         "arguments: a tensor or a tuple), at two or more batch sizes for a dynamic batch")
    args_list = [s if isinstance(s, tuple) else (s,) for s in samples]
    flat_in, in_spec = [], None
    for i, args in enumerate(args_list):
        leaves, spec = flatten(args, torch)
        if in_spec is not None and not same_structure(spec, in_spec):
            raise TypeError(f"hone.tune: sample {i} has another structure than sample 0")
        in_spec = spec
        flat_in.append(leaves)
    was_training = module.training
    module.eval()
    flat_out, out_spec = [], None
    with torch.no_grad():
        for i, args in enumerate(args_list):
            leaves, spec = flatten(module(*args), torch)
            if out_spec is not None and not same_structure(spec, out_spec):
                raise TypeError(f"hone.tune: the module's output for sample {i} has another "
                                "structure than for sample 0")
            out_spec = spec
            flat_out.append(leaves)
    if not flat_out[0]:
        raise TypeError("hone.tune: the module returns no tensor")
    in_names = [f"in_{i}" for i in range(len(flat_in[0]))]
    out_names = [f"out_{i}" for i in range(len(flat_out[0]))]
    in_axes = infer_dynamic_axes([[tuple(t.shape) for t in s] for s in flat_in], "dim_")
    # Output dims take the input's name where their sizes match one.
    sizes_to_name = {}
    for leaf, axes in in_axes.items():
        for axis, name in axes.items():
            sizes_to_name[tuple(s[leaf].shape[axis] for s in flat_in)] = name
    out_axes = {}
    for leaf in range(len(out_names)):
        for axis in range(flat_out[0][leaf].dim()):
            sizes = tuple(s[leaf].shape[axis] for s in flat_out)
            if len(set(sizes)) > 1:
                out_axes.setdefault(leaf, {})[axis] = sizes_to_name.get(sizes, f"out{leaf}_d{axis}")

    class Flat(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *tensors):
            leaves, _ = flatten(self.inner(*unflatten(in_spec, list(tensors))), torch)
            return tuple(leaves)

    dynamic_axes = {in_names[k]: v for k, v in in_axes.items()}
    dynamic_axes.update({out_names[k]: v for k, v in out_axes.items()})
    # The largest sample traces the graph (dims of 1 can be specialised away).
    trace = max(range(len(flat_in)), key=lambda i: sum(t.numel() for t in flat_in[i]))
    onnx, exporter = _run_export(torch, Flat(module), tuple(flat_in[trace]), in_names, out_names,
                                 dynamic_axes, opset, exporter, type(module).__name__, module, was_training)
    kept = [i["name"] for i in _hone.inspect(onnx)["inputs"]]
    lost = [n for n in in_names if n not in kept]
    if lost:
        raise _hone.Error(f"hone.tune: the ONNX export of {type(module).__name__} does not read input(s) "
                          f"{', '.join(lost)} (flattened argument order): the output does not depend on "
                          "them through traced torch ops (a .numpy(), .item() or Python-side value turns "
                          "them into constants)", "unsupported", "", [f"while exporting {type(module).__name__} to ONNX"])
    structure = {"in": in_spec, "out": out_spec, "inputs": in_names, "outputs": out_names,
                 "exporter": exporter, "dynamic_axes": dynamic_axes}
    samples_np = [{n: t.detach().cpu().numpy() for n, t in zip(in_names, s)} for s in flat_in]
    return onnx, {"structure": structure, "samples": samples_np}


def has_dynamo(torch) -> bool:
    """torch >= 2.5 has torch.onnx.export(..., dynamo=True); it needs onnxscript."""
    try:
        major, minor = (int(p) for p in torch.__version__.split(".")[:2])
        import onnxscript  # noqa: F401, PLC0415
    except (ImportError, ValueError):
        return False
    return (major, minor) >= (2, 5)


def _run_export(torch, flat, args, in_names, out_names, dynamic_axes, opset, exporter, name, module,
                was_training) -> tuple[bytes, str]:
    """(ONNX bytes, which exporter made them). exporter: 'auto' (dynamo where
    torch has it, else TorchScript; a dynamo failure falls back, as AITune's
    does), 'dynamo' or 'torchscript'."""
    if exporter not in ("auto", "dynamo", "torchscript"):
        raise ValueError(f"hone.tune: exporter={exporter!r}; give 'auto', 'dynamo' or 'torchscript'")
    tried = []
    try:
        if exporter in ("auto", "dynamo") and has_dynamo(torch):
            import tempfile  # noqa: PLC0415
            try:
                with torch.no_grad():
                    program = torch.onnx.export(flat, args, None, input_names=in_names,
                                                output_names=out_names,
                                                dynamic_shapes=_dynamic_shapes(torch, in_names,
                                                                               dynamic_axes),
                                                opset_version=opset, dynamo=True)
                with tempfile.TemporaryDirectory() as d:
                    path = os.path.join(d, "model.onnx")
                    program.save(path, external_data=False)
                    with open(path, "rb") as f:
                        return f.read(), f"torch.onnx dynamo, torch {torch.__version__}"
            except Exception as e:  # noqa: BLE001 (any exporter failure falls back or is reported)
                if exporter == "dynamo":
                    raise _export_error(name, "dynamo", opset, e) from e
                tried.append(f"dynamo: {e}")
        elif exporter == "dynamo":
            raise _export_error(name, "dynamo", opset,
                                RuntimeError(f"torch {torch.__version__} has no dynamo exporter "
                                             "(torch >= 2.5 with onnxscript)"))
        buf = io.BytesIO()
        version = opset or TORCHSCRIPT_OPSET
        try:
            with torch.no_grad():
                torch.onnx.export(flat, args, buf, input_names=in_names, output_names=out_names,
                                  dynamic_axes=dynamic_axes, opset_version=version,
                                  do_constant_folding=True)
        except Exception as e:  # noqa: BLE001 (torch raises many kinds; say where it came from)
            raise _export_error(name, "TorchScript", version, e, tried) from e
        return buf.getvalue(), f"torch.onnx TorchScript, torch {torch.__version__}, opset {version}"
    finally:
        module.train(was_training)


def _dynamic_shapes(torch, in_names, dynamic_axes) -> dict:
    """torch.export's form of the inputs' dynamic axes for Flat.forward(*tensors):
    the varargs parameter's tuple, one spec per tensor (None: every dim static).
    Dim.AUTO where torch has it (2.6 on): torch infers which dynamic dims are
    equal and does not fail on a dim the model fixes; else one torch.export.Dim
    per name, shared by the inputs whose sizes matched it."""
    Dim = torch.export.Dim
    auto = getattr(Dim, "AUTO", None)
    named = {}

    def dim(name):
        if auto is not None:
            return auto
        return named.setdefault(name, Dim(name))

    specs = []
    for n in in_names:
        axes = dynamic_axes.get(n)
        specs.append({int(a): dim(name) for a, name in axes.items()} if axes else None)
    return {"tensors": tuple(specs)}


def _export_error(name, exporter, opset, e, tried=()):
    text = f"hone.tune: torch.onnx.export could not export {name} ({exporter} exporter"
    text += f", opset {opset})" if opset else ")"
    text += f": {e}" + "".join(f"; before that, {t}" for t in tried)
    return _hone.Error(text, "unsupported", str(e), [f"while exporting {name} to ONNX"])


def _base():
    torch = torch_module()
    return torch.nn.Module if torch is not None else object


class Module(_base()):
    """A tuned torch.nn.Module: called like the original (the same positional
    arguments, nested tuples, lists and dicts of tensors; outputs in the
    original's structure), run by hone. A torch.nn.Module subclass where torch
    is importable. .model is the hone.Model underneath; save(path) writes the
    package and PATH.pytree.json, hone.load(path) reads both."""

    def __init__(self, model: Any, structure: dict):
        super().__init__()
        self.model = model
        self.structure = structure

    def forward(self, *args):
        torch = torch_module()
        leaves, spec = flatten(args, torch)
        if not same_structure(spec, self.structure["in"]):
            raise TypeError(f"{type(self).__name__}: the arguments' structure "
                            f"{json.dumps(spec)} is not the tuned one {json.dumps(self.structure['in'])}")
        outs = self.model(*[t.detach() if t.requires_grad else t for t in leaves])
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        return unflatten(self.structure["out"], outs)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("hone.Module takes positional arguments, as it was tuned")
        return self.forward(*args)

    def save(self, path: str) -> None:
        """Writes the package at path and the input/output structure at path.pytree.json."""
        self.model.save(path)
        tmp = path + SPEC_SUFFIX + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.structure, f, sort_keys=True, indent=1)
        os.replace(tmp, path + SPEC_SUFFIX)


def load_structure(path: str) -> Optional[dict]:
    p = path + SPEC_SUFFIX
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        return json.load(f)
