# Type stubs for hone._hone, the compiled module (python/module.cpp,
# python/model.cpp, python/convert.cpp). The docstrings are the module's own;
# tests/python/test_stubs.py checks the names, parameters and docstrings here
# against the built module, so a change there fails until this file follows.
import os
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

# An ONNX model: a path or the file's bytes.
_ModelSource = Union[str, os.PathLike[str], bytes]
# One sample: a dict (tree) of inputs by name, the only input's array, or the
# inputs' arrays in graph order.
_Sample = Union[Mapping[str, Any], npt.ArrayLike, Sequence[npt.ArrayLike]]

class Error(RuntimeError):
    """A hone error: str() is the message with its context chain; .code is the
    kind ('invalid argument', 'not found', ...), .message the message alone and
    .context the 'while ...' lines, innermost first."""

    code: str
    message: str
    context: list[str]
    def __init__(
        self, text: str, code: str = "internal", message: str = "", context: Iterable[str] = ()
    ) -> None: ...

class Model:
    """A tuned model: the chosen backend, built. Call it on numpy arrays (graph
    inputs by position or name) or use infer() with an input tree. Thread-safe;
    inference releases the GIL."""

    def __call__(
        self, *args: Any, out: Any = None, **kwargs: Any
    ) -> Any:
        """Runs one call on numpy arrays: graph inputs by position or by name. One
        output comes back as an array, several as a tuple in graph order. Raises
        TypeError for a wrong dtype or input count, hone.Error for a shape outside
        the tuned bounds. Any tensor with __dlpack__ is accepted (numpy arrays,
        PyTorch CPU tensors): a C-contiguous tensor of the model's dtype is read in
        place, and the outputs come back as the kind given (torch in, torch out, over
        hone's memory: no copy). out= (a tensor or a sequence, in output order)
        receives the outputs instead and is returned."""
    def infer(self, sample: Mapping[str, Any]) -> Any:
        """Runs one call: a dict (tree) of inputs to the tree of outputs. Tensors
        with __dlpack__ are accepted as in __call__, and come back as the kind
        given."""
    def save(self, path: str) -> None:
        """Saves the model as a .hone package (atomically)."""
    def input_buffer(self, input: Union[str, int], shape: Sequence[int]) -> np.ndarray:
        """A zero-filled array for graph input `input` (its name or position) of
        `shape`, in the memory the chosen backend copies from fastest: page-locked
        host memory on cuda, which reaches the GPU in one DMA (about three times the
        rate of ordinary memory on an H200). Fill it and pass it to the model, as
        often as you like."""
    def export(
        self, dir: str, format: str = "", backend: str = "", name: str = ""
    ) -> dict[str, Any]:
        """Writes a deployable artifact: format 'onnx', 'native-so' (with
        backend='aot') or 'triton' (a model folder named `name` in the Triton
        repository `dir`); returns what was written."""
    @property
    def backend(self) -> str:
        """The name of the backend tuning chose."""
    @property
    def inputs(self) -> list[dict[str, Any]]:
        """The graph inputs: dicts of name, path, dtype, shape (ints and dim names),
        batch_axis and bounds ({dim: (min, opt, max)})."""
    @property
    def outputs(self) -> list[dict[str, Any]]:
        """The graph outputs, described as inputs are."""
    @property
    def report(self) -> dict[str, Any]:
        """The tuning report (its JSON) as a dict; report['decision'] holds the
        choice."""
    def report_html(self) -> str:
        """The tuning report as a self-contained HTML page with plots."""

def tune(
    model: _ModelSource,
    samples: Union[Iterable[_Sample], None] = None,
    strategy: str = "max-throughput",
    backends: Union[str, Sequence[str], None] = None,
    dims: Union[Mapping[str, Union[int, str, Sequence[int]]], str, Sequence[str], None] = None,
    batch_sizes: Sequence[int] = [],
    threads: int = 0,
    cache: bool = True,
    seed: int = 1,
    configs: Mapping[str, Mapping[str, str]] = {},
    precision: str = "fp32",
) -> Model:
    """Tunes an ONNX model (a path or its bytes) on samples: a list of dicts of
    numpy arrays (or arrays, or tuples of arrays in input order), at two or more
    batch sizes; None: random samples. strategy: 'max-throughput', 'min-latency',
    'first-wins', 'one-backend', 'latency-budget:MS'. backends: candidates (list
    or 'a,b'). dims: {'batch': (1, 8, 32)} or ['seq=16']. precision: 'fp32'
    (strict, the default) or 'auto' (also every reduced precision each backend
    declares, each judged by its own bound; the mixed plan with fp32 nodes where
    one fails). Returns a hone.Model; raises hone.Error."""

def load(path: str, allow_env_mismatch: bool = False, threads: int = -1) -> Model:
    """Loads a .hone package (verified, not tuned again) as a hone.Model."""

def inspect(model: _ModelSource) -> dict[str, Any]:
    """What an ONNX model (path or bytes) takes, gives and holds, as a dict."""

def backends() -> list[dict[str, Any]]:
    """The backends in this build: name, capabilities, whether this machine can
    run them."""
