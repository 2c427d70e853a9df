"""The input of the significance tests: a topics x runs table of per-topic scores,
paired by topic (:class:`ScoreTable`), and :func:`score_table`, which builds it from
``{run: Evaluation}`` plus a measure name, ``{run: {topic: value}}``, a pandas DataFrame
(rows topics, columns runs) or a 2-D array with run names, with the topic policy
(``"strict"`` or ``"intersect"``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, get_args

import numpy as np

from cumgain.exceptions import InputError
from cumgain.types import ScoreTopics

TOPIC_POLICIES: tuple[ScoreTopics, ...] = get_args(ScoreTopics)


@dataclass(frozen=True)
class ScoreTable:
    """Per-topic scores of several runs, paired by topic.

    ``values[t, r]`` is run ``runs[r]``'s score on topic ``topics[t]`` (float64, finite).
    ``dropped`` maps a run to the topics it had that were left out under
    ``topics="intersect"`` (empty otherwise).

    Attributes
    ----------
    runs : tuple of str
        The runs, one column each.
    topics : tuple of str
        The topics, one row each.
    values : numpy.ndarray
        The topics x runs scores.
    measure : str, optional
        The measure the scores are of.
    dropped : mapping of str to tuple of str
        Per run, the topics left out (``topics="intersect"``).
    """

    runs: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    measure: Optional[str] = None
    dropped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def means(self) -> dict[str, float]:
        """``{run: mean over the topics}``."""
        return dict(zip(self.runs, self.values.mean(axis=0).tolist()))

    def column(self, run: str) -> np.ndarray:
        """The scores of one run, aligned with ``topics``."""
        return self.values[:, self._index(run)]

    def _index(self, run: str) -> int:
        try:
            return self.runs.index(run)
        except ValueError:
            raise InputError(f"no run named {run!r}; the runs are {list(self.runs)}") from None


def _finite_score(value: Any, run: str, topic: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"run {run!r}, topic {topic!r}: score {value!r} is not a number") \
            from None
    if not math.isfinite(number):
        raise InputError(f"run {run!r}, topic {topic!r}: score {number} is not finite")
    return number


def _is_dataframe(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns")


def _columns_from_mapping(data: Mapping, measure: Optional[str]) -> tuple:
    """``[(run, {topic: score})]`` and the measure name, from Evaluations or dicts."""
    from cumgain.engine.results import Evaluation

    columns = []
    evaluations = [isinstance(value, Evaluation) for value in data.values()]
    if any(evaluations) and not all(evaluations):
        raise InputError("give either Evaluations or {topic: score} dicts for every run, "
                         "not a mix")
    if all(evaluations):
        measure = _evaluation_measure(data, measure)
        for run, evaluation in data.items():
            scores = evaluation.values[measure]
            columns.append((str(run), dict(zip(evaluation.topics, np.asarray(scores).tolist()))))
        return columns, measure
    for run, scores in data.items():
        if not isinstance(scores, Mapping):
            raise InputError(f"run {run!r}: expected an Evaluation or a {{topic: score}} dict, "
                             f"got {type(scores).__name__}")
        column = {}
        for topic, value in scores.items():
            key = str(topic)
            if key in column:
                raise InputError(f"run {run!r}: topic {key!r} appears twice")
            column[key] = _finite_score(value, str(run), topic)
        columns.append((str(run), column))
    return columns, measure


def _evaluation_measure(data: Mapping, measure: Optional[str]) -> str:
    """The key of ``measure`` in the Evaluations' values (spellings are normalised)."""
    first = next(iter(data.values()))
    available = list(first.values)
    if measure is None:
        if len(available) != 1:
            raise InputError(f"name the measure to compare; the evaluations have {available}")
        measure = available[0]
    if measure not in first.values:
        from cumgain.measures import parse_measure
        names = [m.name for m in parse_measure(measure)]
        if len(names) != 1 or names[0] not in first.values:
            raise InputError(f"measure {measure!r} is not in the evaluations; they have "
                             f"{available}")
        measure = names[0]
    for run, evaluation in data.items():
        if measure not in evaluation.values:
            raise InputError(f"run {run!r}: its evaluation has no measure {measure!r}")
        kinds = {m.name: m.kind for m in evaluation.measures}
        if kinds.get(measure) == "text":
            raise InputError(f"measure {measure!r} is text, not a score to compare")
    return measure


def _columns_from_matrix(values: np.ndarray, runs: Sequence[str], topics: Sequence) -> list:
    """Columns of a topics x runs matrix; NaN marks a topic the run does not cover."""
    if np.isinf(values).any():
        t, r = np.argwhere(np.isinf(values))[0]
        raise InputError(f"run {runs[r]!r}, topic {topics[t]!r}: score {values[t, r]} is not "
                         "finite")
    return [(run, {topic: float(values[t, r]) for t, topic in enumerate(topics)
                   if not math.isnan(values[t, r])})
            for r, run in enumerate(runs)]


def _check_names(runs: Sequence[str]) -> None:
    seen = set()
    for run in runs:
        if run in seen:
            raise InputError(f"run name {run!r} appears twice")
        seen.add(run)


def score_table(data: Any, measure: Optional[str] = None, *,
                runs: Optional[Sequence[str]] = None, topics: ScoreTopics = "strict"
                ) -> ScoreTable:
    """A topics x runs table of per-topic scores, paired by topic.

    ``data``: ``{run: Evaluation}`` (with ``measure``, in any spelling the evaluator
    accepted; optional when the evaluations hold one measure), ``{run: {topic: score}}``,
    a pandas DataFrame (rows topics, columns runs; NaN = topic not covered), a 2-D
    array (rows topics, NaN = not covered) with ``runs`` naming its columns, or a
    :class:`ScoreTable` (returned as it is).

    ``topics``: ``"strict"`` (default) raises :class:`InputError` naming each run and
    its topic count when the runs cover different topics; ``"intersect"`` keeps the
    topics every run covers and records the others in ``ScoreTable.dropped``.

    Parameters
    ----------
    data : mapping of str to Evaluation or dict, or ScoreTable
        ``{run: Evaluation}``, ``{run: {topic: score}}`` or a :class:`ScoreTable`.
    measure : str, optional
        The measure, when the evaluations hold several.
    runs : sequence of str, optional
        The runs and their order (default: all, in the data's order).
    topics : {"strict", "intersect"}, default "strict"
        Require the same topics in every run, or keep the ones they share.

    Returns
    -------
    ScoreTable

    Raises
    ------
    InputError
        Bad data or options.

    Examples
    --------
    >>> table = score_table({"A": {"q1": 0.5, "q2": 0.25}, "B": {"q1": 0.75, "q2": 0.5}})
    >>> table.runs, table.topics, table.values.tolist()
    (('A', 'B'), ('q1', 'q2'), [[0.5, 0.75], [0.25, 0.5]])
    """
    if isinstance(data, ScoreTable):
        return data
    if topics not in TOPIC_POLICIES:
        raise InputError(f"topics must be one of {TOPIC_POLICIES}, got {topics!r}")
    order = None
    if _is_dataframe(data):
        names = [str(column) for column in data.columns] if runs is None else \
            [str(run) for run in runs]
        if len(names) != data.shape[1]:
            raise InputError(f"{len(names)} run names for a DataFrame of {data.shape[1]} columns")
        try:
            matrix = data.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as error:
            raise InputError(f"the DataFrame's scores are not all numbers: {error}") from None
        order = [str(topic) for topic in data.index]
        if len(set(order)) != len(order):
            twice = next(topic for topic in order if order.count(topic) > 1)
            raise InputError(f"topic {twice!r} appears twice in the DataFrame's index")
        columns = _columns_from_matrix(matrix, names, order)
    elif isinstance(data, Mapping):
        if runs is not None:
            raise InputError("runs= names the columns of an array; a dict already names its runs")
        columns, measure = _columns_from_mapping(data, measure)
    else:
        try:
            matrix = np.asarray(data, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"cannot read a score table from {type(data).__name__}; give a "
                             "dict, a DataFrame or a topics x runs array") from None
        if matrix.ndim != 2:
            raise InputError(f"a score array must be 2-D (topics x runs), got shape "
                             f"{matrix.shape}")
        if runs is None:
            raise InputError("name the runs of a score array with runs=[...] (one per column)")
        if len(runs) != matrix.shape[1]:
            raise InputError(f"{len(runs)} run names for an array of {matrix.shape[1]} columns")
        order = [str(t) for t in range(matrix.shape[0])]
        columns = _columns_from_matrix(matrix, [str(run) for run in runs], order)
    names = [run for run, _ in columns]
    _check_names(names)
    if len(names) < 2:
        raise InputError(f"comparing runs needs at least 2 runs, got {len(names)}")

    covered = [set(column) for _, column in columns]
    common = set.intersection(*covered)
    dropped = {}
    if any(len(topic_set) != len(common) for topic_set in covered):
        if topics == "strict":
            counts = ", ".join(f"{run} {len(topic_set)}" for run, topic_set in zip(names, covered))
            raise InputError(
                f"the runs cover different topics ({counts}; {len(common)} common to all); "
                "pass topics='intersect' to compare on the common topics")
        dropped = {run: tuple(sorted(topic_set - common))
                   for run, topic_set in zip(names, covered) if topic_set - common}
    chosen = [t for t in order if t in common] if order is not None else sorted(common)
    if len(chosen) < 2:
        raise InputError(f"comparing runs needs at least 2 topics scored by every run, got "
                         f"{len(chosen)}")
    values = np.array([[column[topic] for _, column in columns] for topic in chosen],
                      dtype=np.float64)
    values.setflags(write=False)
    return ScoreTable(runs=tuple(names), topics=tuple(chosen), values=values,
                      measure=measure, dropped=dropped)
