#!/usr/bin/env python3
"""The limits a newcomer can rely on in src/ (issue 28's "done when"):

- no source file over 600 lines;
- no class or struct over 250 lines (from its opening line to its closing brace);
- no CUDA source in C++ string literals: kernels live in .cu files that the
  build embeds (a raw string holding __global__ or __device__ is refused).

    tests/lint/source_limits.py [ROOT]     # exit 1 naming every file over a limit
"""
import re
import sys
from pathlib import Path

MAX_FILE_LINES = 600
MAX_CLASS_LINES = 250
SUFFIXES = {".cpp", ".h", ".cc", ".hpp", ".c"}

CLASS_OPEN = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(class|struct)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)(?:\s+final)?\b[^;()]*\{")
RAW_STRING = re.compile(r'R"([^(\s]*)\((.*?)\)\1"', re.S)


def strip_comments_and_strings(text):
    """Blanks comments, string and char literals, keeping line breaks, so
    braces inside them are not counted."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW_STRING.match(text, i)
            if not m:
                out.append(c)
                i += 1
                continue
            out.append('""' + "\n" * m.group(0).count("\n"))
            i = m.end()
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_classes(text):
    lines = strip_comments_and_strings(text).split("\n")
    found = []
    for start, line in enumerate(lines):
        m = CLASS_OPEN.match(line)
        if not m:
            continue
        depth, end = 0, None
        for k in range(start, len(lines)):
            seg = lines[k] if k != start else line[m.end() - 1:]
            for ch in seg:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        end = k
                        break
            if end is not None:
                break
        if end is not None and end - start + 1 > MAX_CLASS_LINES:
            found.append((m.group(2), start + 1, end - start + 1))
    return found


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    problems = []
    for path in sorted((root / "src").rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8", errors="replace")
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if n > MAX_FILE_LINES:
            problems.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES})")
        for name, line, size in long_classes(text):
            problems.append(f"{rel}:{line}: class {name} is {size} lines (at most {MAX_CLASS_LINES})")
        if path.suffix != ".c":
            for m in RAW_STRING.finditer(text):
                if re.search(r"\b__(global|device)__\b", m.group(2)):
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{rel}:{line}: CUDA source in a C++ string literal "
                                    "(put kernels in a .cu file the build embeds)")
                    break
    if problems:
        print(f"source limits: {len(problems)} problem(s):")
        for p in problems:
            print("  " + p)
        return 1
    print("source limits: every file in src/ within 600 lines, every class within 250, "
          "no CUDA source in string literals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
