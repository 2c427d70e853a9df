"""What an evaluation gives back: the :class:`Evaluation` (per-topic values and means),
the means' rule (:func:`aggregate`), and the warning for topics left out. Every evaluator
(the graded one, the judgment kinds, the streaming and Dask ones) builds its result with
these, so their means are bit-identical."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import numpy.typing as npt

from cgcore._convert import topic_dicts
from cumgain.common import display
from cumgain.common.optional import require
from cumgain.exceptions import InputError, SumOverflowError
from cumgain.measures import Measure

if TYPE_CHECKING:
    import pandas as pd


_OVERFLOW_ADVICE = ("gains this large cannot be summed in float64 (beyond about 1.8e308): "
                    "scale them down")


class TopicsWarning(UserWarning):
    """Some topics were not evaluated (or scored 0): the run and qrels topic sets differ."""


@dataclass(repr=False)
class Evaluation:
    """Per-topic values and means of an evaluation.

    ``values[name]`` is an array aligned with ``topics`` (in trec_eval's order: byte
    order of the topic id); ``means[name]`` the aggregate (arithmetic mean over the
    evaluated topics; sums for counts; geometric mean for ``gm_map``). Its repr is a
    short summary (counts and the first means); in a notebook, a table of the means.
    (Two trec_eval measures are not numbers: the "mean" of ``runid`` is the run tag, a
    str, and that of ``relstring`` is None.)

    Attributes
    ----------
    topics : tuple of str
        The evaluated topics, in byte order of the id.
    measures : tuple of Measure
        The measures, as parsed.
    values : dict of str to numpy.ndarray
        Per measure name, its per-topic values aligned with ``topics``.
    means : dict of str to float
        Per measure name, the aggregate over the topics.
    run_only_topics, missing_topics, empty_qrels_topics : tuple of str
        The topics left out: in the run only, in the qrels only (scored 0 under
        ``topics="qrels"``), judged without a judgment.
    run_tag : str
        The run's tag (trec_eval's runid).
    policies : dict
        The policies the evaluation used.
    run_tags_agree : bool
        Whether every line of the run had the same tag.
    """

    topics: tuple[str, ...]
    measures: tuple[Measure, ...]
    values: dict[str, npt.NDArray[Any]]
    means: dict[str, float]
    run_only_topics: tuple[str, ...] = ()
    missing_topics: tuple[str, ...] = ()
    empty_qrels_topics: tuple[str, ...] = ()
    run_tag: str = ""
    policies: dict[str, Any] = field(default_factory=dict)
    run_tags_agree: bool = True

    def on_topics(self, topics: Sequence[str]) -> "Evaluation":
        """The evaluation kept on ``topics`` (each one of :attr:`topics`; kept in this
        evaluation's order), its means recomputed over them (:func:`aggregate`)."""
        rows = _topic_rows(self.topics, topics, "evaluated")
        values = {name: np.asarray(column)[rows] for name, column in self.values.items()}
        means = {m.name: aggregate(m, values[m.name], self.run_tag) for m in self.measures}
        return dataclasses.replace(self, topics=tuple(self.topics[t] for t in rows),
                                   values=values, means=means)

    def per_topic(self) -> dict[str, dict[str, float]]:
        """``{topic: {measure: value}}``, pytrec_eval's shape. A measure that is not
        defined on a topic (``Accuracy`` without a (relevant, non-relevant) pair: NaN in
        :attr:`values`, left out of its mean) is left out of that topic's dict, as
        ir_measures leaves it out."""
        names = tuple(measure.name for measure in self.measures)
        columns = [self.values[name] for name in names]
        if all(column.dtype == np.float64 for column in columns):
            stacked = np.empty((len(names), len(self.topics)))
            for m, column in enumerate(columns):
                stacked[m] = column
            result = topic_dicts(tuple(self.topics), names, stacked)
        else:
            rows = zip(*(column.tolist() for column in columns)) if columns \
                else ((),) * len(self.topics)
            result = {topic: dict(zip(names, row)) for topic, row in zip(self.topics, rows)}
        for measure in self.measures:
            if measure.aggregate == "mean_defined":
                for t in np.flatnonzero(np.isnan(self.values[measure.name])).tolist():
                    del result[self.topics[t]][measure.name]
        return result

    def to_dataframe(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per topic and a column per measure (needs pandas)."""
        pd = require("pandas", extra="pandas", for_what="Evaluation.to_dataframe()")
        frame = pd.DataFrame({m.name: self.values[m.name] for m in self.measures},
                             index=pd.Index(list(self.topics), name="query_id"))
        return frame

    def __getitem__(self, name: str) -> float:
        return self.means[name]

    def _head(self) -> str:
        run = f" of run {display.shorten(self.run_tag)!r}" if self.run_tag else ""
        return (f"Evaluation{run}: {display.count(len(self.topics), 'topic')}, "
                f"{display.count(len(self.measures), 'measure')}")

    def __repr__(self) -> str:
        return display.summary(self._head() + "; means", self.means.items())

    def _repr_html_(self) -> str:
        return display.means_table(self._head(), "measure", self.means.items())


def _topic_rows(have: Sequence[str], topics: Sequence[str], what: str) -> np.ndarray:
    """The positions in ``have`` of ``topics`` (each one of them), in ``have``'s order."""
    index = {topic: t for t, topic in enumerate(have)}
    unknown = [topic for topic in topics if topic not in index]
    if unknown:
        raise InputError(f"topic {unknown[0]!r} is not one of the {what} topics")
    return np.array(sorted(index[topic] for topic in set(topics)), dtype=np.intp)


@dataclass(repr=False)
class TieBounds:
    """The best and the worst case of an evaluation over the orders within groups of
    equal scores (:func:`cumgain.evaluate_tie_bounds`).

    Attributes
    ----------
    optimistic, pessimistic : Evaluation
        The run evaluated with each group of equal scores in its best / worst order
        (``ties="optimistic"`` / ``"pessimistic"``).
    """

    optimistic: Evaluation
    pessimistic: Evaluation

    @property
    def topics(self) -> tuple[str, ...]:
        return self.optimistic.topics

    def spread(self, measure: str) -> np.ndarray:
        """Per topic (aligned with :attr:`topics`), optimistic minus pessimistic value
        of ``measure``: how much the order of its ties can move it."""
        return np.asarray(self.optimistic.values[measure], dtype=np.float64) \
            - np.asarray(self.pessimistic.values[measure], dtype=np.float64)

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per numeric measure: ``topics_moved`` (topics whose value the ties move),
        ``mean_spread`` and ``max_spread`` over the topics (0 without topics)."""
        result = {}
        for measure in self.optimistic.measures:
            if measure.kind == "text":
                continue
            spread = np.abs(self.spread(measure.name))
            result[measure.name] = {
                "topics_moved": int(np.count_nonzero(spread > 0)),
                "mean_spread": float(spread.mean()) if len(spread) else 0.0,
                "max_spread": float(spread.max()) if len(spread) else 0.0}
        return result

    def __repr__(self) -> str:
        lines = [f"TieBounds({len(self.topics)} topics; measure: pessimistic .. optimistic "
                 "mean, topics moved)"]
        for name, row in list(self.summary().items())[:10]:
            lines.append(f"  {name}: {self.pessimistic.means[name]:.4f} .. "
                         f"{self.optimistic.means[name]:.4f}, {row['topics_moved']}")
        return "\n".join(lines)


def aggregate(measure: Measure, values: np.ndarray, run_tag: str = "") -> Any:
    """The summary that :attr:`Evaluation.means` reports for ``measure`` over per-topic
    ``values`` (in topic order), by the family's rule: ``S / n`` with ``S = sum_t v_t``
    summed sequentially in topic order, as trec_eval does (``mean``); ``S`` itself for
    counts (``sum``); ``exp(S / n)`` for ``gm_map`` and ``gm_bpref``, whose per-topic
    values are already ``log(max(value, 1e-5))`` (``gmean``); ``S / n`` over the topics
    whose value is not NaN (``mean_defined``: Accuracy, as ir_measures averages it); the
    run tag for ``runid``; None for ``relstring``. A mean over no topic is NaN (a sum is 0).
    A sum of finite values beyond float64's range raises
    :class:`~cumgain.exceptions.SumOverflowError`.

    Pieces of an evaluation (:mod:`cumgain.stream`, :mod:`cumgain.dask`) are combined with
    it, so their means are bit-identical to :func:`evaluate`'s.

    >>> from cumgain.measures import parse_measures
    >>> p5, num_rel = parse_measures(["P_5", "num_rel"])
    >>> aggregate(p5, np.array([0.2, 0.6])), aggregate(num_rel, np.array([3.0, 4.0]))
    (0.4, 7.0)
    """
    rule = measure.aggregate
    if rule == "first":
        return run_tag
    if rule == "none":
        return None
    if rule == "mean_defined":
        values = values[~np.isnan(values)]
    if len(values) == 0:
        return 0.0 if rule == "sum" else math.nan
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.cumsum(values)[-1])  # sequential, in topic order, like trec_eval
    if not math.isfinite(total) and np.isfinite(values).all():
        raise SumOverflowError(
            f"measure {measure.name!r}: the sum of its values over the topics overflows "
            f"float64, so their mean cannot be computed; {_OVERFLOW_ADVICE}",
            sum=measure.name)
    if rule == "sum":
        return total
    if rule == "gmean":
        return math.exp(total / len(values))
    return total / len(values)


def topics_warning(run_only: Sequence[str], missing: Sequence[str], empty: Sequence[str],
                   topics: str) -> str:
    """The text of the :class:`TopicsWarning` for topics left out (or scored 0) under
    the ``topics`` policy; the streaming and Dask evaluators give the same."""
    parts = []
    if run_only:
        parts.append(f"{len(run_only)} run topics have no judgments and are not evaluated "
                     f"(e.g. {', '.join(run_only[:3])})")
    if missing:
        fate = "score 0" if topics == "qrels" else "are skipped"
        parts.append(f"{len(missing)} qrels topics are missing from the run and {fate} "
                     f"(e.g. {', '.join(missing[:3])})")
    if empty:
        parts.append(f"{len(empty)} qrels topics have no judgments (e.g. {empty[0]})")
    return "; ".join(parts)
