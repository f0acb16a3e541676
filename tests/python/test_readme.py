"""The README's Python examples run as written: each ```python block of
README.md (tuning, JIT, pipeline, export and signing, progress and logging)
runs in a fresh process from a scratch folder holding the checkout's models/
(issue 31, item 4: the examples in the README run from Python)."""
import os
import re
import subprocess
import sys

import pytest

import hone

SOURCE = os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def blocks():
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def name(code):
    """A block's id: its first comment ('# JIT: ...' -> 'JIT'), else its position."""
    m = re.search(r"^# ([\w -]+?):", code, flags=re.M)
    return m.group(1) if m else None


def test_readme_has_the_examples():
    names = {name(b) for b in blocks()}
    assert {"JIT", "Pipeline", "Export and signing", "Progress and logging"} <= names


@pytest.mark.parametrize("code", blocks(), ids=lambda c: name(c) or "tune")
def test_readme_example_runs(code, tmp_path):
    os.symlink(os.path.join(os.path.abspath(SOURCE), "models"), tmp_path / "models")
    # The hone this test imported, wherever the snippet runs from.
    here = os.path.dirname(os.path.dirname(os.path.abspath(hone.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
