#!/usr/bin/env python3
"""Compiles the cuda backend's kernels with the host g++ (-fsyntax-only), as
NVRTC will see them, so a typo or a type error in a .cu file is found on a
machine without a GPU.

What NVRTC sees is rebuilt the way the build makes it: the .cu files are
embedded by cmake/embed_text.cmake itself (which drops their `#include "..."`
lines), and each NVRTC program is the concatenation that the host code
passes to Module::compile (found in src/backends/cuda/*.cpp: kernels.cpp's
prelude + fixed + tensor_ops + half_ops, attention_kernels.cpp's attention
+ attention_entry). tests/lint/cuda_shim.h declares what NVRTC provides without headers.
Diagnostics name the .cu file and line, not the joined program's.

    cuda_kernels_check.py ROOT --cmake CMAKE FILE.cu...              # exit 1 on any error
    cuda_kernels_check.py ROOT --cmake CMAKE --self-test FILE.cu...  # breaks copies; exit 1
                                                                     # unless each is refused
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CUDA_DIR = "src/backends/cuda"
SHIM = "tests/lint/cuda_shim.h"
# NVRTC runs with --std=c++17 (cuda_api.cpp); warnings are errors here, and
# `#pragma unroll` is NVRTC's own.
CXX_FLAGS = ["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Wno-unknown-pragmas",
             "-Werror", "-fno-diagnostics-show-line-numbers", "-x", "c++"]
EMBEDDED = re.compile(r'const std::string_view (k\w+) = R"hone_embed\((.*?)\)hone_embed";', re.S)
COMPILE_CALL = re.compile(r"Module::compile\(")
TEXT_NAME = re.compile(r"kernel_text::(k\w+)|\b(\w+)\(\)")
# `const std::string& ew_prelude() { static const std::string s{kernel_text::kPrelude}; ...`
TEXT_FUNCTION = re.compile(
    r"const std::string& (\w+)\(\) \{\s*static const std::string s\{kernel_text::(k\w+)\};")


def embed(root, cmake, files, work):
    """The kernel texts exactly as the build embeds them: {kName: (text, file)}."""
    out = work / "kernel_text.cpp"
    subprocess.run([cmake, f"-DOUT={out}", "-DHEADER=backends/cuda/kernel_text.h",
                    "-DNAMESPACE=hone::cuda::kernel_text", "-DFILES=" + ";".join(map(str, files)),
                    "-P", str(root / "cmake/embed_text.cmake")], check=True)
    texts = dict((m.group(1), m.group(2)) for m in EMBEDDED.finditer(out.read_text()))
    by_name = {}
    for f in files:
        name = "k" + "".join(p[:1].upper() + p[1:] for p in Path(f).stem.split("_") if p)
        if name not in texts:
            sys.exit(f"cuda_kernels_check: {f} is not in embed_text.cmake's output as {name}")
        by_name[name] = (texts[name], Path(f))
    return by_name


def call_arguments(text, start):
    """The text between the parenthesis at `start` and its match."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


def programs(root):
    """The NVRTC programs built from embedded text alone: [(name, [kName...], host file)];
    and those that also take text made at run time: [(name, host file)]."""
    fixed, generated = [], []
    sources = sorted((root / CUDA_DIR).glob("*.cpp"))
    functions = {}
    for src in sources:
        functions.update(dict(TEXT_FUNCTION.findall(src.read_text())))
    for src in sources:
        text = src.read_text()
        for m in COMPILE_CALL.finditer(text):
            args = call_arguments(text, m.end() - 1)
            name = re.search(r'"(\w+)"\s*$', args)
            if not name:
                continue  # the definition of Module::compile itself
            source = args[args.index(",") + 1:name.start()]
            pieces, other = [], re.sub(r"\s", "", source)
            for t in TEXT_NAME.finditer(source):
                piece = t.group(1) or functions.get(t.group(2))
                if piece:
                    pieces.append(piece)
                    other = other.replace(re.sub(r"\s", "", t.group(0)), "", 1)
            # What is left once the texts are taken out: `+`, std::string(...) wrappers.
            other = re.sub(r"std::string\(\)|[+,]", "", other)
            rel = src.relative_to(root)
            if pieces and not other:
                fixed.append((name.group(1), pieces, rel))
            elif pieces:
                generated.append((name.group(1), pieces, rel))
    return fixed, generated


def line_map(original, embedded):
    """For each line of the embedded text, its line number in the original file
    (embedding only drops lines)."""
    orig = original.split("\n")
    lines, j = [], 0
    for line in embedded.split("\n"):
        while j < len(orig) and orig[j] != line:
            j += 1
        lines.append(j + 1 if j < len(orig) else 0)
        j += 1
    return lines


def check_program(root, cxx, name, pieces, texts, work):
    """Compiles one program; returns (ok, diagnostics with .cu file lines)."""
    source, spans = "", []
    for piece in pieces:
        text, path = texts[piece]
        spans.append((source.count("\n"), text, path))
        source += text
    unit = work / f"{name}.cu"
    unit.write_text(source)
    r = subprocess.run([cxx, *CXX_FLAGS, "-include", str(root / SHIM), str(unit)],
                       capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    maps = {}

    def where(m):
        line = int(m.group(1))
        for first, text, path in reversed(spans):
            if line > first:
                if path not in maps:
                    maps[path] = line_map(path.read_text(), text)
                k = line - first - 1
                at = maps[path][k] if k < len(maps[path]) else 0
                shown = os.path.relpath(path, root) if path.is_relative_to(root) else str(path)
                return f"{shown}:{at}" if at else m.group(0)
        return m.group(0)

    log = re.sub(re.escape(str(unit)) + r":(\d+)", where, r.stdout + r.stderr)
    log = log.replace(str(unit), f"NVRTC program '{name}'")
    return r.returncode == 0, log


def check(root, cxx, cmake, files, quiet=False):
    """Checks every program; returns the combined diagnostics, or '' when all compile."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        texts = embed(root, cmake, files, work)
        fixed, generated = programs(root)
        failures = []
        used = set()
        for name, pieces, host in fixed:
            missing = [p for p in pieces if p not in texts]
            if missing:
                failures.append(f"{host}: program '{name}' uses {', '.join(missing)}, "
                                "which no kernel file given here embeds")
                continue
            used.update(pieces)
            ok, log = check_program(root, cxx, name, pieces, texts, work)
            if not quiet:
                print(f"{'ok' if ok else 'FAILED'}: '{name}' ({host}): "
                      + " + ".join(texts[p][1].name for p in pieces))
            if not ok:
                failures.append(log)
        for name, pieces, host in generated:
            if not quiet:
                print(f"not checked: '{name}' ({host}) joins "
                      f"{', '.join(pieces)} to code made at run time")
        unused = sorted(set(texts) - used)
        if unused:
            failures.append("no NVRTC program found that compiles "
                            + ", ".join(str(texts[u][1]) for u in unused)
                            + ": add it to a Module::compile call, or teach this check")
        if not fixed:
            failures.append(f"no Module::compile call of embedded kernels found in {CUDA_DIR}")
        return "\n".join(failures)


# Breakages of copies of the kernels that the check must refuse, each with
# the file and text changed and what the diagnostic must name.
BREAKAGES = [
    ("a missing semicolon", "tensor_ops.cu", "bi = k;\n", "bi = k\n", "tensor_ops.cu:"),
    ("an undeclared identifier", "fixed.cu", "hone_offset(i, s.rank, s.dims, s.dst)",
     "hone_ofset(i, s.rank, s.dims, s.dst)", "'hone_ofset' was not declared"),
    ("a CUDA built-in misspelt", "fixed.cu", "__shfl_down_sync(", "__shfl_dwn_sync(",
     "'__shfl_dwn_sync' was not declared"),
    ("a type error", "half_ops.cu", "const uint2 w =", "const float w =", "half_ops.cu:"),
    ("a template argument too many", "attention_entry.cu", "hone_attn_simt<32>(p)",
     "hone_attn_simt<32, 1>(p)", "attention_entry.cu:"),
]


def self_test(root, cxx, cmake, files):
    """Runs the check on broken copies of the kernel files; each must fail,
    naming the copy's file and the line broken."""
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, file, old, new, expect in BREAKAGES:
            copies = Path(tmp) / "kernels"
            shutil.rmtree(copies, ignore_errors=True)
            copies.mkdir()
            paths = []
            for f in files:
                shutil.copy(f, copies / Path(f).name)
                paths.append(copies / Path(f).name)
            target = copies / file
            text = target.read_text()
            if old not in text:
                print(f"self-test: {file} no longer holds {old!r}; choose another breakage")
                bad += 1
                continue
            at = text.index(old)
            line = text.count("\n", 0, at) + 1
            target.write_text(text[:at] + new + text[at + len(old):])
            log = check(root, cxx, cmake, paths, quiet=True)
            named = f"{file}:{line}" in log and expect in log
            print(f"{'refused' if log else 'ACCEPTED'}: {what} at {file}:{line}"
                  + ("" if not log or named else f" (but the diagnostic lacks {file}:{line} "
                     f"or {expect!r})"))
            if not log or not named:
                bad += 1
                print(log)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("files", nargs="+", type=Path, help="the kernel files, in CMake's order")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    root = a.root.resolve()
    if a.self_test:
        bad = self_test(root, a.cxx, a.cmake, a.files)
        print(f"self-test: {len(BREAKAGES) - bad} of {len(BREAKAGES)} breakages refused as expected")
        return 1 if bad else 0
    log = check(root, a.cxx, a.cmake, a.files)
    if log:
        print(log)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
