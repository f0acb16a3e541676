"""hone's extension module shows other libraries its init function and nothing
else (python/exports.map). Anything more lets its copies of C++ library code
stand in for another library's in the same process: on the GPU machine,
importing torch after hone aborted with "free(): invalid pointer" when
PyTorch's libstdc++ freed a locale through the copy inside _hone.so."""
import os
import shutil
import subprocess
import sys

import pytest

import hone


def defined_dynamic_symbols(path):
    r = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in r.stdout.splitlines() if line.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="no nm (binutils) to read the module's symbols")
def test_the_extension_exports_only_its_init_function():
    assert defined_dynamic_symbols(hone._hone.__file__) == {"PyInit__hone"}


def test_torch_imported_after_hone_under_glibc_heap_checks(tmp_path):
    pytest.importorskip("torch")
    # A fresh process: hone first, then torch, then a tune, with glibc's heap checks on.
    code = ("import hone, torch\n"
            "m = hone.tune(torch.nn.Linear(4, 2), [torch.rand(1, 4), torch.rand(3, 4)],"
            " backends=['reference'], cache=False)\n"
            "print(m(torch.ones(2, 4)).shape)\n")
    env = dict(os.environ, MALLOC_CHECK_="3")
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "torch.Size([2, 2])" in r.stdout
