"""The Python front end against the registry (la/solvers/registry.hpp): every declared option
is a keyword, documented in solve()'s docstring; the stubs' Method and Precond literals are the
registry's names; a keyword's errors name it in Python's spelling."""
import ast
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import la
from la import _la

STUBS = pathlib.Path(la.__file__).with_name("__init__.pyi")


def _literal(name):
    tree = ast.parse(STUBS.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == name:
            return [e.value for e in node.value.slice.elts]
    raise AssertionError(name + " not in the stubs")


def test_every_declared_option_is_a_keyword_and_documented():
    options = _la.solve_options()
    assert len(options) >= 20
    doc = la.solve.__doc__
    for name, keyword, kind, default, choices, help_ in options:
        assert la._OPTION_NAMES[keyword] == "--" + name
        assert keyword in doc, keyword + " is not in solve()'s docstring"
        assert help_ and "{" not in help_.replace("{entries}", "")
        if kind == "choice":
            assert default in choices


def test_stub_literals_are_the_registry_names():
    methods, preconds = _la.registry_names()
    assert sorted(_literal("Method")) == sorted(methods)
    assert sorted(_literal("Precond")) == sorted(preconds)


def test_a_keyword_outside_its_scope_is_named_in_python_words():
    a = sp.identity(4, format="csr")
    with pytest.raises(la.InvalidArgument) as e:
        la.solve(a, np.ones(4), precond="jacobi", amg_cycle="w", device="cpu")
    assert "amg_cycle" in str(e.value) and "precond='amg'" in str(e.value) and "--" not in str(e.value)
