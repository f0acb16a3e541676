"""hone.export, hone.generate_key, hone.sign and hone.verify from Python:
deployable artifacts from a Model or a package, signed packages, and an
altered package caught (issue 31, item 4)."""
import json
import os
import zipfile

import numpy as np
import pytest

import hone

MODELS = os.path.join(os.environ.get("HONE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "models")
MLP = os.path.join(MODELS, "mlp.onnx")


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    d = tmp_path_factory.mktemp("pkg")
    rng = np.random.default_rng(0)
    samples = [{"x": rng.uniform(-1, 1, (b, 16)).astype(np.float32)} for b in (1, 4)]
    m = hone.tune(MLP, samples, backends=["reference"], strategy="first-wins", threads=1, cache=False)
    m.save(str(d / "mlp.hone"))
    return m, d / "mlp.hone"


def test_export_a_model_and_a_package(package, tmp_path):
    m, pkg = package
    rec = hone.export(m, str(tmp_path / "a"), format="onnx")
    assert rec["format"] == "onnx" and rec["path"] == str(tmp_path / "a")
    files = dict(rec["files"])
    assert "model.onnx" in files and len(files["model.onnx"]) == 64  # SHA-256 hex
    deploy = json.loads((tmp_path / "a" / "deploy.json").read_text())
    assert deploy["format"] == "onnx"
    # From the package's path: the same graph, so the same bytes.
    hone.export(str(pkg), str(tmp_path / "b"), format="onnx")
    assert (tmp_path / "a" / "model.onnx").read_bytes() == (tmp_path / "b" / "model.onnx").read_bytes()
    # The artifact is plain ONNX: hone imports it again.
    assert hone.inspect(str(tmp_path / "b" / "model.onnx"))["inputs"][0]["name"] == "x"
    with pytest.raises(hone.Error):
        hone.export(m, str(tmp_path / "a"), format="onnx")  # never overwrites files
    with pytest.raises(hone.Error, match="nope.hone"):
        hone.export(str(tmp_path / "nope.hone"), str(tmp_path / "c"))


def test_export_native_so_with_aot(package, tmp_path):
    aot = next((b for b in hone.backends() if b["name"] == "aot"), None)
    if aot is None or not aot["available"]:
        pytest.skip(f"aot is not available here: {aot and aot['unavailable_reason']}")
    m, _ = package
    rec = hone.export(m, str(tmp_path / "so"), format="native-so", backend="aot")
    assert rec["format"] == "native-so" and rec["produced_by"] == "aot"
    assert any(f.endswith(".so") for f, _ in rec["files"])


def test_sign_and_verify(package, tmp_path, monkeypatch):
    monkeypatch.setenv("HONE_TRUSTED_KEYS", str(tmp_path / "no-keys"))  # no folder keys
    _, original = package
    pkg = tmp_path / "mlp.hone"
    pkg.write_bytes(original.read_bytes())
    assert hone.verify(str(pkg)) == {"signed": False, "trusted": False, "key_id": "", "trusted_by": ""}
    key = tmp_path / "me.key"
    key_id = hone.generate_key(str(key))
    assert len(key_id) == 16 and (tmp_path / "me.key.pub").exists()
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert hone.sign(str(pkg), str(key)) == key_id
    s = hone.verify(str(pkg))
    assert s["signed"] and not s["trusted"] and s["key_id"] == key_id
    s = hone.verify(str(pkg), trusted_keys=[str(tmp_path / "me.key.pub")])
    assert s["trusted"] and s["trusted_by"].endswith("me.key.pub")
    assert hone.load(str(pkg)).backend == "reference"  # a signed package still loads
    with pytest.raises(hone.Error, match="exist"):
        hone.generate_key(str(key))  # never overwrites a key

    # Altered after signing: a stored entry's bytes change, its checksum no longer matches.
    altered = tmp_path / "altered.hone"
    with zipfile.ZipFile(pkg) as src, zipfile.ZipFile(altered, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "manifest.json":
                data += b" "
            dst.writestr(info, data)
    with pytest.raises(hone.Error) as e:
        hone.verify(str(altered), trusted_keys=[str(tmp_path / "me.key.pub")])
    assert e.value.code == "corrupt"
