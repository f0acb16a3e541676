"""hone.tune on a torch.nn.Module: exported through torch.onnx with dynamic
axes inferred from samples, nested inputs and outputs kept, a hone.Module
(torch.nn.Module) called like the original, saved and loaded in a new
process (an onednn package bit for bit); clear errors; and
examples/python/tune_module.py run as written (torchvision resnet18).
Skipped where PyTorch is missing."""
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import hone

torch = pytest.importorskip("torch", reason="PyTorch is not installed for this interpreter")

SOURCE = os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


class Nested(torch.nn.Module):
    """Takes (x, {'b': bias}) and gives {'y': ..., 'pair': (..., [...])}."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x, extra):
        a = self.lin(x)
        return {"y": a, "pair": (a.relu() + extra["b"], [x.sum(1)])}


def nested_args(batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(batch, 8, generator=g), {"b": torch.rand(batch, 4, generator=g)})


@pytest.fixture(scope="module")
def nested():
    net = Nested().eval()
    m = hone.tune(net, [nested_args(1), nested_args(4)], backends=["reference"], threads=1, cache=False)
    return net, m


def assert_tree_close(a, b):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, torch.Tensor)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    elif isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for k in b:
            assert_tree_close(a[k], b[k])
    else:
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_tree_close(u, v)


def test_module_is_a_torch_module_with_the_batch_inferred(nested):
    _, m = nested
    assert isinstance(m, torch.nn.Module) and isinstance(m, hone.Module)
    axes = m.structure["dynamic_axes"]
    assert axes["in_0"] == {0: "batch"} and axes["in_1"] == {0: "batch"}
    assert all(axes[f"out_{i}"] == {0: "batch"} for i in range(3))


def test_nested_inputs_and_outputs_keep_their_structure(nested):
    net, m = nested
    args = nested_args(3, seed=7)  # a batch no sample had
    with torch.no_grad():
        assert_tree_close(m(*args), net(*args))


def test_other_structure_is_refused_saying_which(nested):
    _, m = nested
    x, extra = nested_args(2)
    with pytest.raises(TypeError, match="structure"):
        m(x, {"c": extra["b"]})


def test_save_and_load_in_a_new_process(nested, tmp_path):
    net, m = nested
    path = str(tmp_path / "nested.hone")
    m.save(path)
    assert os.path.exists(path + ".pytree.json")
    args = nested_args(2, seed=3)
    torch.save(args, str(tmp_path / "args.pt"))
    code = (f"import torch, hone; m = hone.load({path!r}); assert isinstance(m, hone.Module); "
            f"torch.save(m(*torch.load({str(tmp_path / 'args.pt')!r})), {str(tmp_path / 'out.pt')!r})")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ)
    with torch.no_grad():
        assert_tree_close(torch.load(str(tmp_path / "out.pt")), net(*args))


def test_an_onednn_package_replays_its_timed_choices_bit_for_bit(tmp_path):
    # 3x3 convs over 64 channels: onednn times Winograd against the direct
    # kernel and the block's layouts; the package records the choices
    # (timed_choices) and the new process replays them: the same bits.
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU()).eval()
    m = hone.tune(net, [torch.rand(1, 64, 28, 28), torch.rand(2, 64, 28, 28)],
                  backends=["onednn"], threads=1, cache=False)
    x = torch.rand(1, 64, 28, 28)
    y = m(x)
    path = str(tmp_path / "convs.hone")
    m.save(path)
    with zipfile.ZipFile(path) as z:
        fields = json.loads(z.read("manifest.json"))["decision"]["config_fields"]
    assert "block-plan|[1,64,28,28]|fp32=" in fields["timed_choices"], fields
    torch.save(x, str(tmp_path / "x.pt"))
    code = (f"import torch, hone; m = hone.load({path!r}); "
            f"torch.save(m(torch.load({str(tmp_path / 'x.pt')!r})), {str(tmp_path / 'y.pt')!r})")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ)
    assert torch.equal(torch.load(str(tmp_path / "y.pt")), y)


def test_single_tensor_samples_and_fixed_dims():
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU()).eval()
    m = hone.tune(net, [torch.rand(1, 3, 8, 8), torch.rand(2, 3, 8, 8)], backends=["reference"],
                  threads=1, cache=False)
    assert m.structure["dynamic_axes"]["in_0"] == {0: "batch"}  # 3, 8, 8 stay fixed
    x = torch.rand(2, 3, 8, 8)
    with torch.no_grad():
        np.testing.assert_allclose(m(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)


def test_no_samples_says_what_is_needed():
    with pytest.raises(ValueError, match="needs samples"):
        hone.tune(torch.nn.Linear(2, 2), None)


def test_a_module_torch_cannot_export_names_it():
    class Unexportable(torch.nn.Module):
        def forward(self, x):
            return torch.linalg.svd(x)[1]  # no ONNX symbolic for aten::linalg_svd

    with pytest.raises(hone.Error, match="torch.onnx.export could not export Unexportable") as e:
        hone.tune(Unexportable(), [torch.rand(1, 2, 2), torch.rand(2, 2, 2)], backends=["reference"], cache=False)
    assert any("while exporting Unexportable" in c for c in e.value.context)


def test_an_input_the_export_turned_into_a_constant_is_named():
    class Untraced(torch.nn.Module):
        def forward(self, x):
            return torch.from_numpy(x.numpy().copy())  # leaves the trace: x becomes a constant

    with pytest.warns(Warning), pytest.raises(hone.Error, match="does not read input.*in_0") as e:
        hone.tune(Untraced(), [torch.rand(1, 2), torch.rand(2, 2)], backends=["reference"], cache=False)
    assert any("while exporting Untraced" in c for c in e.value.context)


def test_example_tune_module_runs_as_written(tmp_path):
    pytest.importorskip("torchvision", reason="torchvision is not installed")
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "python", "tune_module.py"),
                        str(tmp_path)], capture_output=True, text=True, env=os.environ, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "loaded in a new process: same output, shape (1, 1000)" in r.stdout


def test_exporter_choice():
    net = torch.nn.Linear(3, 2).eval()
    s = [torch.rand(1, 3), torch.rand(2, 3)]
    with pytest.raises(ValueError, match="exporter='onnxruntime'"):
        hone.tune(net, s, exporter="onnxruntime")
    m = hone.tune(net, s, exporter="torchscript", backends=["reference"], threads=1, cache=False)
    assert m.structure["exporter"].startswith("torch.onnx TorchScript")
    if not hone._torch.has_dynamo(torch):
        with pytest.raises(hone.Error, match="has no dynamo exporter"):
            hone.tune(net, s, exporter="dynamo", backends=["reference"], cache=False)
    else:  # torch >= 2.5 with onnxscript (the GPU machine)
        m = hone.tune(net, s, exporter="dynamo", backends=["reference"], threads=1, cache=False)
        assert m.structure["exporter"].startswith("torch.onnx dynamo")
        x = torch.rand(5, 3)
        with torch.no_grad():
            np.testing.assert_allclose(m(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-6)
