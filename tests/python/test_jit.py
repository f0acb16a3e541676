"""hone.jit from Python: the three modes over the C++ JitModel (calls recorded,
the tune on the recorded calls, the tuned model swapped in) and the inspection
report as a dict and as a page (issue 31, item 4)."""
import gc
import json
import os

import numpy as np
import pytest

import hone

MODELS = os.path.join(os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "models")
MLP = os.path.join(MODELS, "mlp.onnx")
QUICK = dict(backends=["onednn"], threads=1, cache=False)


def xs(batches, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (b, 16)).astype(np.float32) for b in batches]


def test_deferred_records_calls_then_tunes_on_them():
    m = hone.jit(MLP, mode="deferred", **QUICK)
    assert (m.mode, m.state, m.backend, m.tuned) == ("deferred", "recording", "reference", None)
    before = [m(x) for x in xs((1, 4, 2))]
    assert m.recorded == 3
    m.tune_now()
    assert m.state == "tuned" and m.tuning_error is None
    tuned = m.tuned
    assert isinstance(tuned, hone.Model) and tuned.backend == m.backend
    # Tuned on what the calls really were: the batch bounds are the batch sizes seen.
    assert tuned.inputs[0]["bounds"]["batch"][0] == 1 and tuned.inputs[0]["bounds"]["batch"][2] == 4
    assert tuned.report["decision"]["backend"] == m.backend
    for x, y in zip(xs((1, 4, 2)), before):
        np.testing.assert_allclose(m(x), y, rtol=1e-4, atol=1e-6)
    assert m.recorded == 3  # no longer recording
    with pytest.raises(hone.Error, match="started|tune"):
        m.tune_now()
    # The tuned model outlives the JitModel it came from.
    del m
    gc.collect()
    assert tuned(xs((2,))[0]).shape == (2, 8)


def test_eager_tunes_after_min_samples_calls():
    m = hone.jit(MLP, mode="eager", min_samples=3, background=False, **QUICK)
    for x in xs((1, 4)):
        m(x)
    assert m.state == "recording"
    m(x=xs((2,))[0])  # the third call starts the tune, inside the call
    assert m.state == "tuned"
    out = m.infer({"x": xs((3,))[0]})
    probs = out["probs"] if isinstance(out, dict) else out
    assert probs.shape == (3, 8)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    m(xs((9,))[0])  # outside the tuned bounds: still runs, on the reference
    assert m.out_of_bounds_calls == 1


def test_deferred_tune_in_the_background_at_the_next_call():
    m = hone.jit(MLP, mode="deferred", **QUICK)
    for x in xs((1, 4)):
        m(x)
    m.tune_deferred()
    m(xs((2,))[0])  # starts the background tune
    m.wait()
    assert m.state == "tuned"


def test_inspect_mode_keeps_the_report_and_never_tunes(tmp_path):
    m = hone.jit(MLP, mode="inspect")
    for x in xs((1, 4, 2, 4)):
        m(x)
    with pytest.raises(hone.Error):
        m.tune_now()
    report = m.inspect()
    assert report["format"] == "hone-inspection"
    root = report["root"]
    assert (root["mode"], root["state"], root["calls"], root["backend"]) == ("inspect", "inspecting", 4, "reference")
    assert root["samples_recorded"] == 0
    x_seen = next(leaf for leaf in root["inputs"] if leaf["path"] == "x")
    assert x_seen["shapes"] == [[1, 16], [4, 16], [2, 16]] and x_seen["varied_axes"] == [0]
    page = tmp_path / "run.html"
    m.save_report(str(page))
    assert "<html" in page.read_text().lower()
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["root"]["calls"] == 4


def test_bad_arguments():
    with pytest.raises(hone.Error, match="eager"):
        hone.jit(MLP, mode="sometimes")
    m = hone.jit(MLP, mode="inspect")
    with pytest.raises(TypeError, match="takes 1 input"):
        m()
    with pytest.raises(TypeError, match="f64"):
        m(np.zeros((1, 16)))
    with pytest.raises(hone.Error):
        hone.jit(MLP, mode="eager").tune_deferred()
