"""Every public name of hone (hone.__all__) carries a docstring, so help() and
IDEs show what it does (issue 31, item 3)."""
import pytest

import hone


@pytest.mark.parametrize("name", [n for n in hone.__all__ if n != "__version__"])
def test_public_name_has_docstring(name):
    obj = getattr(hone, name)
    doc = getattr(obj, "__doc__", None)
    assert doc and doc.strip(), f"hone.{name} has no docstring"


def test_all_names_exist():
    missing = [n for n in hone.__all__ if not hasattr(hone, n)]
    assert not missing, f"hone.__all__ names missing from the module: {missing}"
