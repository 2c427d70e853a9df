"""Replay the fuzzers' seed corpus and every input they ever found a bug with.

The fuzzers themselves (tests/fuzz/fuzz_trec.py, atheris) run for a fixed budget
outside the test suite; docs/reliability.md records the runs. The property checked
on each input is in tests/fuzz/check.py.
"""
import importlib.util
from pathlib import Path

import pytest

FUZZ = Path(__file__).parent / "fuzz"
_spec = importlib.util.spec_from_file_location("fuzz_check", FUZZ / "check.py")
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

INPUTS = [path for folder in ("corpus", "regressions") for path in sorted((FUZZ / folder).iterdir())
          if not path.name.startswith(".")]


def test_there_are_inputs():
    assert len(INPUTS) >= 20


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_files(path):
    check.check_files(path.read_bytes())


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_dicts(path):
    check.check_dicts(path.read_bytes())


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_native_targets(path):
    check.check_files_native(path.read_bytes())
    check.check_dicts_native(path.read_bytes())


def _lossy_reference_reader(monkeypatch):
    """The reference reader's run loader made to drop every topic's documents but the
    first."""
    from cumgain.reference import reading as reference_reading
    real = reference_reading.load_run

    def lossy(run, **options):
        loaded = real(run, **options)
        return real({topic: dict(list(docs.items())[:1])
                     for topic, docs in loaded.to_dict().items()})

    monkeypatch.setattr(reference_reading, "load_run", lossy)


def test_the_check_catches_a_disagreement(monkeypatch):
    """The oracle is not vacuous: a reader that drops a line is caught, on files and
    on dicts, and the native side is not the reference reader in disguise."""
    data = check.pack(0, b"q1 0 d1 1\nq1 0 d2 1\n", b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 1 0.4 t\n")
    check.check_files(data)
    dicts = check.pack_dicts(0, [(0x80, 1, 1), (0x80, 2, 1), (0, 1, 5), (0, 2, 7)])
    check.check_dicts(dicts)
    _lossy_reference_reader(monkeypatch)
    with pytest.raises(AssertionError, match="native and reference readers differ"):
        check.check_files(data)
    with pytest.raises(AssertionError, match="dict paths differ"):
        check.check_dicts(dicts)
