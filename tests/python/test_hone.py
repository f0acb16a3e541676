"""The hone Python module: tune, save, load in a fresh process, infer,
export, clear exceptions for a bad model and bad inputs, and concurrent
inference from Python threads."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import hone

MODELS = os.path.join(os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "models")
MLP = os.path.join(MODELS, "mlp.onnx")


def samples(batches=(1, 4), seed=0):
    rng = np.random.default_rng(seed)
    return [{"x": rng.uniform(-1, 1, (b, 16)).astype(np.float32)} for b in batches]


@pytest.fixture(scope="module")
def tuned():
    # Two backends keep the suite quick; the reference defines the right answer.
    return hone.tune(MLP, samples(), backends=["reference", "onednn"], threads=1, cache=False)


def test_backends_lists_the_reference():
    names = {b["name"]: b for b in hone.backends()}
    assert "reference" in names and names["reference"]["available"]
    assert "onnx" == names["reference"]["artifact_format"]


def test_inspect_reports_inputs_outputs_and_ops():
    info = hone.inspect(MLP)
    assert info["inputs"][0]["name"] == "x"
    assert info["inputs"][0]["shape"] == ["batch", 16]
    assert info["outputs"][0]["name"] == "probs"
    assert info["ops"]["Gemm"] == 2
    with open(MLP, "rb") as f:  # bytes work too
        assert hone.inspect(f.read())["name"] == info["name"]


def test_tune_learns_the_spec_and_infers(tuned):
    assert tuned.backend in ("reference", "onednn")
    assert tuned.inputs[0]["shape"] == ["batch", 16]
    assert tuned.inputs[0]["bounds"]["batch"] == (1, 4, 4) or tuned.inputs[0]["bounds"]["batch"][2] == 4
    x = samples((3,), seed=5)[0]["x"]
    y = tuned(x)
    assert y.shape == (3, 8) and y.dtype == np.float32
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)  # softmax rows
    tree = tuned.infer({"x": x})
    np.testing.assert_array_equal(tree if isinstance(tree, np.ndarray) else next(iter(tree.values())), y)
    assert tuned(x=x).shape == (3, 8)
    report = tuned.report
    assert report["decision"]["backend"] == tuned.backend
    assert "<svg" in tuned.report_html()


def test_random_samples_when_none_given():
    m = hone.tune(MLP, None, backends="reference", strategy="first-wins", threads=1, cache=False,
                  dims={"batch": (1, 2, 4)})
    assert m.inputs[0]["bounds"]["batch"][2] == 4


def test_non_contiguous_input_is_copied_and_gives_the_same_result(tuned):
    x = np.asfortranarray(samples((4,), seed=2)[0]["x"])
    assert not x.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(tuned(x), tuned(np.ascontiguousarray(x)))


def test_input_buffer_is_zeroed_writable_and_gives_the_same_result(tuned):
    x = samples((3,), seed=7)[0]["x"]
    buf = tuned.input_buffer("x", (3, 16))
    assert buf.shape == (3, 16) and buf.dtype == np.float32 and buf.flags["WRITEABLE"]
    assert not buf.any()
    buf[...] = x
    np.testing.assert_array_equal(tuned(buf), tuned(x))
    assert tuned.input_buffer(0, (1, 16)).shape == (1, 16)
    with pytest.raises(KeyError, match="no input named 'nope'"):
        tuned.input_buffer("nope", (1, 16))
    with pytest.raises(IndexError, match="input 3: the model has 1 input"):
        tuned.input_buffer(3, (1, 16))
    with pytest.raises(hone.Error, match="axis 1"):
        tuned.input_buffer("x", (2, -1))


def test_save_then_load_in_a_fresh_process(tuned, tmp_path):
    pkg = tmp_path / "mlp.hone"
    tuned.save(str(pkg))
    x = samples((2,), seed=9)[0]["x"]
    np.save(tmp_path / "x.npy", x)
    expected = tuned(x)
    code = (
        "import sys, numpy as np, hone\n"
        "m = hone.load(sys.argv[1])\n"
        "np.save(sys.argv[3], m(np.load(sys.argv[2])))\n"
    )
    subprocess.run([sys.executable, "-c", code, str(pkg), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                   check=True, env=dict(os.environ))
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)


def test_export_onnx_and_triton(tuned, tmp_path):
    rec = tuned.export(str(tmp_path / "onnx"), format="onnx")
    assert rec["format"] == "onnx"
    assert (tmp_path / "onnx" / "model.onnx").exists()
    tri = tuned.export(str(tmp_path / "repo"), format="triton", name="mlp")
    assert tri["max_batch_size"] == 4
    assert (tmp_path / "repo" / "mlp" / "1" / "model.onnx").exists()
    assert 'name: "mlp"' in (tmp_path / "repo" / "mlp" / "config.pbtxt").read_text()
    with pytest.raises(hone.Error, match="already exists"):
        tuned.export(str(tmp_path / "repo"), format="triton", name="mlp")


def test_bad_model_raises_hone_error_with_context(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf")
    with pytest.raises(hone.Error) as e:
        hone.tune(str(bad), samples())
    assert e.value.code in ("corrupt", "invalid argument")
    assert "bad.onnx" in str(e.value)
    with pytest.raises(hone.Error) as missing:
        hone.load(str(tmp_path / "nope.hone"))
    assert "nope.hone" in str(missing.value)


def test_bad_inputs_raise_clear_exceptions(tuned):
    with pytest.raises(TypeError, match=r"input 'x' is f64.*astype\(numpy.float32\)"):
        tuned(np.zeros((2, 16)))  # float64
    with pytest.raises(hone.Error, match="16"):
        tuned(np.zeros((2, 5), np.float32))  # wrong static dim
    with pytest.raises(hone.Error, match="batch"):
        tuned(np.zeros((9, 16), np.float32))  # past the tuned bound 4
    with pytest.raises(TypeError, match="takes 1 input"):
        tuned()
    with pytest.raises(TypeError, match="no input named 'y'"):
        tuned(y=np.zeros((1, 16), np.float32))


def test_concurrent_infer_from_threads(tuned):
    xs = [samples((b,), seed=s)[0]["x"] for s, b in enumerate([1, 2, 3, 4] * 4)]
    expected = [tuned(x) for x in xs]
    results = [None] * len(xs)
    errors = []

    def work(i):
        try:
            for _ in range(20):
                results[i] = tuned(xs[i])
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r, e in zip(results, expected):
        np.testing.assert_array_equal(r, e)
