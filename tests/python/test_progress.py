"""Progress, logging, reports and Ctrl-C from Python: hone.tune(progress=...)
sees every step, hone's log reaches the logger "hone", the tuning report is a
dict and a page, and a KeyboardInterrupt (raised by the callback, or a real
SIGINT while hone runs without the GIL) cancels the tune and leaves no
half-written files (issue 31, item 4)."""
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import hone

MODELS = os.path.join(os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "models")
MLP = os.path.join(MODELS, "mlp.onnx")
CANDIDATES = ["aot", "onednn", "blas"]


def samples(batches=(1, 4), seed=0):
    rng = np.random.default_rng(seed)
    return [{"x": rng.uniform(-1, 1, (b, 16)).astype(np.float32)} for b in batches]


def leftovers(*dirs):
    """Files a cancelled tune must not leave: anything in its temporary folder,
    and temporaries or journals beside the tuning cache."""
    out = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in files:
                if d.endswith("tmp") or "tmp" in f or f.endswith(("-journal", "-wal")):
                    out.append(os.path.join(root, f))
    return out


def test_progress_sees_every_step():
    events = []
    m = hone.tune(MLP, samples(), backends=["reference", "onednn"], threads=1, cache=False,
                  progress=events.append)
    assert m.backend in ("reference", "onednn")
    onednn = [e for e in events if e["candidate"] == "onednn"]
    steps = [e["step"] for e in onednn]
    assert steps[:2] == ["build", "check"] and steps[-1] == "done"
    assert "profile batch 1" in steps and "profile batch 4" in steps
    fractions = [e["fraction"] for e in onednn]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert {e["candidate_count"] for e in events} == {events[0]["candidate_count"]}
    assert set(events[0]) == {"candidate", "step", "candidate_index", "candidate_count", "fraction", "eta_s"}


def test_report_as_a_dict_and_a_page(tmp_path):
    m = hone.tune(MLP, samples(), backends=["reference", "onednn"], threads=1, cache=False)
    report = m.report
    assert report["decision"]["backend"] == m.backend
    assert {c["backend"] for c in report["candidates"]} >= {"onednn"}
    page = tmp_path / "mlp.report.html"
    m.save_report(str(page))
    html = page.read_text()
    assert html.lower().startswith("<!doctype html") and "<svg" in html and m.backend in html
    assert json.loads((tmp_path / "mlp.report.json").read_text()) == report
    with pytest.raises(hone.Error, match="json"):
        m.save_report(str(tmp_path / "r.json"))
    assert sorted(os.listdir(tmp_path)) == ["mlp.report.html", "mlp.report.json"]


def test_log_reaches_the_python_logger_hone(caplog):
    with caplog.at_level(logging.DEBUG, logger="hone"):
        hone.tune(MLP, None, backends="reference", strategy="first-wins", threads=1, cache=False)
    mine = [r for r in caplog.records if r.name == "hone"]
    assert any(r.levelno == logging.INFO and "chose reference" in r.getMessage() for r in mine)
    assert any(r.levelno == logging.DEBUG and "optimize 'mlp'" in r.getMessage() for r in mine)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hone"):
        hone.tune(MLP, samples(), backends="reference", strategy="first-wins", threads=1, cache=False)
    assert not [r for r in caplog.records if r.name == "hone" and r.levelno < logging.WARNING]


def test_keyboard_interrupt_from_the_callback_cancels_cleanly(tmp_path, monkeypatch):
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("HONE_CACHE_DIR", str(cache))
    seen = []

    def progress(e):
        seen.append((e["candidate"], e["step"]))
        if e["candidate"] != "reference" and e["step"] == "check":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        hone.tune(MLP, samples(), backends=CANDIDATES, threads=1, progress=progress)
    # Nothing ran after the interrupt: the tune stopped at its next check.
    assert seen[-1][1] == "check" and seen[-1][0] != "reference"
    assert leftovers(str(tmp), str(cache)) == []
    # hone is fine afterwards.
    assert hone.tune(MLP, samples(), backends="reference", strategy="first-wins", threads=1,
                     cache=False).backend == "reference"


def test_other_exceptions_from_the_callback_cancel_and_propagate():
    def progress(e):
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        hone.tune(MLP, samples(), backends=["onednn"], threads=1, cache=False, progress=progress)


SIGINT_SCRIPT = r"""
import os, signal, sys, threading
import numpy as np
import hone

building = threading.Event()

def progress(e):
    if e["candidate"] != "reference" and e["step"] == "build":
        building.set()

def interrupt():  # Ctrl-C, while the main thread is inside hone without the GIL
    building.wait()
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
rng = np.random.default_rng(0)
samples = [{"x": rng.uniform(-1, 1, (b, 16)).astype(np.float32)} for b in (1, 4)]
try:
    hone.tune(sys.argv[1], samples, backends=sys.argv[2].split(","), threads=1, progress=progress)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def test_sigint_during_tune_cancels_cleanly(tmp_path):
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), HONE_CACHE_DIR=str(cache))
    r = subprocess.run([sys.executable, "-c", SIGINT_SCRIPT, MLP, ",".join(CANDIDATES)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.strip() == "interrupted"
    assert leftovers(str(tmp), str(cache)) == []
