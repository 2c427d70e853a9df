"""Shared test set-up.

* The tests import the installed package (pytest runs with --import-mode=importlib),
  so cgcore must be the compiled extension, not a source tree without it.
* A Cython kernel declared ``noexcept`` cannot raise: a bounds-check failure in the
  debug build only prints "Exception ignored" on stderr. That must fail the test
  (the practice of fastavro's conftest).
* ``SHARED`` is the ../shared folder beside the checkout, or None (skip those tests).
* ``terminal``: a stand-in for stderr that says it is a terminal (progress bars).
* Hypothesis profiles: ``ci`` (default) and ``thorough``, chosen by HYPOTHESIS_PROFILE.
"""
import os
from pathlib import Path

import pytest
from hypothesis import settings

import cgcore._vectors

assert cgcore._vectors.__file__.endswith((".so", ".pyd")), (
    f"cgcore is not compiled ({cgcore._vectors.__file__}); install the package first")

settings.register_profile("ci", max_examples=150, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_shared = Path(__file__).resolve().parents[1].parent / "shared"
SHARED = _shared if (_shared / "SPEC.md").exists() else None


@pytest.fixture
def shared():
    if SHARED is None:
        pytest.skip("../shared is not beside this checkout")
    return SHARED


@pytest.fixture(autouse=True)
def _no_ignored_exceptions(request):
    if {"capsys", "capsysbinary", "capfdbinary"} & set(request.fixturenames):
        yield  # pytest allows one capture fixture per test; the test reads its own output
        return
    capfd = request.getfixturevalue("capfd")
    yield
    captured = capfd.readouterr()
    if "Exception ignored" in captured.err:
        pytest.fail(f"a compiled kernel swallowed an exception:\n{captured.err}")


class _Terminal:
    """A stand-in for stderr that says it is a terminal, keeping what is written."""

    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return True


@pytest.fixture
def terminal():
    """A terminal that keeps what is written (``.text``); a test puts it in place of
    sys.stderr itself (pytest's capture sets sys.stderr again after the fixtures)."""
    return _Terminal()
