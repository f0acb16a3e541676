"""Tensors in and out without copies: PyTorch CPU tensors (anything with
__dlpack__) go into a Model, are read in place when C-contiguous and of the
model's dtype, and the outputs come back as the kind given; out= fills the
caller's tensors. Skipped where PyTorch is missing (numpy paths run always)."""
import os
import tracemalloc

import numpy as np
import pytest

import hone

MODELS = os.path.join(os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "models")
MLP = os.path.join(MODELS, "mlp.onnx")

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed for this interpreter")


@pytest.fixture(scope="module")
def mlp():
    rng = np.random.default_rng(0)
    s = [{"x": rng.uniform(-1, 1, (b, 16)).astype(np.float32)} for b in (1, 256)]
    return hone.tune(MLP, s, backends=["reference"], threads=1, cache=False)


def python_bytes_allocated_during(fn):
    """Peak bytes Python and numpy allocate while fn runs (numpy reports its
    data buffers to tracemalloc, so numpy.ascontiguousarray's copy shows)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@needs_torch
def test_torch_in_gives_torch_out_matching_numpy(mlp):
    x = torch.rand(8, 16)
    y = mlp(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and tuple(y.shape) == (8, 8)
    np.testing.assert_array_equal(y.numpy(), mlp(x.numpy()))
    assert isinstance(mlp(x.numpy()), np.ndarray)
    assert isinstance(mlp(x=x), torch.Tensor)


@needs_torch
def test_torch_output_shares_hone_memory_and_outlives_the_call(mlp):
    y = mlp(torch.ones(2, 16))
    expected = y.clone()
    import gc
    gc.collect()
    _ = [mlp(torch.rand(2, 16)) for _ in range(3)]
    assert torch.equal(y, expected)  # still valid memory, not reused


@needs_torch
def test_contiguous_tensor_is_read_in_place_and_strided_one_is_copied(mlp):
    x = torch.rand(256, 16)  # 16 KiB
    in_place = python_bytes_allocated_during(lambda: mlp(x))
    strided = torch.rand(16, 256).t()  # same shape, not C-contiguous
    copied = python_bytes_allocated_during(lambda: mlp(strided))
    assert copied >= x.numel() * 4, copied  # the measure sees a copy ...
    assert in_place < x.numel() * 4 // 2, in_place  # ... and there is none here
    # The array hone is handed is the tensor's own memory.
    from hone import _dlpack
    view, _ = _dlpack.to_numpy(x, "x")
    assert view.ctypes.data == x.data_ptr()
    np.testing.assert_allclose(mlp(strided).numpy(), mlp(strided.contiguous()).numpy())


@needs_torch
def test_requires_grad_tensor_is_accepted(mlp):
    x = torch.rand(3, 16, requires_grad=True)
    np.testing.assert_array_equal(mlp(x).numpy(), mlp(x.detach().numpy()))


@needs_torch
def test_out_fills_caller_tensors(mlp):
    x = torch.rand(4, 16)
    out = torch.empty(4, 8)
    assert mlp(x, out=out) is out
    assert torch.equal(out, mlp(x))
    out_np = np.empty((4, 8), np.float32)
    assert mlp(x.numpy(), out=[out_np])[0] is out_np
    np.testing.assert_array_equal(out_np, out.numpy())


@needs_torch
def test_out_with_wrong_shape_or_count_says_what(mlp):
    x = torch.rand(4, 16)
    with pytest.raises(TypeError, match=r"out\[0\] is float32\[4, 7\]; output 0 is float32\[4, 8\]"):
        mlp(x, out=torch.empty(4, 7))
    with pytest.raises(TypeError, match="out= has 2 tensor"):
        mlp(x, out=(torch.empty(4, 8), torch.empty(4, 8)))


@needs_torch
def test_wrong_dtype_tensor_names_input_and_fix(mlp):
    with pytest.raises(TypeError, match="input 'x' is f64.*the model takes f32"):
        mlp(torch.rand(2, 16, dtype=torch.float64))


class FakeCudaTensor:  # what a CUDA tensor reports through the DLPack protocol
    def __dlpack__(self, stream=None):
        raise AssertionError("not to be read")

    def __dlpack_device__(self):
        return (2, 0)


def test_tensor_on_another_device_is_refused_with_its_name():
    from hone import _dlpack

    with pytest.raises(TypeError, match="on cuda:0; this path reads host memory: move it with .cpu()"):
        _dlpack.to_numpy(FakeCudaTensor(), "input 'x'")


def test_cuda_tensor_on_a_host_backend_names_the_backend(mlp):
    assert mlp.device == "cpu" and mlp.transfers() is None
    with pytest.raises(TypeError, match="runs on backend 'reference', which reads host memory"):
        mlp(FakeCudaTensor())
    with pytest.raises(TypeError, match="runs on backend 'reference'"):
        mlp(x=FakeCudaTensor())
    with pytest.raises(TypeError, match="every input on the GPU, or every input on the host"):
        mlp(np.ones((2, 16), np.float32), FakeCudaTensor())
    with pytest.raises(TypeError, match="this path reads host memory"):
        mlp.infer({"x": FakeCudaTensor()})  # a tree of inputs is read on the host


def test_cuda_tensor_given_to_a_jit_model_is_refused():
    j = hone.jit(MLP, mode="inspect")
    with pytest.raises(TypeError, match="a JitModel reads host memory"):
        j(FakeCudaTensor())


def test_device_path_reads_dlpack_capsules_and_checks_them(mlp):
    with pytest.raises(TypeError, match="input 0: expected a DLPack capsule named 'dltensor'"):
        mlp._infer_device([np.ones((2, 16), np.float32)], 0)
    with pytest.raises(ValueError, match=r"input 0 is not contiguous \(shape \[16,2\], strides \[1,16\]"):
        mlp._infer_device([np.ones((2, 16), np.float32).T.__dlpack__()], 0)
    capsule = np.ones((2, 16), np.float32).__dlpack__()
    with pytest.raises(TypeError, match="input 0 is on DLPack device type 1, not CUDA"):
        mlp._infer_device([capsule], 0)
    with pytest.raises(TypeError, match="not yet consumed"):  # the capsule was taken
        mlp._infer_device([capsule], 0)
    # A CUDA-typed capsule is read; the host backend then refuses, naming itself.
    assert "DeviceArray" in hone.__all__ and hone.DeviceArray.__module__ == "hone"


@needs_torch
def test_infer_takes_a_tree_of_tensors(mlp):
    x = torch.rand(2, 16)
    out = mlp.infer({"x": x})
    leaves = list(out.values()) if isinstance(out, dict) else [out]
    assert all(isinstance(v, torch.Tensor) for v in leaves)
    np.testing.assert_array_equal(leaves[0].numpy(), mlp(x.numpy()))


def test_dlpack_object_that_is_not_torch_is_read(mlp):
    class Wrapper:  # any producer with the protocol: here numpy behind it
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.random.rand(3, 16).astype(np.float32)
    np.testing.assert_array_equal(mlp(Wrapper(a)), mlp(a))
