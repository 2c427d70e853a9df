"""Gain-by-rank curves and the readings Jarvelin & Kekalainen (2002) take from them.

The papers' main view of a set of runs is a curve per run: the averaged CG, DCG,
nCG or nDCG vector by rank (avg-vect, eq. 3), drawn with the averaged ideal vector
(Figures 1-4 of the TOIS article, sections 3.4-3.6). This module computes those
curves for several runs against one qrels, and the numbers the paper reads off them
by eye:

* :func:`horizontal_reading`: the smallest rank at which a run's averaged curve
  reaches a target, by default the ideal curve's value at rank k ("one has to
  retrieve 30 documents by the best run [...] to gain the benefit that could
  theoretically be gained by retrieving only 10 documents", section 3.4);
* :func:`stopping_rank`: the rank where the averaged ideal curve turns horizontal
  (the stopping rule of section 5: nothing more can be gained past it);
* :func:`vertical_gaps`: how far a run hangs below the ideal at chosen ranks,
  in points and as a share of the ideal ("43 - 531 points (11 - 54 %)");
* :func:`area_to_ideal`: the area between the normalised ideal curve and a
  normalised curve up to a rank (section 2.3).

Curves come from :func:`compute` (qrels and runs as files, dicts or DataFrames),
:func:`from_rankings` (runs already ranked by :func:`cumgain.engine.evaluator.rank`) or
:func:`from_gains` (gain lists, as in the vector API). The kernels are those of
:mod:`cumgain.vectors`: exact and batched over topics.

Averaging order of the normalised curves (``order=``), as
:func:`cumgain.vectors.avg_norm_vect` names them:

* ``"normalise_then_average"`` (default): avg-vect of each topic's n(D)CG vector;
  every topic counts equally, and the curve at rank k is the mean nDCG@k that
  :func:`cumgain.evaluate` reports;
* ``"average_then_normalise"``: avg-vect(CG or DCG) / avg-vect(ideal); the
  paper's Figures 3-4 ("the average actual CG and DCG vectors were normalized by
  dividing them with the ideal average vectors", section 3.3, item 4).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

import cgcore
from cumgain.common import display
from cumgain.common.optional import require
from cumgain.common.batch import Ragged, as_batch
from cumgain.exceptions import InputError
from cumgain.gains import GainSpec, gain_mapping
from cumgain.common.limits import real_number, whole_number
from cumgain.types import (AveragingOrder, DuplicatePolicy, ScorePrecision, TieRule,
                           TopicPolicy)
from cumgain.vectors import (
    AVERAGING_ORDERS,
    DISCOUNT_RULES,
    DiscountSpec,
    avg_norm_vect,
    avg_vect,
    cg,
    dcg,
    discount_divisors,
    ideal_gains,
    norm_vect,
)

MEASURES = ("CG", "DCG", "nCG", "nDCG")
NORMALISED = ("nCG", "nDCG")
DEFAULT_DEPTH = 200
IDEAL = "ideal"          # the ideal curve's label in tables, frames and legends
REPR_RANK = 10           # the rank whose values a repr shows
HTML_RANKS = (1, 5, 10, 20, 50, 100, 200)    # the ranks a notebook table shows (to n)


@dataclass(frozen=True, repr=False)
class Curves:
    """The averaged curves of several runs for one measure, with the ideal curve.

    ``measure``: ``"CG"``, ``"DCG"``, ``"nCG"`` or ``"nDCG"``; ``ranks``: 1..n;
    ``runs``: run name -> averaged vector over ``topics`` (length n); ``ideal``: the
    averaged ideal vector (for nCG/nDCG the ideal normalised by itself and averaged
    in the same ``order``: 1 at every rank when every topic has a judged document
    with gain > 0); ``relevant_counts``: per topic, the number of judged documents
    with gain > 0 (the length of the topic's ideal gain vector before its zeros).
    ``per_topic`` (run -> topics x n matrix) and ``ideal_per_topic`` (topics x n)
    are there when asked for; normalised per-topic vectors are each topic's
    V[i] / I[i] whatever the averaging ``order``. ``gains``, ``discount``, ``base``
    and ``order`` describe how the curves were made (``discount`` is ``"none"`` for
    CG and nCG; ``order`` is None for CG and DCG).

    Its repr is a short summary (the curves' values at rank 10); in a notebook, a table
    of the values at a few ranks.

    Attributes
    ----------
    measure : str
        "CG", "DCG", "nCG" or "nDCG".
    ranks : numpy.ndarray
        1..n.
    runs : mapping of str to numpy.ndarray
        Each run's averaged curve.
    ideal : numpy.ndarray
        The averaged ideal curve.
    topics : tuple of str
        The topics averaged.
    relevant_counts : numpy.ndarray
        Per topic, its judged documents with a positive gain.
    gains, discount : str
        How the curves were made.
    base : float
        b of the discount.
    order : str or None
        The averaging order (nCG, nDCG).
    zero_ideal : float
        The normalised value where a topic's ideal is 0.
    per_topic : mapping of str to numpy.ndarray, optional
        Each run's per-topic vectors (``per_topic=True``).
    """

    measure: str
    ranks: np.ndarray
    runs: Mapping[str, np.ndarray]
    ideal: np.ndarray
    topics: tuple[str, ...]
    relevant_counts: np.ndarray
    gains: str
    discount: str
    base: float
    order: Optional[str]
    zero_ideal: float = 0.0
    per_topic: Optional[Mapping[str, np.ndarray]] = None
    ideal_per_topic: Optional[np.ndarray] = None

    @property
    def depth(self) -> int:
        """n, the last rank of the curves."""
        return len(self.ranks)

    @property
    def normalised(self) -> bool:
        return self.measure in NORMALISED

    @property
    def scheme(self) -> str:
        """How the curves were made, in words: "gains 0-1-10-100, discount tois, b = 2"."""
        text = f"gains {self.gains}"
        if self.discount != "none":
            text += f", discount {self.discount}"
            if DISCOUNT_RULES.get(self.discount) in (cgcore.DISCOUNT_TOIS, cgcore.DISCOUNT_NOTE):
                text += f", b = {self.base:g}"
        return text

    def _head(self) -> str:
        return (f"Curves {self.measure}: {display.count(len(self.runs), 'run')}, "
                f"{display.count(len(self.topics), 'topic')}, ranks 1-{self.depth}; "
                f"{self.scheme}")

    def __repr__(self) -> str:
        k = min(REPR_RANK, self.depth)
        values = [(name, curve[k - 1]) for name, curve in self.runs.items()]
        return display.summary(f"{self._head()}; at rank {k}:",
                               [(IDEAL, self.ideal[k - 1]), *values])

    def _repr_html_(self) -> str:
        ranks = sorted({k for k in HTML_RANKS if k < self.depth} | {self.depth})
        rows = [(name, *(display.number(curve[k - 1]) for k in ranks))
                for name, curve in [*self.runs.items(), (IDEAL, self.ideal)]]
        return display.html_table(self._head(), ("run", *(f"@{k}" for k in ranks)), rows)

    def to_dataframe(self, per_topic: bool = False):
        """The curves as a long pandas DataFrame (needs pandas), the ideal as run ``"ideal"``.

        ``per_topic=False``: columns ``run, rank, value`` (the averaged curves);
        ``per_topic=True``: columns ``topic, run, rank, value`` (the per-topic vectors;
        the curves must have been computed with ``per_topic=True``).
        """
        pd = require("pandas", extra="pandas", for_what="Curves.to_dataframe()")

        names = [*self.runs, IDEAL]
        n = self.depth
        if not per_topic:
            values = np.concatenate([self.runs[name] for name in self.runs] + [self.ideal])
            return pd.DataFrame({"run": np.repeat(names, n),
                                 "rank": np.tile(self.ranks, len(names)),
                                 "value": values})
        if self.per_topic is None or self.ideal_per_topic is None:
            raise InputError("these curves hold no per-topic vectors; compute them with "
                             "per_topic=True")
        matrices = [self.per_topic[name] for name in self.runs] + [self.ideal_per_topic]
        n_topics = len(self.topics)
        return pd.DataFrame({
            "topic": np.tile(np.repeat(np.asarray(self.topics, dtype=object), n), len(names)),
            "run": np.repeat(names, n_topics * n),
            "rank": np.tile(self.ranks, n_topics * len(names)),
            "value": np.concatenate([matrix.reshape(-1) for matrix in matrices]),
        })


# ---------------------------------------------------------------- computing curves

def _measure_name(measure: Any) -> str:
    names = {name.lower(): name for name in MEASURES}
    if not isinstance(measure, str) or measure.strip().lower() not in names:
        raise InputError(f"measure must be one of {MEASURES}, got {measure!r}")
    return names[measure.strip().lower()]


def _check_depth(depth: Any) -> int:
    return whole_number(depth, "depth")


def _check_run_names(names: Sequence[str]) -> None:
    if not names:
        raise InputError("no runs: give at least one")
    for name in names:
        if not isinstance(name, str) or not name:
            raise InputError(f"run names must be non-empty strings, got {name!r}")
        if name == IDEAL:
            raise InputError(f"a run cannot be named {IDEAL!r}: that name labels the ideal curve")


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=np.float64)
    array.setflags(write=False)
    return array


def _positive_per_topic(batch: Ragged) -> np.ndarray:
    """Per topic, how many of its values are > 0 (no loop over topics)."""
    running = np.concatenate([[0], np.cumsum(batch.values > 0)])
    return (running[batch.offsets[1:]] - running[batch.offsets[:-1]]).astype(np.int64)


def _build(run_batches: Mapping[str, Ragged], recall_base: Ragged, measure: str, *,
           depth: int, discount: DiscountSpec, base: float, order: str, zero_ideal: float,
           per_topic: bool, topics: tuple, gains_label: str) -> Curves:
    """The curves of validated gain batches (one topic order for all).

    Every topic's vectors are constant from the end of the longer of its ranking and
    its judgments on, and so is every average of them, bit for bit (the same values
    added in the same order). Without ``per_topic``, the vectors are built only to the
    longest list (at most ``depth``) and the curves extended with their last value:
    memory follows the lists, not the depth (``-M 2000000`` on short topics)."""
    discounted = measure in ("DCG", "nDCG")
    full_depth = depth
    if not per_topic:
        longest = max([_longest(recall_base)] + [_longest(b) for b in run_batches.values()])
        depth = max(1, min(depth, longest))

    def cumulate(batch: Any) -> np.ndarray:
        if discounted:
            return dcg(batch, depth, discount=discount, base=base)
        return cg(batch, depth)

    ideal_matrix = cumulate(ideal_gains(recall_base, depth))
    vectors = {name: cumulate(batch) for name, batch in run_batches.items()}
    if measure in NORMALISED:
        ignore_nan = math.isnan(zero_ideal)
        curves = {name: avg_norm_vect(matrix, ideal_matrix, order=order, zero_ideal=zero_ideal,
                                      ignore_nan=ignore_nan) for name, matrix in vectors.items()}
        ideal_curve = avg_norm_vect(ideal_matrix, ideal_matrix, order=order,
                                    zero_ideal=zero_ideal, ignore_nan=ignore_nan)
        if per_topic:
            vectors = {name: norm_vect(matrix, ideal_matrix, zero_ideal=zero_ideal)
                       for name, matrix in vectors.items()}
            ideal_matrix = norm_vect(ideal_matrix, ideal_matrix, zero_ideal=zero_ideal)
    else:
        curves = {name: avg_vect(matrix) for name, matrix in vectors.items()}
        ideal_curve = avg_vect(ideal_matrix)

    if depth < full_depth:          # (the constant tail of every curve)
        curves = {name: _extended(curve, full_depth) for name, curve in curves.items()}
        ideal_curve = _extended(ideal_curve, full_depth)
        depth = full_depth
    ranks = np.arange(1, depth + 1, dtype=np.int64)
    ranks.setflags(write=False)
    return Curves(
        measure=measure, ranks=ranks,
        runs={name: _frozen(curve) for name, curve in curves.items()},
        ideal=_frozen(ideal_curve), topics=topics,
        relevant_counts=_positive_per_topic(recall_base),
        gains=gains_label,
        discount=(discount if isinstance(discount, str) else "custom") if discounted else "none",
        base=float(base), order=order if measure in NORMALISED else None,
        zero_ideal=zero_ideal,
        per_topic={name: _frozen(m) for name, m in vectors.items()} if per_topic else None,
        ideal_per_topic=_frozen(ideal_matrix) if per_topic else None)


def _longest(batch: Ragged) -> int:
    """The longest list of a batch (0 for a batch of empty lists)."""
    return int(np.diff(batch.offsets).max()) if len(batch.offsets) > 1 else 0


def _extended(curve: np.ndarray, depth: int) -> np.ndarray:
    """``curve`` continued to ``depth`` with its last value."""
    out = np.empty(depth)
    out[:len(curve)] = curve
    out[len(curve):] = curve[-1]
    return out


def _check_options(measure: Any, depth: Any, discount: DiscountSpec, base: float, order: Any,
                   zero_ideal: Any) -> tuple[str, int, float]:
    measure = _measure_name(measure)
    depth = _check_depth(depth)
    if order not in AVERAGING_ORDERS:
        raise InputError(f"order must be one of {AVERAGING_ORDERS}, got {order!r}")
    if measure in ("DCG", "nDCG"):
        discount_divisors(discount, base, depth)          # validates the discount and base
    if isinstance(zero_ideal, bool) or not isinstance(zero_ideal, (int, float, np.floating)):
        raise InputError(f"zero_ideal must be a number (0.0 or nan), got {zero_ideal!r}")
    if not (isinstance(zero_ideal, (float, np.floating)) and math.isnan(zero_ideal)):
        zero_ideal = real_number(zero_ideal, "zero_ideal", "a number (0.0 or nan)")
    return measure, depth, float(zero_ideal)


def from_gains(run_gains: Mapping[str, Any], judged: Any, measure: str = "nDCG", *,
               depth: int = DEFAULT_DEPTH, discount: DiscountSpec = "tois", base: float = 2.0,
               order: AveragingOrder = "normalise_then_average", zero_ideal: float = 0.0,
               per_topic: bool = False, topics: Optional[Sequence[str]] = None,
               mapping: Optional[GainSpec] = None) -> Curves:
    """The averaged curves of runs given as gain lists, as in the vector API.

    ``run_gains``: run name -> a batch of gain lists in rank order (a list of lists,
    a topics x ranks matrix or a :class:`~cumgain.Ragged`), one list per topic;
    ``judged``: the topics' judged gains (the recall base), a batch in the same topic
    order. ``mapping``: if given, all inputs are relevance levels, mapped to gains
    first. ``zero_ideal``: the normalised value of a topic whose ideal is 0 (no judged
    gain > 0): 0.0 (trec_eval) counts the topic as 0; ``nan`` leaves it out of the
    averages. ``topics``: names for the topics (default "0", "1", ...).

    CG / DCG curve: avg-vect over topics of CG_t / DCG_t to depth n; ideal: avg-vect
    of the ideal CG / DCG vectors. nCG / nDCG: see the module docstring for ``order``.

    Parameters
    ----------
    run_gains : mapping of str to a batch of gain lists
        Run name -> gain lists in rank order, one per topic.
    judged : batch of gain lists
        The topics' judged gains (the recall base), in the same topic order.
    measure : {"CG", "DCG", "nCG", "nDCG"}, default "nDCG"
        The curve.
    depth : int, default 200
        n, the last rank.
    discount : {"tois", "note", "trec_eval", "none"} or sequence of float, default "tois"
        The DCG discount (the vector API's default: the paper's).
    base : float, default 2.0
        b of the paper's rules.
    order : {"normalise_then_average", "average_then_normalise"}, optional
        The averaging order of nCG and nDCG (default ``"normalise_then_average"``).
    zero_ideal : float, default 0.0
        The normalised value where a topic's ideal is 0.
    per_topic : bool, default False
        Keep the per-topic vectors.
    topics : sequence of str, optional
        The topics' names (default "1", "2", ...).
    mapping : str, mapping or callable, optional
        Turn levels into gains first.

    Returns
    -------
    Curves

    Raises
    ------
    InputError
        A bad input, measure or option.

    Examples
    --------
    >>> curves = from_gains({"A": [[3, 2, 3, 0, 0, 1, 2, 2, 3, 0]]},
    ...                     [[3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]], "CG", depth=10)
    >>> curves.runs["A"]
    array([ 3.,  5.,  8.,  8.,  8.,  9., 11., 13., 16., 16.])
    >>> curves.ideal
    array([ 3.,  6.,  9., 11., 13., 15., 16., 17., 18., 19.])
    """
    measure, depth, zero_ideal = _check_options(measure, depth, discount, base, order,
                                                zero_ideal)
    if not isinstance(run_gains, Mapping):
        raise InputError("run_gains must map run names to batches of gain lists, "
                         f"got {type(run_gains).__name__}")
    _check_run_names(list(run_gains))
    function = gain_mapping(mapping) if mapping is not None else None

    def prepared(gains: Any, name: str) -> Ragged:
        batch, single = as_batch(gains, name)
        if single:
            raise InputError(f"{name} must be a batch (one gain list per topic), got a "
                             "single list; wrap it in a list")
        return Ragged(function(batch.values), batch.offsets) if function else batch

    recall_base = prepared(judged, "judged")
    n_topics = len(recall_base)
    if n_topics == 0:
        raise InputError("no topics: the curves average over at least one topic")
    batches = {}
    for name, gains in run_gains.items():
        batches[name] = prepared(gains, f"run_gains[{name!r}]")
        if len(batches[name]) != n_topics:
            raise InputError(f"run {name!r} has {len(batches[name])} topics but judged has "
                             f"{n_topics}")
    topics = tuple(str(t) for t in range(n_topics)) if topics is None else tuple(topics)
    if len(topics) != n_topics:
        raise InputError(f"{len(topics)} topic names for {n_topics} topics")
    return _build(batches, recall_base, measure, depth=depth, discount=discount, base=base,
                  order=order, zero_ideal=zero_ideal, per_topic=per_topic, topics=topics,
                  gains_label=function.name if function else "as given")


def _check_same_topics(rankings: Mapping[str, Any]) -> None:
    """One ideal curve needs one topic set: every run must be evaluated on the same topics."""
    (first_name, first), *others = rankings.items()
    for name, ranking in others:
        if ranking.topics != first.topics:
            only_first = sorted(set(first.topics) - set(ranking.topics))
            only_this = sorted(set(ranking.topics) - set(first.topics))
            raise InputError(
                f"runs {first_name!r} and {name!r} are evaluated on different topics "
                f"({len(only_first)} only in {first_name!r}, e.g. {only_first[:3]}; "
                f"{len(only_this)} only in {name!r}, e.g. {only_this[:3]}): the curves share "
                "one ideal curve, so they need one topic set; use topics='qrels' (every "
                "qrels topic, missing ones score 0)")


def rank_runs(qrels: Any, runs: Union[Mapping[str, Any], Sequence[Any]], *,
              topics: TopicPolicy = "both", ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
              seed: Optional[int] = 0, duplicates: DuplicatePolicy = "error", warn: bool = True,
              depth: Optional[int] = None, intersect: bool = False) -> dict:
    """Rank every run against ``qrels`` (:func:`cumgain.rank`): ``{name: Ranking}``.

    ``runs``: run name -> a TREC file path, ``{qid: {docid: score}}`` dict or DataFrame;
    or a list of run files, named by :func:`cumgain.io.run_names.run_names` (the run tag
    where all its lines agree, else the file name, made unique). Policies as in
    :func:`cumgain.evaluate`. Every run must end up with the same evaluated topics (else
    :class:`~cumgain.InputError`; ``topics="qrels"`` always gives every run the qrels'
    topics); with ``intersect=True`` each keeps the topics all runs have.

    Parameters
    ----------
    qrels : str, os.PathLike, dict, DataFrame or prepared judgments
        The judgments, as :func:`cumgain.evaluate` takes them.
    runs : mapping of str to run, or sequence of run files
        Run name -> a TREC file, dict or table.
    topics : {"both", "qrels", "strict"}, default "both"
        Which topics, as in :func:`cumgain.evaluate`.
    ties : str, default "docno_desc"
        The order of equal scores, as in :func:`cumgain.evaluate`.
    score_precision : {"float64", "float32", "float16", "bfloat16"}, default "float64"
        How scores are compared.
    seed : int or None, default 0
        The seed of ``ties="random"``.
    duplicates : {"error", "first", "last"}, default "error"
        A docno twice in a topic.
    warn : bool, default True
        Announce the topics left out.
    depth : int, optional
        Keep the first ``depth`` documents per topic.
    intersect : bool, default False
        Keep only the topics every run has.

    Returns
    -------
    dict of str to Ranking

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    from cumgain.engine.evaluator import rank
    from cumgain.trec_io import prepare_qrels
    from cumgain.io.run_names import run_names

    if isinstance(runs, (str, bytes)) or not isinstance(runs, (Mapping, Sequence)):
        raise InputError(f"runs must map run names to runs, or list run files, got "
                         f"{type(runs).__name__}")
    paths = None if isinstance(runs, Mapping) else list(runs)
    named = runs if paths is None else {str(i): path for i, path in enumerate(paths)}
    _check_run_names(list(named))
    qrels = prepare_qrels(qrels, duplicates=duplicates)  # read once (standard input can only be)
    rankings = {name: rank(qrels, run, ties=ties, score_precision=score_precision, depth=depth,
                           topics=topics, duplicates=duplicates, seed=seed, warn=warn)
                for name, run in named.items()}
    if paths is not None:
        rankings = dict(zip(run_names(paths, list(rankings.values())), rankings.values()))
        _check_run_names(list(rankings))
    if intersect:
        common = set.intersection(*(set(ranking.topics) for ranking in rankings.values()))
        rankings = {name: ranking.on_topics(sorted(common))
                    for name, ranking in rankings.items()}
    _check_same_topics(rankings)
    return rankings


def from_rankings(rankings: Mapping[str, Any], measure: str = "nDCG", *,
                  depth: int = DEFAULT_DEPTH, gains: GainSpec = "identity",
                  discount: DiscountSpec = "trec_eval", base: float = 2.0,
                  order: AveragingOrder = "normalise_then_average", zero_ideal: float = 0.0,
                  per_topic: bool = False) -> Curves:
    """The curves of runs ranked against one qrels (``{name: Ranking}``, e.g. from
    :func:`rank_runs`), under the gain mapping ``gains``. Unjudged documents have gain
    0; under ``ties="average"`` tied documents share their mean gain.

    Parameters
    ----------
    rankings : mapping of str to Ranking
        Runs ranked against one qrels (:func:`rank_runs`).
    measure : {"CG", "DCG", "nCG", "nDCG"}, default "nDCG"
        The curve.
    depth : int, default 200
        n, the last rank (the paper uses 200).
    gains : str, mapping or callable, default "identity"
        The gain mapping of the levels ("0-1-10-100", "exponential", ...).
    discount : {"trec_eval", "tois", "note", "none"} or sequence of float, default "trec_eval"
        The DCG discount (the paper's figures: "tois", b = 2).
    base : float, default 2.0
        b of the paper's discount rules.
    order : {"normalise_then_average", "average_then_normalise"}, optional
        The averaging order of nCG and nDCG (default ``"normalise_then_average"``).
    zero_ideal : float, default 0.0
        The normalised value where a topic's ideal is 0 (``nan``: left out of the average).
    per_topic : bool, default False
        Keep the per-topic vectors.

    Returns
    -------
    Curves

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    measure, depth, zero_ideal = _check_options(measure, depth, discount, base, order,
                                                zero_ideal)
    if not isinstance(rankings, Mapping) or not rankings:
        raise InputError("rankings must map run names to rankings (at least one)")
    _check_run_names(list(rankings))
    _check_same_topics(rankings)
    function = gain_mapping(gains)
    first_name, first = next(iter(rankings.items()))
    if not first.topics:
        raise InputError("no topic has both results and judgments; nothing to average")
    recall_base = first.judged_gains(function)
    for name, ranking in rankings.items():
        judged = ranking.judged_gains(function)
        if not (np.array_equal(judged.offsets, recall_base.offsets)
                and np.array_equal(judged.values, recall_base.values)):
            raise InputError(f"runs {first_name!r} and {name!r} were ranked against different "
                             "qrels; the curves need one qrels")
    batches = {name: ranking.gains(function) for name, ranking in rankings.items()}
    return _build(batches, recall_base, measure, depth=depth, discount=discount, base=base,
                  order=order, zero_ideal=zero_ideal, per_topic=per_topic,
                  topics=tuple(first.topics), gains_label=function.name)


def compute_many(qrels: Any, runs: Mapping[str, Any], measures: Sequence[str] = MEASURES, *,
                 depth: int = DEFAULT_DEPTH, gains: GainSpec = "identity",
                 discount: DiscountSpec = "trec_eval", base: float = 2.0,
                 order: AveragingOrder = "normalise_then_average", zero_ideal: float = 0.0,
                 per_topic: bool = False, topics: TopicPolicy = "both", ties: TieRule = "docno_desc",
                 score_precision: ScorePrecision = "float64", seed: Optional[int] = 0,
                 duplicates: DuplicatePolicy = "error", warn: bool = True) -> dict:
    """``{measure: Curves}`` for several measures, each run ranked once. See :func:`compute`.

    Parameters
    ----------
    qrels : str, os.PathLike, dict, DataFrame or prepared judgments
        The judgments, as :func:`cumgain.evaluate` takes them.
    runs : mapping of str to run, or sequence of run files
        Run name -> a TREC file, dict or table.
    measures : sequence of str, default ("CG", "DCG", "nCG", "nDCG")
        The curves.
    depth : int, default 200
        n, the last rank (the paper uses 200).
    gains : str, mapping or callable, default "identity"
        The gain mapping of the levels ("0-1-10-100", "exponential", ...).
    discount : {"trec_eval", "tois", "note", "none"} or sequence of float, default "trec_eval"
        The DCG discount (the paper's figures: "tois", b = 2).
    base : float, default 2.0
        b of the paper's discount rules.
    order : {"normalise_then_average", "average_then_normalise"}, optional
        The averaging order of nCG and nDCG (default ``"normalise_then_average"``).
    zero_ideal : float, default 0.0
        The normalised value where a topic's ideal is 0 (``nan``: left out of the average).
    per_topic : bool, default False
        Keep the per-topic vectors.
    topics : {"both", "qrels", "strict"}, default "both"
        Which topics, as in :func:`cumgain.evaluate`.
    ties : str, default "docno_desc"
        The order of equal scores, as in :func:`cumgain.evaluate`.
    score_precision : {"float64", "float32", "float16", "bfloat16"}, default "float64"
        How scores are compared.
    seed : int or None, default 0
        The seed of ``ties="random"``.
    duplicates : {"error", "first", "last"}, default "error"
        A docno twice in a topic.
    warn : bool, default True
        Announce the topics left out.

    Returns
    -------
    dict of str to Curves

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    if isinstance(measures, str):
        measures = [measures]
    names = [_measure_name(measure) for measure in measures]
    for name in names:
        _check_options(name, depth, discount, base, order, zero_ideal)
    gain_mapping(gains)
    rankings = rank_runs(qrels, runs, topics=topics, ties=ties, score_precision=score_precision,
                         seed=seed, duplicates=duplicates, warn=warn)
    return {name: from_rankings(rankings, name, depth=depth, gains=gains, discount=discount,
                                base=base, order=order, zero_ideal=zero_ideal,
                                per_topic=per_topic) for name in names}


def compute(qrels: Any, runs: Mapping[str, Any], measure: str = "nDCG", *,
            depth: int = DEFAULT_DEPTH, gains: GainSpec = "identity",
            discount: DiscountSpec = "trec_eval", base: float = 2.0,
            order: AveragingOrder = "normalise_then_average", zero_ideal: float = 0.0,
            per_topic: bool = False, topics: TopicPolicy = "both", ties: TieRule = "docno_desc",
            score_precision: ScorePrecision = "float64", seed: Optional[int] = 0,
            duplicates: DuplicatePolicy = "error", warn: bool = True) -> Curves:
    """The averaged ``measure`` curves (CG, DCG, nCG or nDCG) of ``runs`` against ``qrels``.

    ``qrels``: a TREC file path, ``{qid: {docid: level}}`` dict or DataFrame; ``runs``:
    run name -> a TREC file path, ``{qid: {docid: score}}`` dict or DataFrame.
    ``depth``: n, the last rank (the paper uses 200); ``gains``: the gain mapping
    (``"0-1-10-100"``, ``"exponential"``, ...); ``discount``/``base``: the DCG
    discount (trec_eval's by default, as :func:`cumgain.evaluate` and every entry point
    that evaluates qrels and runs; the paper's figures: ``"tois"``, b = 2); ``order``: averaging
    order of nCG/nDCG (module docstring); ``per_topic``: keep the per-topic vectors.
    Ranking policies (``topics``, ``ties``, ``score_precision``, ``seed``,
    ``duplicates``, ``warn``) as in :func:`cumgain.evaluate`.

    Parameters
    ----------
    qrels : str, os.PathLike, dict, DataFrame or prepared judgments
        The judgments, as :func:`cumgain.evaluate` takes them.
    runs : mapping of str to run, or sequence of run files
        Run name -> a TREC file, dict or table.
    measure : {"CG", "DCG", "nCG", "nDCG"}, default "nDCG"
        The curve.
    depth : int, default 200
        n, the last rank (the paper uses 200).
    gains : str, mapping or callable, default "identity"
        The gain mapping of the levels ("0-1-10-100", "exponential", ...).
    discount : {"trec_eval", "tois", "note", "none"} or sequence of float, default "trec_eval"
        The DCG discount (the paper's figures: "tois", b = 2).
    base : float, default 2.0
        b of the paper's discount rules.
    order : {"normalise_then_average", "average_then_normalise"}, optional
        The averaging order of nCG and nDCG (default ``"normalise_then_average"``).
    zero_ideal : float, default 0.0
        The normalised value where a topic's ideal is 0 (``nan``: left out of the average).
    per_topic : bool, default False
        Keep the per-topic vectors.
    topics : {"both", "qrels", "strict"}, default "both"
        Which topics, as in :func:`cumgain.evaluate`.
    ties : str, default "docno_desc"
        The order of equal scores, as in :func:`cumgain.evaluate`.
    score_precision : {"float64", "float32", "float16", "bfloat16"}, default "float64"
        How scores are compared.
    seed : int or None, default 0
        The seed of ``ties="random"``.
    duplicates : {"error", "first", "last"}, default "error"
        A docno twice in a topic.
    warn : bool, default True
        Announce the topics left out.

    Returns
    -------
    Curves

    Raises
    ------
    InputError
        A bad input, measure or option.

    Examples
    --------
    >>> qrels = {"q1": {"a": 3, "b": 1}, "q2": {"c": 2}}
    >>> run = {"q1": {"a": 0.2, "b": 0.9}, "q2": {"c": 0.5, "d": 0.7}}
    >>> compute(qrels, {"bm25": run}, "CG", depth=3).runs["bm25"]   # (1+0, 4+2, 4+2)/2
    array([0.5, 3. , 3. ])
    """
    return compute_many(qrels, runs, [measure], depth=depth, gains=gains, discount=discount,
                        base=base, order=order, zero_ideal=zero_ideal, per_topic=per_topic,
                        topics=topics, ties=ties, score_precision=score_precision, seed=seed,
                        duplicates=duplicates, warn=warn)[_measure_name(measure)]


# ---------------------------------------------------------------- readings

def _check_rank(k: Any, curves: Curves, name: str = "rank") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= curves.depth:
        raise InputError(f"{name} must be an integer from 1 to the curves' depth "
                         f"{curves.depth}, got {k!r}")
    return int(k)


def rank_reaching(curve: Any, target: float) -> Optional[int]:
    """The smallest rank i (1-based) with curve[i] >= target, or None if the curve stays
    below the target up to its last rank ("not reached within n").

    Parameters
    ----------
    curve : array_like
        One curve, rank 1 first.
    target : float
        The value to reach.

    Returns
    -------
    int or None

    Raises
    ------
    InputError
        A bad input, measure or option.

    Examples
    --------
    >>> rank_reaching([0.0, 1.0, 1.0, 2.0, 3.0], 2.0), rank_reaching([0.0, 1.0], 2.0)
    (4, None)
    """
    values = np.asarray(curve, dtype=np.float64)
    if values.ndim != 1:
        raise InputError(f"a curve must be 1-D, got shape {values.shape}")
    if isinstance(target, bool) or not isinstance(target, (int, float, np.number)) \
            or not math.isfinite(target):
        raise InputError(f"the target must be a finite number, got {target!r}")
    hits = np.flatnonzero(values >= target)
    return int(hits[0]) + 1 if len(hits) else None


def horizontal_reading(curves: Curves, k: Optional[int] = None, *,
                       target: Optional[float] = None) -> dict:
    """The horizontal reading (sections 3.4-3.5): for each run, the smallest rank at
    which its averaged curve reaches the ideal curve's value at rank ``k`` (or any
    ``target`` value, e.g. another run's value at a rank); None when the run does not
    reach it within the curves' depth n. ``{run: rank or None}``.

    A run reaches a value when its curve is >= the value (exact comparison).

    Parameters
    ----------
    curves : Curves
        The curves.
    k : int, optional
        Read the ideal curve's value at rank ``k``.
    target : float, optional
        Or reach this value.

    Returns
    -------
    dict of str to int or None

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    if (k is None) == (target is None):
        raise InputError("give exactly one of k (read the ideal curve at rank k) or target")
    if k is not None:
        target = float(curves.ideal[_check_rank(k, curves, "k") - 1])
    return {name: rank_reaching(curve, target) for name, curve in curves.runs.items()}


def stopping_rank(curves: Curves) -> int:
    """The stopping rule (section 5): the rank at which the averaged ideal curve turns
    horizontal, capped at the depth n.

    A topic's ideal CG and DCG vectors rise at rank i exactly when its i-th ideal gain
    is > 0, i.e. for i <= R_t, the number of its judged documents with gain > 0 (under
    the curves' gain mapping). Their average over topics therefore rises up to rank
    max_t R_t and is flat after it: the stopping rank is min(n, max_t R_t), the same
    for every measure (the normalised ideal is flat throughout); 0 when no topic has a
    judged document with gain > 0. ``curves.relevant_counts`` holds the R_t (a value
    of n means the ideal may still rise beyond n).

    Parameters
    ----------
    curves : Curves
        The curves.

    Returns
    -------
    int

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    most = int(curves.relevant_counts.max(initial=0))
    return min(curves.depth, most)


def vertical_gaps(curves: Curves, ranks: Sequence[int], *, relative: bool = False) -> dict:
    """The vertical distance between the ideal curve and each run at ``ranks``
    ("the effort wasted on less-than-perfect documents", section 2.2):
    ``ideal[k] - run[k]``, or with ``relative=True`` that gap as a share of the ideal,
    ``(ideal[k] - run[k]) / ideal[k]`` (NaN where the ideal is 0).
    ``{run: array over ranks}``.

    Parameters
    ----------
    curves : Curves
        The curves.
    ranks : sequence of int
        The ranks to read.
    relative : bool, default False
        The gap as a share of the ideal.

    Returns
    -------
    dict of str to numpy.ndarray

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    if isinstance(ranks, (int, np.integer)):
        ranks = [ranks]
    index = np.array([_check_rank(k, curves) - 1 for k in ranks], dtype=np.int64)
    ideal = curves.ideal[index]
    gaps = {}
    for name, curve in curves.runs.items():
        gap = ideal - curve[index]
        if relative:
            with np.errstate(divide="ignore", invalid="ignore"):
                gap = np.where(ideal != 0, gap / np.where(ideal != 0, ideal, 1.0), np.nan)
        gaps[name] = gap
    return gaps


def area_to_ideal(curves: Curves, k: Optional[int] = None) -> dict:
    """The area between the normalised ideal curve and each normalised curve, ranks
    1..k (default n), as a sum over ranks (each rank one unit wide):
    area = sum_{i=1..k} (ideal[i] - v[i]).

    The normalised ideal is 1 at every rank when every topic has a judged document
    with gain > 0; then area = k * (1 - avg-pos(v, k)) (eq. 6): 0 for the ideal, k for
    a curve at 0. Only for nCG and nDCG curves. ``{run: area}``.

    Parameters
    ----------
    curves : Curves
        Normalised (nCG or nDCG) curves.
    k : int, optional
        The last rank of the area (default n).

    Returns
    -------
    dict of str to float

    Raises
    ------
    InputError
        A bad input, measure or option.
    """
    if not curves.normalised:
        raise InputError(f"the area to the ideal is defined for normalised curves (nCG, "
                         f"nDCG), not {curves.measure}")
    k = curves.depth if k is None else _check_rank(k, curves, "k")
    return {name: float(np.sum(curves.ideal[:k] - curve[:k]))
            for name, curve in curves.runs.items()}
