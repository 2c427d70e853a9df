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


@pytest.mark.slow
@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_files(path):
    check.check_files(path.read_bytes())


@pytest.mark.slow
@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_dicts(path):
    check.check_dicts(path.read_bytes())


@pytest.mark.slow
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


SPELLINGS = [b"nDCG@10", b"Q(beta=0x10)", b"set_F.1_0", b"iprec_at_recall.0.5x",
             b"nDCG(gains=" + b"-".join(b"%d" % i for i in range(3000)) + b")@10",
             b"nDCG(gains={" * 3000, b"P.5,10", b"utility.2,-1,0,0", b"ndcg.1=3,2=9",
             b"RBP(p=.8)", b"nDCG@1O", b"nDCG@10 AP", b"\xff\xfe", b"P@" + b"9" * 5000,
             b"set_F.1e400", b"Rprec_mult.0.5,1e6", b"avg_pos_nDCG@100000000"]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: repr(s[:30]))
def test_measure_spellings(spelling):
    check.check_measure_spelling(spelling)


@pytest.mark.parametrize("kind", range(len(check.WRITER_TARGETS)),
                         ids=lambda k: check.WRITER_TARGETS[k])
@pytest.mark.parametrize("overwrite", [0, 0x80], ids=["new", "overwrite"])
@pytest.mark.parametrize("payload", [b"", b"some bytes\n"], ids=["empty", "data"])
def test_writers(kind, overwrite, payload):
    check.check_writer(bytes([kind | overwrite]) + payload)


def test_the_parser_and_writers_hold_on_random_inputs():
    """A few hundred random inputs of each new target (the fuzzer runs millions)."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.binary(max_size=60))
    def spellings(data):
        check.check_measure_spelling(data)

    @settings(max_examples=60, deadline=None, database=None)
    @given(st.binary(min_size=1, max_size=40))
    def writers(data):
        check.check_writer(data)

    spellings()
    writers()
