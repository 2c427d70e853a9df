"""The types of cumgain's public API, for annotating code that calls it.

Every policy option is a :data:`~typing.Literal` of the spellings the function
accepts, written once here; the tuples the functions check at run time are made from
these (``typing.get_args``), so a type checker and the checks agree::

    from cumgain.types import TieRule

    def my_evaluation(qrels, run, ties: TieRule = "docno_desc"):
        return cumgain.evaluate(qrels, run, ["ndcg_cut_10"], ties=ties)

The gain inputs of the vector API (:mod:`cumgain.vectors`) are typed by their shape
where a type checker can see it: :data:`GainList` (one topic's gains: the scalar
functions return a ``float``) and :data:`GainLists` (a batch: they return one value
per topic, a ``numpy.ndarray``). A numpy array may be either (its number of
dimensions is known only at run time), so with one the scalar functions are typed
``Any``: annotate the variable that takes the result.
"""
from __future__ import annotations

import os
from typing import Any, Literal, Sequence, Union

import numpy as np
import numpy.typing as npt

from cumgain.common.batch import Ragged

__all__ = [
    "AveragingOrder",
    "CIMethod",
    "Correction",
    "DenseTieRule",
    "DiscountName",
    "DiscountRule",
    "DiscountSpec",
    "DuplicatePolicy",
    "FloatArray",
    "GainList",
    "GainLists",
    "GainsLike",
    "NormalisedVector",
    "PathLike",
    "Posthoc",
    "PreferenceFormat",
    "RecallCutoffs",
    "ScorePrecision",
    "ScoreTopics",
    "StatsTest",
    "TieRule",
    "TopicPolicy",
    "WilcoxonMethod",
    "ZeroMethod",
]

# ---------------------------------------------------------------- evaluation policies

TieRule = Literal["docno_desc", "docno_asc", "input_order", "average", "random", "expected",
                  "optimistic", "pessimistic"]
"""``ties=``: how documents with equal scores are ordered (:func:`cumgain.evaluate`):
by a rule (docno, input order, a seeded shuffle), at their expected value over every
order (``"average"``, ``"expected"``), or in the best or worst order for the system."""

#: The tie rules that rank by docno descending, then read each group of equal scores
#: (so every ranked document keeps its score): "average" and "expected" take the
#: expectation over the orders within a group, "optimistic" and "pessimistic" reorder it.
GROUP_TIE_RULES: tuple[str, ...] = ("average", "expected", "optimistic", "pessimistic")

DenseTieRule = Literal["input_order", "random", "average"]
"""``ties=`` of a dense score matrix (:func:`cumgain.evaluate_dense`: no docnos)."""

ScorePrecision = Literal["float64", "float32", "float16", "bfloat16"]
"""``score_precision=``: scores compared as float64 (trec_eval 10), float32 (trec_eval 9,
pytrec_eval), or as a half-precision model emits them (float16, bfloat16), each
rounded to nearest, ties to even."""

TopicPolicy = Literal["both", "qrels", "strict"]
"""``topics=``: which topics are evaluated and averaged (:func:`cumgain.evaluate`)."""

DuplicatePolicy = Literal["error", "first", "last"]
"""``duplicates=``: a repeated (topic, docno) line is an error, or the first is kept, or
the last (what a dict built line by line keeps)."""

RecallCutoffs = Literal["nearest", "trec_eval9"]
"""``recall_cutoffs=``: how iprec_at_recall turns a recall level into a rank."""

# ---------------------------------------------------------------- the vector API

DiscountRule = Literal["tois", "note", "trec_eval", "none", "rank"]
"""The discount rules by their names (``discount=`` of the Dask evaluator)."""

DiscountName = Literal[DiscountRule, "jk", "jk2002", "research_note", "log2(i+1)"]
"""A discount rule by its name or an alias (``"jk"`` and ``"jk2002"`` are ``"tois"``,
``"research_note"`` is ``"note"``, ``"log2(i+1)"`` is ``"trec_eval"``)."""

FloatArray = npt.NDArray[np.float64]
"""What the vector functions return: float64 arrays."""

DiscountSpec = Union[DiscountName, Sequence[float], npt.NDArray[Any]]
"""``discount=`` of the vector API: a rule's name or the divisors df(1..n)."""

AveragingOrder = Literal["normalise_then_average", "average_then_normalise"]
"""``order=`` of :func:`cumgain.avg_norm_vect` and the curves."""

GainList = Sequence[float]
"""One topic's gains (or levels), a list of numbers: a scalar function returns a float."""

GainLists = Union[Sequence[Sequence[float]], Ragged]
"""A batch of topics' gains, a list of lists or a :class:`~cumgain.Ragged`: a scalar
function returns a float64 array, one value per topic."""

GainsLike = Union[npt.ArrayLike, Ragged]
"""Any gain input: one list, a batch, or a numpy array of one or two dimensions."""

NormalisedVector = Literal["ncg", "ndcg"]
"""``kind=`` of :meth:`cumgain.dask.AveragedVectors.average_then_normalise`."""

# ---------------------------------------------------------------- significance tests

StatsTest = Literal["friedman", "anova", "ttest", "wilcoxon", "randomization"]
"""``test=`` of :func:`cumgain.stats.compare`."""

Posthoc = Literal["conover", "nemenyi", "tukey"]
"""``posthoc=`` of :func:`cumgain.stats.compare` (conover or nemenyi after friedman,
tukey after anova)."""

Correction = Literal["holm", "bonferroni", "bh", "none"]
"""``correction=``: the multiple-comparison correction of the pairs' p-values."""

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]
"""``zero_method=`` of the Wilcoxon test (as scipy's)."""

WilcoxonMethod = Literal["auto", "exact", "approx", "asymptotic"]
"""``wilcoxon_method=`` (as scipy's ``method``; "approx" and "asymptotic" are one)."""

CIMethod = Literal["BCa", "percentile", "basic"]
"""``ci_method=``: the bootstrap confidence interval (as scipy's)."""

ScoreTopics = Literal["strict", "intersect"]
"""``topics=`` of a score table: runs on the same topics, or on the topics they share."""

# ---------------------------------------------------------------- inputs

PreferenceFormat = Literal["prefs", "qrels_prefs"]
"""``format=`` of :func:`cumgain.load_preferences`."""

PathLike = Union[str, "os.PathLike[str]"]
"""A file name: a str or an ``os.PathLike`` of one."""
