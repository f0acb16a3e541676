#!/usr/bin/env bash
# `pip install .` as the README says, into a fresh virtual environment, then
# hone used from there: `import hone`, `python3 -m hone --help`, the `hone`
# script, the stubs and py.typed installed, and the extension holding no path
# into the build tree. Offline (--no-index; the backend needs nothing from
# PyPI). The backend builds in BUILD_DIR, which ctest has built already.
#
#   tests/python/pip_install_test.sh SOURCE_DIR BUILD_DIR [PYTHON]
# Exit 77 (skipped) when PYTHON cannot make a venv with pip (python3-venv).
set -euo pipefail
src="$1"
build="$(cd "$2" && pwd)"
python="${3:-/usr/bin/python3}"
venv="$build/pip-install-venv"
fail() { echo "pip_install_test: $*" >&2; exit 1; }

if ! "$python" -c "import ensurepip, venv" 2>/dev/null; then
  echo "pip_install_test: $python cannot make a venv with pip (Debian: apt-get install python3-venv); skipped"
  exit 77
fi
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
HONE_BUILD_DIR="$build" "$venv/bin/python" -m pip install --no-build-isolation --no-index \
  --no-cache-dir --disable-pip-version-check -q "$src"

# Away from the checkout and any PYTHONPATH, so only the installed copy is seen.
cd "$venv"
unset PYTHONPATH
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
"$venv/bin/python" - "$site" <<'PY'
import os, sys
import hone
site = sys.argv[1]
assert os.path.dirname(hone.__file__) == os.path.join(site, "hone"), hone.__file__
names = [b["name"] for b in hone.backends()]
assert "reference" in names, names
assert hone.Model.__module__ == "hone" and issubclass(hone.Error, RuntimeError)
print("pip_install_test: import hone from", os.path.dirname(hone.__file__), "version",
      hone.__version__, "backends", names)
PY
for f in __init__.py __main__.py _hone.pyi py.typed bin/hone; do
  [ -e "$site/hone/$f" ] || fail "hone/$f is not installed in $site"
done
help="$("$venv/bin/python" -m hone --help)" || fail "python3 -m hone --help failed"
grep -qE '^ +tune +' <<<"$help" || fail "python3 -m hone --help does not list the tune command: $help"
"$venv/bin/hone" --version || fail "the hone script failed"
# Self-contained: libhone is linked in statically; no run path or library
# comes from the build tree.
for f in "$site"/hone/_hone.*.so "$site/hone/bin/hone"; do
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then fail "$f has a run path into $build"; fi
  if ldd "$f" | grep -q "not found"; then fail "$f misses a shared library: $(ldd "$f" | grep 'not found')"; fi
done
echo "pip_install_test: ok ($venv)"
