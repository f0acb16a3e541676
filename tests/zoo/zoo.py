#!/usr/bin/python3
"""hone's model zoo: real architectures (registry.py) exported from PyTorch,
with random seeded weights (nothing is downloaded), each by either PyTorch
ONNX exporter, with seeded inputs and PyTorch's own outputs as ground truth.

  zoo.py list                               models (name, family, batch-1 points) one a line
  zoo.py export [NAME...] --exporter E --work DIR [--batches 1,32] [--keep-going]
        DIR/NAME/model.onnx, DIR/NAME/export.json (sha256, torch, opset, script
        hash), DIR/NAME/POINT/in/input_<i>.npy and DIR/NAME/POINT/torch/output_<i>.npy;
        cached: nothing is redone while export.json's stamp (registry.py and
        models*.py, torch and torchvision versions, exporter) is unchanged
  zoo.py points NAME [--batches 1,32]      the points (batch, sequence) to run, one a line
  zoo.py hash NAME --exporter E --work DIR/NAME  compare the export's SHA-256 with manifest.json
  zoo.py compare EXPECT_DIR GOT_DIR [--ort ORT_DIR]
        per output the relative L2 error of GOT against EXPECT (PyTorch), the
        bound, and ORT's error; exit 1 when outside the bound
  zoo.py pin --exporter E --work DIR [NAME...]  write the exports' hashes into manifest.json
  zoo.py summary WORK/results              zoo_test.sh's results as a table
  zoo.py check-manifest | self-test         the manifest lists registry.py's models; compare can fail
  zoo.py cells RESULTS.tsv OUT.json         one model's results as feature-matrix cells zoo.NAME/BACKEND
  zoo.py check-features FEATURES.json       the matrix's Zoo tab has a row per registry.py model, no other
  zoo.py has-dynamo [--version]             exit 0 where the dynamo exporter can run

Exporters: 'torchscript' is torch.onnx.export's tracer at opset 17 (the only
one torch 1.13 has); 'dynamo' is torch.onnx.export(..., dynamo=True) at opset
18, which needs torch >= 2.5. Call it with Debian's /usr/bin/python3, the
interpreter python3-torch installs for.
"""
import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
sys.path.insert(0, str(HERE))
from registry import (BY_NAME, MODELS, build_model, dims_at, export, make_inputs, points,  # noqa: E402
                      save_npy, seed_of, torch_outputs)


def script_hash():
    """What the exports depend on besides torch: registry.py and the models'
    files (every models*.py, so that a new one is covered without a change here)."""
    h = hashlib.sha256()
    for p in [HERE / "registry.py"] + sorted(HERE.glob("models*.py")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()




def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()





def package_version(name):
    """A package's __version__ from its version.py, without importing it (torch
    takes seconds to import, and a cached export needs only the versions)."""
    import importlib.util
    import re
    spec = importlib.util.find_spec(name)
    for folder in spec.submodule_search_locations or []:
        p = Path(folder) / "version.py"
        if p.exists():
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", p.read_text(), re.M)
            if m:
                return m.group(1)
    return __import__(name).__version__


def stamp(exporter):
    return dict(script=script_hash(), torch=package_version("torch"),
                torchvision=package_version("torchvision"), exporter=exporter)


def cmd_export(args):
    """Each model named into WORK/NAME (all of them without names). Exit 3 when
    an export failed (recorded in its export.json), 0 with --keep-going."""
    unknown = [n for n in args.names if n not in BY_NAME]
    if unknown:
        print("no model %s in the zoo (zoo.py list)" % ", ".join(unknown), file=sys.stderr)
        return 2
    rc = 0
    for name in args.names or [m["name"] for m in MODELS]:
        rc = max(rc, export_one(name, args.exporter, Path(args.work) / name, args.batches))
    return 0 if args.keep_going else rc


def export_one(name, exporter, work, batches):
    model = BY_NAME[name]
    meta_path = work / "export.json"
    want = stamp(exporter)
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if meta.get("stamp") != want or not (work / "model.onnx").exists():
        if "error" in meta and meta.get("stamp") == want:
            print("export of %s failed before with this script and torch: %s" % (name, meta["error"]))
            return 3
        import shutil
        for p in work.iterdir() if work.is_dir() else []:
            if p.is_dir():
                shutil.rmtree(p)
        work.mkdir(parents=True, exist_ok=True)
        # The example batch is 2 so that no batch-1 special case is traced in.
        ex_dims = dims_at(model, 2, model["seqs"][0])
        tmp = work / "model.onnx.tmp"
        try:
            module = build_model(model)
            example = [__import__("torch").from_numpy(a) for a in make_inputs(model, ex_dims, 0)]
            export(model, module, example, tmp, exporter)
        except Exception as e:  # recorded so the test can say why; not retried until the stamp changes
            msg = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
            meta_path.write_text(json.dumps(dict(stamp=want, error=msg), indent=1) + "\n")
            print("export of %s with %s failed: %s" % (name, exporter, msg))
            return 3
        os.replace(tmp, work / "model.onnx")
        import onnx
        m = onnx.load(str(work / "model.onnx"))
        meta = dict(stamp=want, sha256=sha256(work / "model.onnx"),
                    opset=max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
                    nodes=len(m.graph.node), ops=sorted({n.op_type for n in m.graph.node}), points={},
                    fixed_dims=fixed_dims(model, m))
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        print("exported %s (%s, %d nodes, sha256 %s)" % (name, exporter, meta["nodes"], meta["sha256"]))
    if "fixed_dims" not in meta:  # an export made before fixed dims were recorded
        import onnx
        meta["fixed_dims"] = fixed_dims(model, onnx.load(str(work / "model.onnx"), load_external_data=False))
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    module = None
    for tag, dims in points(model, [int(b) for b in batches.split(",")]):
        if tag in meta["points"] and (work / tag / "torch").is_dir():
            continue
        if point_skip(meta, dims):
            continue
        if module is None:
            module = build_model(model)
        arrays = make_inputs(model, dims, seed_of(name + "/" + tag))
        save_npy(work / tag / "in", "input", arrays)
        save_npy(work / tag / "torch", "output", torch_outputs(module, arrays))
        meta["points"][tag] = dims
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return 0


def fixed_dims(model, onnx_model):
    """{dim name: value} of the registry's symbolic dims that the exporter
    fixed in the graph's inputs (torch.export specializes a dim it cannot keep
    symbolic, as the dynamo exporter does with an LSTM's or GRU's sequence
    length): the export then runs only at that value."""
    fixed = {}
    graph_inputs = {i.name: i for i in onnx_model.graph.input}
    for spec in model["inputs"]:
        gi = graph_inputs.get(spec["name"])
        if gi is None:
            continue
        dims = gi.type.tensor_type.shape.dim
        for want, got in zip(spec["shape"], dims):
            if isinstance(want, str) and not got.dim_param and got.dim_value > 0:
                fixed[want] = got.dim_value
    return fixed


def point_skip(meta, dims):
    """Why a point cannot run on this export (a dim the exporter fixed to
    another value), or ""."""
    for name, value in (meta.get("fixed_dims") or {}).items():
        if name in dims and dims[name] != value:
            return "the %s exporter fixed %s to %d in this export (the model is exported at %s=%d)" % (
                meta["stamp"]["exporter"], name, value, name, value)
    return ""


def cmd_skip(args):
    """Prints why point TAG of the export in WORK cannot run (exit 0), or
    nothing (exit 1)."""
    meta = json.loads((Path(args.work) / "export.json").read_text())
    if "fixed_dims" not in meta:
        import onnx
        meta["fixed_dims"] = fixed_dims(BY_NAME[args.name], onnx.load(
            str(Path(args.work) / "model.onnx"), load_external_data=False))
    for tag, dims in points(BY_NAME[args.name], [int(b) for b in args.batches.split(",")]):
        if tag == args.tag and point_skip(meta, dims):
            print(point_skip(meta, dims))
            return 0
    return 1


def cmd_points(args):
    for tag, dims in points(BY_NAME[args.name], [int(b) for b in args.batches.split(",")]):
        print(tag)
    return 0


def load_manifest():
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {"models": {}}


def cmd_hash(args):
    """The export's SHA-256 against the pin for this exporter and torch version.
    Prints one line. Exit 0: equal. 2: nothing pinned for this torch version.
    1: different, and the zoo's scripts changed since the pin (whoever changed
    them re-pins: `zoo.py pin`). 3: different under the same scripts, so the
    exporter changed (a rebuilt torch of the same version): reported, and the
    caller warns, since the export is still checked against its own PyTorch
    outputs."""
    meta = json.loads((Path(args.work) / "export.json").read_text())
    pins = load_manifest()["models"].get(args.name, {}).get("sha256", {})
    key = "%s torch %s" % (args.exporter, meta["stamp"]["torch"])
    pin = pins.get(key)
    if pin is None:
        print("no hash pinned for %s (%s); this export is %s" % (args.name, key, meta["sha256"]))
        return 2
    if pin["sha256"] == meta["sha256"]:
        print("hash ok %s (%s)" % (args.name, key))
        return 0
    same = pin["script"] == meta["stamp"]["script"]
    print("HASH CHANGED %s (%s): pinned %s, exported %s, %s" % (
        args.name, key, pin["sha256"], meta["sha256"],
        "under the same scripts: the exporter changed" if same else "and the zoo's scripts changed since the pin"))
    return 3 if same else 1


def cmd_pin(args):
    man = load_manifest()
    names = args.names or [m["name"] for m in MODELS]
    for name in names:
        p = Path(args.work) / name / "export.json"
        if not p.exists():
            print("%s: not exported in %s" % (name, args.work), file=sys.stderr)
            continue
        meta = json.loads(p.read_text())
        entry = man["models"].setdefault(name, {})
        key = "%s torch %s" % (args.exporter, meta["stamp"]["torch"])
        if "error" in meta:
            entry.setdefault("export_failures", {})[key] = meta["error"]
            entry.get("sha256", {}).pop(key, None)
        else:
            entry.setdefault("sha256", {})[key] = dict(sha256=meta["sha256"], script=meta["stamp"]["script"])
            entry.get("export_failures", {}).pop(key, None)
    MANIFEST.write_text(json.dumps(man, indent=1, sort_keys=True) + "\n")
    return 0


def cmd_summary(args):
    """The results' lines (zoo_test.sh's .tsv files) as one table per backend:
    passed/failed per point, fallback nodes per model."""
    rows = []
    for f in sorted(Path(args.results).rglob("*.tsv")):
        rows += [l.rstrip("\n").split("\t") for l in f.read_text().splitlines() if l.strip()]
    backends = sorted({r[3] for r in rows}, key=lambda b: ["reference", "blas", "onednn", "aot"].index(b)
                      if b in ("reference", "blas", "onednn", "aot") else 9)
    print("| model | point | " + " | ".join(backends) + " |")
    print("|---|---|" + "---|" * len(backends))
    cells, total = {}, 0.0
    for r in rows:
        cells[(r[0], r[2], r[3])] = r
        total += float(r[5])
    for key in sorted({(r[0], r[2]) for r in rows}, key=lambda k: ([m["name"] for m in MODELS].index(k[0])
                                                                   if k[0] in BY_NAME else 999, k[1])):
        line = []
        for b in backends:
            r = cells.get(key + (b,))
            line.append("" if r is None else "skipped" if r[4] == "skipped" else "%s %ss fb %s" % (
                "ok" if r[4] == "passed" else "FAIL", r[5], r[6]))
        print("| %s | %s | %s |" % (key[0], key[1], " | ".join(line)))
    for b in backends:
        mine = [r for r in rows if r[3] == b and r[4] != "skipped"]
        ok = sum(r[4] == "passed" for r in mine)
        fb = {r[0]: r[6] for r in mine}
        print("%s: %d/%d passed; models with fallbacks: %d; fallback nodes: %s" % (
            b, ok, len(mine), sum(v not in ("0", "?") for v in fb.values()),
            sum(int(v) for v in fb.values() if v.isdigit())))
    print("hone run seconds in all: %.0f" % total)
    return 0


# The bound (why): PyTorch and ONNX Runtime compute the same exported function
# with different kernels; their relative L2 distance is the model's own
# float32 spread, from 1e-7 on a shallow net to 1e-4 and more on a deep one
# with random weights. hone passes when its relative L2 error against
# PyTorch is at most max(4 x that spread, 1e-4) (tests/corpus/corpus.js uses
# the same rule against ORT's two optimization levels). Without ORT the
# bound is the floor. Integer outputs must be equal, or equal to ORT's where
# ORT's differ from PyTorch's (a tie decided the other way); NaN where PyTorch
# has NaN.
FACTOR, FLOOR = 4.0, 1e-4


def rel_l2(got, want):
    import numpy as np
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    num = np.sqrt(np.sum((g - w) ** 2))
    return 0.0 if num == 0 else float(num / max(np.sqrt(np.sum(w * w)), 1e-30))


def read_outputs(folder):
    import numpy as np
    out, i = [], 0
    while (Path(folder) / ("output_%d.npy" % i)).exists():
        out.append(np.load(Path(folder) / ("output_%d.npy" % i)))
        i += 1
    return out


def comparison(expect_dir, got_dir, ort_dir=None):
    import numpy as np
    want, got = read_outputs(expect_dir), read_outputs(got_dir)
    ort = read_outputs(ort_dir) if ort_dir and Path(ort_dir).is_dir() else None
    rows, ok = [], len(want) == len(got) and len(want) > 0
    if not want:
        rows.append(dict(problem="no PyTorch outputs in %s" % expect_dir))
    for i, w in enumerate(want):
        row = dict(output=i)
        spread = rel_l2(ort[i], w) if ort is not None and i < len(ort) and ort[i].shape == w.shape else None
        row["bound"] = max(FACTOR * spread, FLOOR) if spread is not None else FLOOR
        if spread is not None:
            row["ort"] = spread
        if i >= len(got):
            row["problem"] = "missing"
        elif tuple(got[i].shape) != tuple(w.shape):
            row["problem"] = "shape %s vs PyTorch %s" % (list(got[i].shape), list(w.shape))
        elif np.issubdtype(w.dtype, np.floating):
            nan = int(np.sum(np.isnan(got[i]) != np.isnan(w)))
            finite = w[np.isfinite(w)]
            if finite.size and float(np.ptp(finite)) == 0.0:
                row["problem"] = "PyTorch's output is constant (%g): comparing it would measure nothing" % finite[0]
            elif nan:
                row["problem"] = "%d NaN where PyTorch has none (or the reverse)" % nan
            else:
                row["rel_l2"] = rel_l2(np.nan_to_num(got[i]), np.nan_to_num(w))
                if row["rel_l2"] > row["bound"]:
                    row["problem"] = "outside the bound"
        else:
            row["rel_l2"] = float(np.sum(got[i] != w))
            # A tie: where PyTorch's own order or choice between (nearly) equal
            # floats decides an integer (a detector's labels sorted by score),
            # ONNX Runtime may decide it the other way; an output equal to
            # ORT's, element for element, is one of the right answers.
            if row["rel_l2"] and ort is not None and i < len(ort) and np.array_equal(ort[i], got[i]):
                row["tie"] = "equal to ORT's, which differs from PyTorch's as much"
            elif row["rel_l2"]:
                row["problem"] = "%d elements differ" % row["rel_l2"]
        ok = ok and "problem" not in row
        rows.append(row)
    return ok, rows


def cmd_compare(args):
    ok, rows = comparison(args.expect, args.got, args.ort)
    parts = []
    for r in rows:
        s = "out%s: " % r.get("output", "")
        if "rel_l2" in r:
            s += "rel L2 %.2e (bound %.2e" % (r["rel_l2"], r["bound"]) + (
                ", ORT %.2e)" % r["ort"] if "ort" in r else ", no ORT)")
        if "problem" in r:
            s += (" " if "rel_l2" in r else "") + r["problem"]
        elif "tie" in r:
            s += " %d elements differ, %s" % (r["rel_l2"], r["tie"])
        parts.append(s)
    print("; ".join(parts))
    return 0 if ok else 1


def cmd_check_manifest(args):
    """manifest.json names each model of registry.py, and no other."""
    have, want = set(load_manifest()["models"]), set(BY_NAME)
    for n in sorted(want - have):
        print("%s is in registry.py but not in manifest.json (zoo.py pin, or add it by hand)" % n)
    for n in sorted(have - want):
        print("%s is in manifest.json but not in registry.py" % n)
    return 0 if have == want else 1


def cmd_cells(args):
    """One model's zoo_test.sh results (every point, every backend) as the
    feature matrix's cells zoo.NAME/BACKEND, for `hone-matrix update`: failed
    when a point failed, skipped when every point was, else passed; the reason
    names the exporter, each point's outcome and the nodes left to the
    reference."""
    import datetime
    rows = [l.split("\t") for l in Path(args.tsv).read_text().splitlines() if l.strip()]
    if not rows or any(len(r) != 8 for r in rows):
        print("%s: expected zoo_test.sh's lines of 8 tab-separated fields" % args.tsv, file=sys.stderr)
        return 1
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    known = load_manifest()["models"].get(rows[0][0], {}).get("known_failures", {})
    cells = {}
    for backend in dict.fromkeys(r[3] for r in rows):
        mine = [r for r in rows if r[3] == backend]
        name, exporter = mine[0][0], mine[0][1]
        statuses = {r[4] for r in mine}
        status = "failed" if "failed" in statuses else "skipped" if statuses == {"skipped"} else "passed"
        fb = mine[0][6]
        head = "%s export" % exporter
        if fb not in ("0", "?") and backend != "reference":
            head += ", %s node(s) on the reference" % fb
        points = "; ".join(r[7] if r[2] == "-" else "%s %s: %s" % (r[2], r[4], r[7]) for r in mine)
        why = known.get(backend)
        if status == "failed" and why:
            head += " (known failure: %s)" % why
        cells["zoo.%s/%s" % (name, backend)] = {"status": status, "reason": "%s. %s" % (head, points),
                                                  "tests": ["zoo_%s" % name], "updated": when}
    Path(args.out).write_text(json.dumps({"cells": cells}, indent=1) + "\n")
    return 0


def cmd_check_features(args):
    """The feature matrix's Zoo tab has one row per registry.py model, in its
    order, and no other, so every zoo test's cells have a place on the page."""
    features = json.loads(Path(args.features).read_text())
    tab = next((t for t in features.get("tabs", []) if t.get("id") == "zoo"), None)
    rows = [r["id"] for r in tab["rows"]] if tab else []
    want = [m["name"] for m in MODELS]
    if rows != want:
        print("features.json's zoo tab rows %s differ from registry.py's models %s (missing %s, extra %s)" % (
            "absent" if tab is None else len(rows), len(want), sorted(set(want) - set(rows)),
            sorted(set(rows) - set(want))))
        return 1
    print("%d zoo rows match registry.py" % len(rows))
    return 0


def cmd_self_test(args):
    """The comparison fails where it should: outputs 1% off, a wrong shape, a
    NaN, a missing output and a differing integer; identical ones pass, and
    ORT's spread widens the bound."""
    import tempfile
    import numpy as np
    a = (np.sin(np.arange(64)) + 2).astype(np.float32)
    cases = {"same": ([a], True, None), "off": ([a * 1.01], False, None), "shape": ([a[:32]], False, None),
             "nan": ([np.where(np.arange(64) == 3, np.nan, a).astype(np.float32)], False, None),
             "missing": ([], False, None), "int": ([np.arange(64) + (np.arange(64) == 5)], False, None),
             "spread": ([a * 1.001], True, [a * 1.0005]), "nospread": ([a * 1.001], False, None),
             "constant": ([np.zeros(64, np.float32)], False, None),
             # Integers that differ from PyTorch's pass only where they are ORT's.
             "int_tie": ([np.arange(64) + (np.arange(64) == 5)], True, [np.arange(64) + (np.arange(64) == 5)]),
             "int_not_ort": ([np.arange(64) + (np.arange(64) == 5)], False, [np.arange(64) + (np.arange(64) == 6)])}
    bad = 0
    with tempfile.TemporaryDirectory() as t:
        t = Path(t)
        save_npy(t / "expect", "output", [a])
        save_npy(t / "expect_int", "output", [np.arange(64)])
        save_npy(t / "expect_zero", "output", [np.zeros(64, np.float32)])
        for name, (got, want, ort) in cases.items():
            save_npy(t / name, "output", got)
            (t / name).mkdir(exist_ok=True)
            if ort is not None:
                save_npy(t / (name + "_ort"), "output", ort)
            expect = {"int": "expect_int", "int_tie": "expect_int", "int_not_ort": "expect_int",
                      "constant": "expect_zero"}.get(name, "expect")
            ok, rows = comparison(t / expect, t / name,
                                  t / (name + "_ort") if ort is not None else None)
            if ok != want:
                print("FAIL: '%s' %s: %s" % (name, "passed" if ok else "failed", rows))
                bad = 1
    # A dim the exporter fixed: points at other values are skipped with the reason.
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", 16])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, ["batch", 16])
    g = helper.make_graph([helper.make_node("Identity", ["input_ids"], ["y"])], "g", [x], [y])
    spec = dict(inputs=[dict(name="input_ids", shape=["batch", "seq"])])
    fixed = fixed_dims(spec, helper.make_model(g))
    meta = dict(stamp=dict(exporter="dynamo"), fixed_dims=fixed)
    if fixed != {"seq": 16} or point_skip(meta, {"batch": 1, "seq": 16}) or \
            "fixed seq to 16" not in point_skip(meta, {"batch": 1, "seq": 128}):
        print("FAIL: fixed dims %s; skip at seq 128: '%s'" % (fixed, point_skip(meta, {"batch": 1, "seq": 128})))
        bad = 1
    print("comparison self-test: %s" % ("failed" if bad else "ok"))
    return bad


def cmd_has_dynamo(args):
    """Exit 0 where torch.onnx.export(..., dynamo=True) can run: torch >= 2.5
    and onnxscript (read without importing torch)."""
    import importlib.util
    version = package_version("torch")
    if args.version:
        print(version)
        return 0
    major_minor = tuple(int(x) for x in version.split("+")[0].split(".")[:2])
    return 0 if major_minor >= (2, 5) and importlib.util.find_spec("onnxscript") else 1


def cmd_list(args):
    for m in MODELS:
        print("%s\t%s\t%s" % (m["name"], m["family"], ",".join(t for t, _ in points(m, [1]))))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list")
    p.set_defaults(fn=cmd_list)
    p = sub.add_parser("export")
    p.add_argument("names", nargs="*", metavar="NAME")
    p.add_argument("--keep-going", action="store_true")
    p.add_argument("--exporter", default="torchscript", choices=("torchscript", "dynamo"))
    p.add_argument("--work", required=True)
    p.add_argument("--batches", default="1")
    p.set_defaults(fn=cmd_export)
    p = sub.add_parser("points")
    p.add_argument("name", choices=sorted(BY_NAME))
    p.add_argument("--batches", default="1")
    p.set_defaults(fn=cmd_points)
    p = sub.add_parser("skip")
    p.add_argument("name", choices=sorted(BY_NAME))
    p.add_argument("tag")
    p.add_argument("--work", required=True)
    p.add_argument("--batches", default="1")
    p.set_defaults(fn=cmd_skip)
    p = sub.add_parser("hash")
    p.add_argument("name", choices=sorted(BY_NAME))
    p.add_argument("--exporter", default="torchscript", choices=("torchscript", "dynamo"))
    p.add_argument("--work", required=True)
    p.set_defaults(fn=cmd_hash)
    p = sub.add_parser("pin")
    p.add_argument("names", nargs="*")
    p.add_argument("--exporter", default="torchscript", choices=("torchscript", "dynamo"))
    p.add_argument("--work", required=True, help="the exporter's folder (one sub-folder per model)")
    p.set_defaults(fn=cmd_pin)
    p = sub.add_parser("summary")
    p.add_argument("results", help="WORK/results (zoo_test.sh's .tsv files)")
    p.set_defaults(fn=cmd_summary)
    p = sub.add_parser("has-dynamo")
    p.add_argument("--version", action="store_true")
    p.set_defaults(fn=cmd_has_dynamo)
    p = sub.add_parser("check-manifest")
    p.set_defaults(fn=cmd_check_manifest)
    p = sub.add_parser("cells")
    p.add_argument("tsv")
    p.add_argument("out")
    p.set_defaults(fn=cmd_cells)
    p = sub.add_parser("check-features")
    p.add_argument("features")
    p.set_defaults(fn=cmd_check_features)
    p = sub.add_parser("self-test")
    p.set_defaults(fn=cmd_self_test)
    p = sub.add_parser("compare")
    p.add_argument("expect")
    p.add_argument("got")
    p.add_argument("--ort")
    p.set_defaults(fn=cmd_compare)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
