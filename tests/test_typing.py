"""The public API's types: the samples in tests/typing pass ``mypy --strict`` and, run,
return what their annotations say; the Literal aliases of cumgain.types spell exactly the
policies the functions accept."""
import importlib.util
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import cumgain
from cumgain import stats, types, vectors
from cumgain.engine import dense
from cumgain.engine import evaluator
from cumgain.io.native import reader as native
from cumgain.exceptions import InputError
from cumgain.measures import DISCOUNT_NAMES
from cumgain.measures.binary import RECALL_ROUNDING

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "typing"


def _sample(name: str):
    spec = importlib.util.spec_from_file_location(f"typing_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _literal(alias) -> set:
    return set(typing.get_args(alias))


@pytest.mark.parametrize("name", ["sample_evaluate", "sample_vectors"])
def test_samples_return_what_they_are_typed_as(name):
    sample = _sample(name)
    functions = [value for key, value in vars(sample).items()
                 if callable(value) and getattr(value, "__module__", "") == sample.__name__
                 and key != "assert_type"]
    assert len(functions) >= 6
    for function in functions:
        if function.__name__.startswith("wrong_"):     # refused by the type checker too
            with pytest.raises(InputError):
                function()
        elif function.__name__ == "user_function":
            assert isinstance(function([2, 1, 0]), float)
        else:
            function()


@pytest.mark.slow
def test_samples_pass_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    command = [sys.executable, "-m", "mypy", "--strict", "--config-file",
               str(SAMPLES / "mypy.ini"), "--cache-dir", str(tmp_path / "cache"), str(SAMPLES)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 2 source files" in done.stdout


def test_literals_are_the_choices_checked_at_run_time():
    assert evaluator.TIE_RULES == typing.get_args(types.TieRule)
    assert _literal(types.TieRule) == set(native.TIE_CODES)
    assert _literal(types.DenseTieRule) == set(dense.DENSE_TIES)
    assert _literal(types.RecallCutoffs) == set(RECALL_ROUNDING) == set(evaluator.RECALL_CUTOFFS)
    assert _literal(types.DiscountName) == set(vectors.DISCOUNT_RULES)
    assert set(DISCOUNT_NAMES) < _literal(types.DiscountName)
    assert _literal(types.Posthoc) == {p for allowed in stats.POSTHOCS.values() for p in allowed}
    assert set(vectors.AVERAGING_ORDERS) == _literal(types.AveragingOrder)


@pytest.mark.parametrize("ties", typing.get_args(types.TieRule))
@pytest.mark.parametrize("topics", typing.get_args(types.TopicPolicy))
def test_every_spelling_of_a_policy_is_accepted(ties, topics):
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"a": 1}}
    run = {"q1": {"a": 0.5, "b": 0.5}, "q2": {"a": 1.0}}
    result = cumgain.evaluate(qrels, run, ["ndcg"], ties=ties, topics=topics, seed=1)
    assert isinstance(result.means["ndcg"], float)


@pytest.mark.parametrize("discount", typing.get_args(types.DiscountName))
def test_every_discount_name_is_accepted(discount):
    assert isinstance(cumgain.dcg_at([3, 2, 1], 3, discount=discount), float)
