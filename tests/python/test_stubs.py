"""hone's type stubs (python/hone/_hone.pyi) against the built module: the same
public names, the same parameters in the same order, the same docstrings, so
the stubs cannot drift from python/module.cpp and python/model.cpp."""
import ast
import os
import re

import pytest

import hone
from hone import _hone

STUB = os.path.join(os.path.dirname(hone.__file__), "_hone.pyi")


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read())


def public(names):
    return {n for n in names if not n.startswith("_") or n == "__call__"}


def split_params(text):
    """'a: int = 1, b: Dict[str, int] = {}' -> ['a', 'b'], splitting at depth 0."""
    out, depth, cur = [], 0, ""
    for c in text + ",":
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            if cur.strip():
                out.append(re.match(r"\s*(\**\w+)", cur).group(1))
            cur = ""
        else:
            cur += c
    return out


def runtime_signature(obj):
    """pybind11's first docstring line 'f(a: T, b: U = x) -> R': (params, rest of the doc)."""
    head, _, doc = obj.__doc__.partition("\n")
    inner = head[head.index("(") + 1:head.rindex(") ->")]
    return [p for p in split_params(inner) if p != "self"], doc.strip()


def stub_params(fn):
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    names += [x.arg for x in a.kwonlyargs]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return [n for n in names if n != "self"]


def words(text):
    return " ".join((text or "").split())


def stub_functions(body):
    return {n.name: n for n in body if isinstance(n, ast.FunctionDef)}


def test_module_names_match():
    tree = stub_tree()
    stubbed = set(stub_functions(tree.body)) | {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    stubbed |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert public(stubbed) | {"__version__"} == public(dir(_hone)) | {"__version__"}
    assert "__version__" in stubbed
    # hone.Module is pure Python (python/hone/_torch.py), typed in its source.
    assert set(hone.__all__) == public(dir(_hone)) | {"__version__", "Module"}


@pytest.mark.parametrize("name", ["tune", "load", "inspect", "backends", "jit", "export",
                                  "generate_key", "sign", "verify"])
def test_function_parameters_and_docstrings_match(name):
    fn = stub_functions(stub_tree().body)[name]
    params, doc = runtime_signature(getattr(_hone, name))
    assert stub_params(fn) == params
    assert words(ast.get_docstring(fn)) == words(doc)


@pytest.mark.parametrize("name", ["Model", "JitModel", "Pipeline", "DeviceArray"])
def test_class_members_match(name):
    cls = next(n for n in stub_tree().body if isinstance(n, ast.ClassDef) and n.name == name)
    runtime = getattr(hone, name)
    assert words(ast.get_docstring(cls)) == words(runtime.__doc__)
    members = stub_functions(cls.body)
    assert public(members) == public(dir(runtime))
    for member, fn in members.items():
        if member == "__init__":
            params, doc = runtime_signature(runtime.__init__)
            assert stub_params(fn) == params, member
            continue
        attr = getattr(runtime, member)
        if isinstance(attr, property):
            assert any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list), member
            assert words(ast.get_docstring(fn)) == words(attr.__doc__), member
        else:
            params, doc = runtime_signature(attr)
            assert stub_params(fn) == params, member
            assert words(ast.get_docstring(fn)) == words(doc), member


def test_error_docstring_matches():
    cls = next(n for n in stub_tree().body if isinstance(n, ast.ClassDef) and n.name == "Error")
    assert words(ast.get_docstring(cls)) == words(hone.Error.__doc__)
