"""hone.Pipeline from Python: stages chained by name, a stage tuned on what it
really receives, a JIT stage tuning itself, save and load, the inspection
report (issue 31, item 4)."""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import helper as oh

import hone

MODELS = os.path.join(os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "models")
MLP = os.path.join(MODELS, "mlp.onnx")
QUICK = dict(backends=["onednn"], threads=1, cache=False)


def head():
    """probs [batch, 8] -> logp = Log(probs): a stage that reads the MLP's output."""
    t = oh.make_tensor_value_info
    g = oh.make_graph([oh.make_node("Log", ["probs"], ["logp"])], "head",
                      [t("probs", onnx.TensorProto.FLOAT, ["batch", 8])],
                      [t("logp", onnx.TensorProto.FLOAT, ["batch", 8])])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])


def xs(batches, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (b, 16)).astype(np.float32) for b in batches]


def test_stages_chain_by_name_and_tune_on_what_they_receive(tmp_path):
    p = hone.Pipeline()
    p.add_stage("mlp", MLP)
    p.add_stage("head", head().SerializeToString())
    assert p.placement() == [("mlp", "reference"), ("head", "reference")]
    x = xs((3,))[0]
    out = p.run({"x": x})
    assert set(out) == {"probs", "logp"}
    np.testing.assert_allclose(out["logp"], np.log(out["probs"]), rtol=1e-5)
    events = []
    p.tune_stage("head", [{"x": x} for x in xs((1, 4))], progress=events.append, **QUICK)
    assert dict(p.placement())["mlp"] == "reference"
    assert any(e["step"] == "done" for e in events)
    states = {c["name"]: c["state"] for c in p.inspect()["root"]["children"]}
    assert states == {"mlp": "reference", "head": "tuned"}
    again = p.run({"x": x})
    np.testing.assert_allclose(again["logp"], out["logp"], rtol=1e-5, atol=1e-6)

    p.save(str(tmp_path / "pipe"))
    assert json.loads((tmp_path / "pipe" / "pipeline.json").read_text())
    fresh = hone.Pipeline()
    fresh.add_stage("mlp", MLP)
    fresh.add_stage("head", head())
    assert fresh.load(str(tmp_path / "pipe")) == 1
    assert fresh.placement() == p.placement()
    np.testing.assert_allclose(fresh.run({"x": x})["logp"], out["logp"], rtol=1e-5, atol=1e-6)


def test_jit_stage_tunes_itself_and_the_report_shows_it(tmp_path):
    p = hone.Pipeline()
    p.add_stage("mlp", MLP)
    p.add_jit_stage("head", head(), mode="eager", min_samples=3, background=False, **QUICK)
    for x in xs((1, 4, 2, 3)):
        p.run({"x": x})
    p.wait()
    report = p.inspect()["root"]
    assert report["kind"] == "pipeline" and report["calls"] == 4
    stages = {c["name"]: c for c in report["children"]}
    assert stages["mlp"]["state"] == "reference"
    assert (stages["head"]["mode"], stages["head"]["state"]) == ("eager", "tuned")
    assert stages["head"]["calls"] == 4
    p.save_report(str(tmp_path / "pipe.html"))
    assert json.loads((tmp_path / "pipe.json").read_text())["root"]["children"][1]["name"] == "head"
    assert (tmp_path / "pipe.html").stat().st_size > 0


def test_errors_name_the_stage():
    p = hone.Pipeline()
    p.add_stage("head", head())
    with pytest.raises(hone.Error, match="head"):
        p.add_stage("head", head())
    with pytest.raises(hone.Error, match="probs"):
        p.run({"x": xs((1,))[0]})
    with pytest.raises(hone.Error, match="nope"):
        p.tune_stage("nope", [{"probs": np.ones((1, 8), np.float32)}])
    with pytest.raises(TypeError, match="dict"):
        p.run([np.ones((1, 8), np.float32)])
