"""The evaluator as users call it, checked by ``mypy --strict`` (tests/test_typing.py) and
run by the same test: each ``assert_type`` is what a type checker infers, each
``isinstance`` what the call returns at run time.

A line marked ``# type: ignore[arg-type]`` must be an error for the type checker (a policy
outside its Literal); with ``--strict`` (``warn_unused_ignores``) an ignore that is not
needed is itself an error, so these lines check that the wrong spellings are refused.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import numpy as np
import numpy.typing as npt

import cumgain
from cumgain.io.native.reader import PreparedQrels
from cumgain.stats import Comparison, PairwiseResult, compare
from cumgain.report import Report, significance_table
from cumgain.trec_io import Qrels
from cumgain.types import ScorePrecision, TieRule, TopicPolicy

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:
    def assert_type(value: Any, _type: Any) -> Any:
        return value

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1, "d": 3}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}, "q2": {"d": 0.5, "a": 0.4, "e": 0.3}}
OTHER_RUN = {"q1": {"c": 0.9, "a": 0.8, "b": 0.1}, "q2": {"e": 0.5, "a": 0.4, "d": 0.3}}


def means_are_floats() -> float:
    result = cumgain.evaluate(QRELS, RUN, ["P_2", "ndcg_cut_3", "map"])
    assert_type(result, cumgain.Evaluation)
    assert_type(result.means, dict[str, float])
    ndcg: float = result.means["ndcg_cut_3"]
    assert isinstance(ndcg, float)
    assert isinstance(result["P_2"], float)
    assert_type(result.topics, tuple[str, ...])
    assert all(isinstance(topic, str) for topic in result.topics)
    values = result.values["map"]
    assert_type(values, npt.NDArray[Any])
    assert isinstance(values, np.ndarray) and values.shape == (len(result.topics),)
    per_topic = result.per_topic()
    assert_type(per_topic, dict[str, dict[str, float]])
    assert isinstance(per_topic["q1"]["P_2"], float)
    return ndcg + result.means["map"]


def policies_are_literals(ties: TieRule = "docno_asc", topics: TopicPolicy = "qrels",
                          score_precision: ScorePrecision = "float32") -> float:
    result = cumgain.evaluate(QRELS, RUN, "ndcg", ties=ties, topics=topics,
                              score_precision=score_precision, duplicates="first",
                              recall_cutoffs="trec_eval9", warn=False)
    ranking = cumgain.rank(QRELS, RUN, ties="random", seed=7)
    assert_type(ranking, cumgain.Ranking)
    assert_type(ranking.levels, cumgain.Ragged)
    assert_type(ranking.gains("exponential"), cumgain.Ragged)
    return result.means["ndcg"]


def wrong_policies_are_refused() -> None:
    """Never called for a result: each call raises InputError at run time."""
    cumgain.evaluate(QRELS, RUN, "map", ties="docno")  # type: ignore[arg-type]


def wrong_topics_are_refused() -> None:
    cumgain.evaluate(QRELS, RUN, "map", topics="all")  # type: ignore[arg-type]


def wrong_precision_is_refused() -> None:
    cumgain.rank(QRELS, RUN, score_precision="double")  # type: ignore[arg-type]


def prepared_qrels() -> list[float]:
    prepared = cumgain.prepare_qrels(QRELS)
    assert_type(prepared, Union[PreparedQrels, Qrels])
    assert isinstance(prepared, PreparedQrels)
    means: list[float] = []
    for run in (RUN, OTHER_RUN):
        means.append(cumgain.evaluate(prepared, run, ["ndcg_cut_10"]).means["ndcg_cut_10"])
    return means


def dense_matrix() -> float:
    labels = np.array([[2, 0, 1], [0, 1, 3]])
    scores = np.array([[0.9, 0.8, 0.1], [0.5, 0.4, 0.3]])
    result = cumgain.evaluate_dense(labels, scores, ["ndcg_cut_3"], ties="average")
    assert_type(result, cumgain.Evaluation)
    return result.means["ndcg_cut_3"]


def comparison() -> str:
    runs = {name: cumgain.evaluate(QRELS, run, ["ndcg_cut_3"])
            for name, run in (("A", RUN), ("B", OTHER_RUN), ("C", RUN))}
    result = compare(runs, "ndcg_cut_3", test="ttest", correction="bonferroni")
    assert_type(result, Comparison)
    assert_type(result.means, dict[str, float])
    assert all(isinstance(mean, float) for mean in result.means.values())
    significant = result.significant(0.05)
    assert_type(significant, tuple[PairwiseResult, ...])
    first = result.pairs[0]
    p_value: float = first.p_corrected
    assert isinstance(p_value, float)
    report = significance_table({"nDCG@3": result})
    assert_type(report, Report)
    return str(report)


def wrong_test_is_refused() -> None:
    compare({"A": {"1": 0.1, "2": 0.2}, "B": {"1": 0.3, "2": 0.4}},
            test="t-test")  # type: ignore[arg-type]


def submodules_as_attributes() -> float:
    """The public submodules reached from ``import cumgain`` alone (imported on first
    use), with their types."""
    runs = {name: cumgain.evaluate(QRELS, run, ["P_2"]) for name, run in (("A", RUN),
                                                                         ("B", OTHER_RUN))}
    result = cumgain.stats.compare(runs, "P_2", test="ttest")
    assert_type(result, Comparison)
    assert_type(cumgain.trec_io.load_qrels(QRELS), Qrels)
    return result.means["A"]
