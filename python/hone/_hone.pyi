# Type stubs for hone._hone, the compiled module (python/module.cpp,
# python/model.cpp, python/jit.cpp, python/pipeline.cpp, python/package.cpp,
# python/convert.cpp). The docstrings are the module's own;
# tests/python/test_stubs.py checks the names, parameters and docstrings here
# against the built module, so a change there fails until this file follows.
import os
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

# An ONNX model: a path, the file's bytes, or an onnx.ModelProto (anything
# with SerializeToString()).
_ModelSource = Union[str, os.PathLike[str], bytes, Any]
# A tune's progress callback: a dict per step (candidate, step,
# candidate_index, candidate_count, fraction, eta_s).
_Progress = Union[Callable[[dict[str, Any]], Any], None]
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
        receives the outputs instead and is returned. CUDA tensors (torch, CuPy, any
        DLPack kDLCUDA producer; contiguous) go in and out with no host copy where
        the backend runs on the GPU (Model.device == 'cuda'), on the caller's
        current stream, and come back as CUDA tensors of the kind given (out= takes
        CUDA tensors then); on a host backend they are a TypeError naming the
        backend."""
    def infer(self, sample: Mapping[str, Any]) -> Any:
        """Runs one call: a dict (tree) of inputs to the tree of outputs. Host
        tensors with __dlpack__ are accepted as in __call__, and come back as the
        kind given; CUDA tensors go through __call__ (model(x)), not infer()."""
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
    def device(self) -> str:
        """Where the chosen backend runs: 'cuda' (CUDA tensors go in and out without
        host copies) or 'cpu'."""
    def transfers(self) -> Optional[dict[str, int]]:
        """The copies between host and device memory the backend made for inputs and
        outputs since it was built, as a dict (host_to_device, device_to_host,
        device_to_device, each with a _bytes count), or None for a backend that runs
        on the host. A call on CUDA tensors of a model that is one cuda block adds
        none host to device or back."""
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
    def save_report(self, path: str) -> None:
        """Writes the tuning report as its self-contained HTML page at path and its
        JSON beside it (same name, .json), each atomically; raises hone.Error for a
        path ending in .json."""

class DeviceArray:
    """An output of a model on a GPU, in device memory hone owns.
    torch.from_dlpack(a) or cupy.from_dlpack(a) wraps it without a copy; the
    memory goes back to hone when the last of them is dropped. Model calls on
    CUDA tensors return torch or CuPy tensors directly; a DeviceArray comes back
    for other CUDA inputs."""

    def __dlpack__(
        self, stream: Any = None, max_version: Any = None, dl_device: Any = None,
        copy: Any = None
    ) -> Any:
        """A DLPack capsule over the same device memory (no copy)."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """(2, ordinal): DLPack's kDLCUDA and the device."""
    @property
    def shape(self) -> tuple[int, ...]:
        """The dims, as a tuple."""
    @property
    def dtype(self) -> str:
        """hone's dtype name ('f32', 'i64', ...)."""
    @property
    def device(self) -> int:
        """The CUDA device ordinal."""

class JitModel:
    """A model tuned just in time (hone.jit): calls run on the reference and are
    recorded until it tunes on them (mode 'eager': after min_samples calls, on a
    background thread; 'deferred': when asked), then on the tuned backend,
    swapped in between calls; mode 'inspect' never tunes. inspect() and
    save_report() give what it saw. Thread-safe; calls release the GIL."""

    def __call__(
        self, *args: Any, out: Any = None, **kwargs: Any
    ) -> Any:
        """Runs one call on numpy arrays (graph inputs by position or by name), on
        the backend running now; records it while recording. One output comes back
        as an array, several as a tuple. Any tensor with __dlpack__ is accepted
        (numpy arrays, PyTorch CPU tensors): a C-contiguous tensor of the model's
        dtype is read in place, and the outputs come back as the kind given (torch
        in, torch out, over hone's memory: no copy). out= (a tensor or a sequence,
        in output order) receives the outputs instead and is returned. CUDA tensors
        are a TypeError: calls are read on the host."""
    def infer(self, sample: Mapping[str, Any]) -> Any:
        """Runs one call: a dict (tree) of inputs to the tree of outputs. Host
        tensors with __dlpack__ are accepted as in __call__, and come back as the
        kind given."""
    def tune_deferred(self) -> None:
        """Mode 'deferred': the next call starts the tune (in the background unless
        background=False). Raises hone.Error in other modes or once a tune
        started."""
    def tune_now(self) -> None:
        """Tunes now on the recorded calls, in this thread, and swaps the tuned
        model in. Raises hone.Error in mode 'inspect', without recorded calls, once
        a tune started, or with the tune's own error."""
    def wait(self) -> None:
        """Blocks until a tune running in the background has finished."""
    def inspect(self) -> dict[str, Any]:
        """The inspection report as a dict: {'format': 'hone-inspection',
        'version': 1, 'root': {...}}; the root holds mode, state, backend, calls,
        samples_recorded, times (total_ms, avg_ms) and the dtypes and shapes seen
        per input and output."""
    def save_report(self, path: str) -> None:
        """Writes the inspection report as a self-contained HTML page at path and
        its JSON beside it (same name, .json), each atomically."""
    @property
    def mode(self) -> str:
        """'eager', 'deferred' or 'inspect'."""
    @property
    def state(self) -> str:
        """'recording', 'tuning', 'tuned', 'failed', 'skipped' or 'inspecting'."""
    @property
    def backend(self) -> str:
        """The backend calls run on now: 'reference' until the tuned model is
        swapped in."""
    @property
    def recorded(self) -> int:
        """Calls recorded so far (it stops growing once a tune starts)."""
    @property
    def out_of_bounds_calls(self) -> int:
        """Calls after tuning that fell outside the tuned bounds and ran on the
        reference."""
    @property
    def tuning_error(self) -> Union[str, None]:
        """Why tuning failed or was skipped, or None."""
    @property
    def tuned(self) -> Union[Model, None]:
        """The tuned hone.Model once tuning succeeded (to save or export), else
        None."""

class Pipeline:
    """Several models run one after another: a stage reads its inputs by name
    from the pipeline's inputs and earlier stages' outputs. A stage runs on the
    reference until tune_stage() tunes it on what it really receives, or tunes
    itself just in time (add_jit_stage). min_time_share: JIT stages below this
    share of the time spent in stages are not tuned. Thread-safe once set up;
    run() releases the GIL."""

    def __init__(self, min_time_share: float = 0.0) -> None: ...
    def add_stage(self, name: str, model: _ModelSource) -> None:
        """Appends a stage: an ONNX model (a path, its bytes or an onnx.ModelProto)
        that runs on the reference until tune_stage() tunes it. Raises hone.Error
        for a duplicate name or a model the reference cannot run."""
    def add_jit_stage(
        self,
        name: str,
        model: _ModelSource,
        mode: str = "eager",
        strategy: str = "max-throughput",
        backends: Union[str, Sequence[str], None] = None,
        min_samples: int = 8,
        batch_axis_required: bool = False,
        background: bool = True,
        threads: int = 0,
        cache: bool = True,
    ) -> None:
        """Appends a stage that records what it receives in run() and tunes itself
        in its mode, as hone.jit does ('eager', 'deferred' or 'inspect')."""
    def run(self, inputs: Mapping[str, npt.ArrayLike]) -> dict[str, np.ndarray]:
        """Runs the stages in order on a dict of arrays by name; returns every
        stage's outputs by name."""
    def tune_stage(
        self,
        stage: str,
        samples: Iterable[Mapping[str, npt.ArrayLike]],
        strategy: str = "max-throughput",
        backends: Union[str, Sequence[str], None] = None,
        threads: int = 0,
        cache: bool = True,
        seed: int = 1,
        progress: _Progress = None,
    ) -> None:
        """Runs samples (dicts of the pipeline's inputs, at two or more batch sizes)
        through the pipeline, records what `stage` receives and tunes that stage on
        it. progress and Ctrl-C as in hone.tune."""
    def tune_deferred(self, stage: str) -> None:
        """A deferred JIT stage tunes at its next call."""
    def wait(self) -> None:
        """Blocks until every JIT stage's background tune has finished."""
    def placement(self) -> list[tuple[str, str]]:
        """(stage, backend running it) for each stage, in order."""
    def save(self, dir: str) -> None:
        """Writes dir/<stage>.hone for each tuned stage and dir/pipeline.json naming
        them."""
    def load(self, dir: str, allow_env_mismatch: bool = False) -> int:
        """Installs the tuned stages a save() wrote to dir, by stage name; returns
        how many."""
    def inspect(self) -> dict[str, Any]:
        """The inspection report as a dict: the pipeline as the root, one child per
        stage with its state, backend, calls, times and the shapes it received."""
    def save_report(self, path: str) -> None:
        """Writes the inspection report as a self-contained HTML page at path and
        its JSON beside it (same name, .json)."""

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
    progress: _Progress = None,
) -> Model:
    """Tunes an ONNX model (a path, its bytes or an onnx.ModelProto) on samples: a list of dicts of
    numpy arrays (or arrays, or tuples of arrays in input order), at two or more
    batch sizes; None: random samples. strategy: 'max-throughput', 'min-latency',
    'first-wins', 'one-backend', 'latency-budget:MS'. backends: candidates (list
    or 'a,b'). dims: {'batch': (1, 8, 32)} or ['seq=16']. precision: 'fp32'
    (strict, the default) or 'auto' (also every reduced precision each backend
    declares, each judged by its own bound; the mixed plan with fp32 nodes where
    one fails). progress: called with a dict per step (candidate, step,
    candidate_index, candidate_count, fraction, eta_s). Ctrl-C, or an exception
    from progress, cancels the tune at its next step and is raised. Returns a
    hone.Model; raises hone.Error."""

def load(path: str, allow_env_mismatch: bool = False, threads: int = -1) -> Model:
    """Loads a .hone package (verified, not tuned again) as a hone.Model."""

def inspect(model: _ModelSource) -> dict[str, Any]:
    """What an ONNX model (a path, its bytes or an onnx.ModelProto) takes, gives
    and holds, as a dict."""

def backends() -> list[dict[str, Any]]:
    """The backends in this build: name, capabilities, whether this machine can
    run them."""

def jit(
    model: _ModelSource,
    mode: str = "eager",
    strategy: str = "max-throughput",
    backends: Union[str, Sequence[str], None] = None,
    min_samples: int = 8,
    batch_axis_required: bool = False,
    background: bool = True,
    max_samples_stored: int = 64,
    spill_dir: str = "",
    threads: int = 0,
    cache: bool = True,
    seed: int = 1,
    configs: Mapping[str, Mapping[str, str]] = {},
    precision: str = "fp32",
) -> JitModel:
    """Wraps an ONNX model (a path, its bytes or an onnx.ModelProto) to tune just
    in time from the calls made on it. mode: 'eager' (tunes once min_samples
    calls, and with batch_axis_required two batch sizes, were seen), 'deferred'
    (tunes when tune_deferred() or tune_now() asks) or 'inspect' (never tunes;
    only the report). background=False tunes inside the call that starts it. At
    most max_samples_stored calls stay in memory; past that they go to
    spill_dir. strategy, backends, threads, cache, seed, configs and precision
    are hone.tune's. Returns a hone.JitModel."""

def export(
    model: Union[Model, str, os.PathLike[str], Any],
    dir: str,
    format: str = "",
    backend: str = "",
    name: str = "",
) -> dict[str, Any]:
    """Writes a deployable artifact that runs without hone, as Model.export does,
    for a hone.Model (or hone.Module) or a .hone package's path: format 'onnx',
    'native-so' (with backend='aot') or 'triton' (a model folder named `name` in
    the Triton repository `dir`); empty: the chosen backend's format. dir is
    written atomically and must not hold files. Returns what was written
    (format, path, files with SHA-256)."""

def generate_key(path: str) -> str:
    """Writes a new Ed25519 private key to path (PEM, mode 0600; it must not
    exist) and its public key to path + '.pub'. Returns the key id."""

def sign(package: str, key: str) -> str:
    """Signs a .hone package in place (atomically, after verifying it whole) with
    the private key file `key`. Returns the key id."""

def verify(package: str, trusted_keys: Union[str, Sequence[str], None] = None) -> dict[str, Any]:
    """Verifies a .hone package whole and its signature: {'signed', 'trusted',
    'key_id', 'trusted_by'}; trusted when a key of trusted_keys (public-key
    files) or of the keys folder ($HONE_TRUSTED_KEYS, else
    ~/.config/hone/trusted-keys/) signed it. Raises hone.Error when the package
    or its signature does not verify (altered after signing)."""
