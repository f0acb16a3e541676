"""CUDA tensors through a Model on the cuda backend with no host copy (issue 31):
a torch CUDA tensor in, a torch CUDA tensor out, zero host<->device copies in
Model.transfers(), the output equal to PyTorch's, out= written in place, the
caller's stream respected. With HONE_GPU_RESNET50=1 (bench/cuda_h200/python_gpu.sh
sets it) also torchvision's resnet50 at batch 1: a Python call's p50 against
`hone bench --io device` on the same package (HONE_BIN names the CLI).

Skipped without a CUDA-enabled PyTorch and a GPU the cuda backend can use.
Runs under pytest, or as a script where pytest is missing (the GPU machine's
PyTorch environment): `python3 test_cuda_device.py`.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import pytest
except ImportError:  # the script runner below stands in
    pytest = None

try:
    import torch
except ImportError:
    torch = None

import hone


def why_skip():
    if torch is None:
        return "PyTorch is not installed for this interpreter"
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA device"
    cuda = next((b for b in hone.backends() if b["name"] == "cuda"), None)
    if cuda is None:
        return "this hone build has no cuda backend"
    if not cuda["available"]:
        return f"hone's cuda backend cannot run here: {cuda['unavailable_reason']}"
    return ""


if pytest is not None:
    pytestmark = pytest.mark.skipif(bool(why_skip()), reason=why_skip() or "runs")


def strict_fp32():
    """PyTorch's convolutions and matmuls in strict fp32, as hone's default precision."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


_SMALL = {}


def tuned_on_cuda(net, shape, path):
    """net exported to ONNX at `path` (TorchScript exporter, dynamic batch; this
    test is about the call, not the export) and tuned on cuda: a hone.Model."""
    with torch.no_grad():
        torch.onnx.export(net, (torch.rand(*shape),), path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17,
                          dynamo=False)
    samples = [{"x": torch.rand(b, *shape[1:]).numpy()} for b in (1, 2)]
    return hone.tune(path, samples, backends=["cuda"], cache=False)


def small():
    """(the torch module on the GPU, the tuned hone.Model): a conv net tuned on cuda."""
    if not _SMALL:
        torch.manual_seed(0)
        net = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 8, 3, padding=1, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 10)).eval()
        m = tuned_on_cuda(net, (2, 3, 32, 32), os.path.join(tempfile.mkdtemp(), "small.onnx"))
        _SMALL["net"], _SMALL["m"] = net.cuda(), m
    return _SMALL["net"], _SMALL["m"]


def host_copies(model, before):
    after = model.transfers()
    return (after["host_to_device"] - before["host_to_device"],
            after["device_to_host"] - before["device_to_host"])


def check_close(got, want, rtol=1e-4, atol=1e-5):
    err = (got - want).abs().max().item()
    bound = atol + rtol * want.abs().max().item()
    assert err <= bound, f"max |hone - torch| {err:.3g} > {bound:.3g}"


def test_cuda_tensor_in_cuda_tensor_out_with_no_host_copy():
    strict_fp32()
    net, m = small()
    model = m
    assert model.backend == "cuda" and model.device == "cuda"
    x = torch.rand(2, 3, 32, 32, device="cuda")
    m(x)  # the first call of a shape plans it
    before = model.transfers()
    y = m(x)
    assert isinstance(y, torch.Tensor) and y.is_cuda and tuple(y.shape) == (2, 10)
    assert host_copies(model, before) == (0, 0)
    with torch.no_grad():
        check_close(y, net(x))
    # The host path of the same model copies (so the counters can tell).
    before = model.transfers()
    m(x.cpu())
    assert host_copies(model, before) == (1, 1)


def test_outputs_outlive_the_call_and_out_writes_in_place():
    strict_fp32()
    net, m = small()
    x = torch.rand(2, 3, 32, 32, device="cuda")
    y = m(x)
    keep = y.clone()
    for _ in range(5):  # later calls reuse hone's memory only once y is dropped
        m(torch.rand(2, 3, 32, 32, device="cuda"))
    torch.cuda.synchronize()
    assert torch.equal(y, keep)
    out = torch.full((2, 10), float("nan"), device="cuda")
    assert m(x, out=out) is out
    assert torch.equal(out, keep)


def test_callers_stream_is_respected():
    strict_fp32()
    net, m = small()
    s = torch.cuda.Stream()
    x = torch.rand(2, 3, 32, 32, device="cuda")
    with torch.no_grad():
        want = net(x)
    big = torch.empty(1 << 28, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        for _ in range(3):
            big.fill_(1.0)  # a long op first on the caller's stream
            x2 = x * 1.0    # the input is written on that stream, after it
            y = m(x2)       # hone waits for both
            z = y + 0.0     # and the stream waits for hone
    s.synchronize()
    check_close(z, want)


def test_non_contiguous_cuda_tensor_is_refused():
    _, m = small()
    x = torch.rand(2, 32, 32, 3, device="cuda").permute(0, 3, 1, 2)
    try:
        m(x)
    except ValueError as e:
        assert "not contiguous" in str(e) and ".contiguous()" in str(e), e
    else:
        raise AssertionError("a non-contiguous CUDA tensor was accepted")


def p50(values):
    values = sorted(values)
    return values[len(values) // 2]


def bench_device_p50(package, iters):
    cli = os.environ.get("HONE_BIN", "hone")
    out = subprocess.run([cli, "bench", package, "--io", "device", "--batch", "1", "--iters",
                          str(iters), "--warmup", "20", "--json"],
                         check=True, capture_output=True, text=True)
    j = json.loads(out.stdout)
    assert j["batch"] == 1 and j["io"] == "device", j
    assert j["host_copies"]["host_to_device"] == 0 and j["host_copies"]["device_to_host"] == 0, j
    return j["p50_ms"]


def test_resnet50_call_time_is_within_ten_percent_of_hone_bench_io_device():
    if os.environ.get("HONE_GPU_RESNET50") != "1":
        if pytest is not None:
            pytest.skip("HONE_GPU_RESNET50=1 runs it (bench/cuda_h200/python_gpu.sh)")
        return
    import torchvision
    strict_fp32()
    torch.manual_seed(0)
    net = torchvision.models.resnet50(weights=None).eval()
    work = os.environ.get("HONE_GPU_WORK") or tempfile.mkdtemp()
    package = os.path.join(work, "resnet50.hone")
    t0 = time.perf_counter()
    m = tuned_on_cuda(net, (1, 3, 224, 224), os.path.join(work, "resnet50.onnx"))
    m.save(package)
    print(f"resnet50: exported, tuned on cuda and saved in {time.perf_counter() - t0:.1f} s")
    m = hone.load(package)
    model = m
    net = net.cuda()
    x = torch.rand(1, 3, 224, 224, device="cuda")
    with torch.no_grad():
        want = net(x)
    y = m(x)
    torch.cuda.synchronize()
    rel_l2 = ((y - want).norm() / want.norm()).item()
    print(f"resnet50 batch 1: relative L2 against PyTorch fp32 {rel_l2:.3g}")
    assert rel_l2 < 1e-5, rel_l2
    iters = 300
    bench_before = bench_device_p50(package, iters)
    for _ in range(30):
        m(x)
    torch.cuda.synchronize()
    before = model.transfers()
    times = []
    for _ in range(iters):
        a = time.perf_counter()
        m(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - a) * 1e3)
    copies = host_copies(model, before)
    bench_after = bench_device_p50(package, iters)
    py = p50(times)
    bench = (bench_before + bench_after) / 2
    print(f"resnet50 batch 1 on cuda: Python call on a CUDA tensor p50 {py:.3f} ms; "
          f"hone bench --io device p50 {bench_before:.3f} / {bench_after:.3f} ms (mean {bench:.3f}); "
          f"ratio {py / bench:.3f}; host copies in the timed calls {copies}")
    assert copies == (0, 0)
    assert py <= 1.10 * bench, f"Python {py:.3f} ms vs hone bench {bench:.3f} ms"


if __name__ == "__main__":
    reason = why_skip()
    if reason:
        print(f"skipped: {reason}")
        sys.exit(0)
    failed = 0
    for name, fn in sorted((k, v) for k, v in globals().items() if k.startswith("test_")):
        try:
            fn()
            print(f"PASSED {name}")
        except Exception as e:  # noqa: BLE001 - report every test, as pytest would
            failed += 1
            print(f"FAILED {name}: {type(e).__name__}: {e}")
    sys.exit(1 if failed else 0)
