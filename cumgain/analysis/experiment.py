"""Several runs on several measures, with significance tests, in one call:
:func:`compare` (``cumgain.compare``), as ranx's ``compare`` and PyTerrier's
``pt.Experiment`` offer it.

Each run is evaluated once with every measure (:func:`cumgain.evaluate`, the qrels read
once), then compared measure by measure (:func:`cumgain.stats.compare`, the same test,
correction and seed for each). The result, a :class:`RunComparison`, is a table of
runs x measures: means, the significance marks of :mod:`cumgain.report` (a run's mean
followed by the keys of the runs it is significantly better than; with a baseline,
``+`` / ``-`` against it), the best mean of each measure in bold, win / tie / loss counts
per pair, and its JSON (saved and loaded back, the same object).
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from cumgain import report, stats
from cumgain.common import display
from cumgain.common.optional import require
from cumgain.engine.evaluator import evaluate
from cumgain.exceptions import InputError
from cumgain.io.run_names import run_names
from cumgain.measures import parse_measures
from cumgain.trec_io import prepare_qrels

__all__ = ["RunComparison", "compare"]

FORMAT = "cumgain-run-comparison"


@dataclass(frozen=True, repr=False, eq=False)
class RunComparison:
    """Runs x measures with significance: ``comparisons`` maps each measure to its
    :class:`cumgain.stats.Comparison` (the same runs and topics in each); ``baseline``:
    the run the others were compared with (None: all pairs); ``alpha``: the level the
    win marks and :meth:`significant` use. Two are equal when they hold the same
    results (their JSON is the same)."""

    comparisons: Mapping[str, stats.Comparison]
    baseline: Optional[str] = None
    alpha: float = 0.05

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(self.comparisons)

    @property
    def runs(self) -> tuple[str, ...]:
        return next(iter(self.comparisons.values())).runs

    @property
    def topics(self) -> tuple[str, ...]:
        return next(iter(self.comparisons.values())).table.topics

    @property
    def means(self) -> dict[str, dict[str, float]]:
        """``{run: {measure: mean over the topics}}``."""
        return {run: {m: c.means[run] for m, c in self.comparisons.items()} for run in self.runs}

    def significant(self, measure: str) -> tuple[stats.PairwiseResult, ...]:
        """The pairs of ``measure`` significant at :attr:`alpha` (after correction)."""
        return self._comparison(measure).significant(self.alpha)

    def win_tie_loss(self, measure: str) -> dict[tuple[str, str], tuple[int, int, int]]:
        """``{(run_a, run_b): (wins, ties, losses)}``: on how many topics run_a's value of
        ``measure`` is above, equal to, below run_b's (every ordered pair of runs)."""
        table = self._comparison(measure).table
        counts = {}
        for a, run_a in enumerate(table.runs):
            for b, run_b in enumerate(table.runs):
                if a != b:
                    x, y = table.values[:, a], table.values[:, b]
                    counts[(run_a, run_b)] = (int((x > y).sum()), int((x == y).sum()),
                                              int((x < y).sum()))
        return counts

    def report(self) -> report.Report:
        """The table as :mod:`cumgain.report` draws it: a row per measure, a column per
        run, means with significance marks (:func:`~cumgain.report.significance_table`,
        or :func:`~cumgain.report.baseline_table` against the baseline)."""
        rows = list(self.comparisons.items())
        if self.baseline is not None:
            return report.baseline_table(rows, self.baseline)
        return report.significance_table(rows, runs_as="columns", width=None)

    def _best(self) -> dict[str, str]:
        """The run with the highest mean of each measure (the first given on a tie)."""
        return {m: max(self.runs, key=lambda run: (c.means[run], -self.runs.index(run)))
                for m, c in self.comparisons.items()}

    def _marked_rows(self, table: report.Report) -> list:
        """Per measure: the label and, per column of ``table`` (:meth:`report`), ``(text,
        marker, whether it is the measure's best mean)``."""
        best = self._best()
        return [(label, [(table._text(cell), cell.marker, run == best[measure])
                         for run, cell in zip(table.columns, cells)])
                for (label, cells, _), measure in zip(table.rows, self.measures)]

    def to_markdown(self) -> str:
        """The table in markdown, the best mean of each measure in bold, then the legend."""
        table, escape = self.report(), report._md_escape
        lines = ["| measure | " + " | ".join(map(escape, table.columns)) + " |",
                 "|---|" + "---:|" * len(table.columns)]
        for label, texts in self._marked_rows(table):
            lines.append(f"| {escape(label)} | " + " | ".join(
                (f"**{text}**" if best else text) + (f" {escape(marker)}" if marker else "")
                for text, marker, best in texts) + " |")
        return "\n".join(lines + [""] + [escape(note) for note in table.notes]) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular``, the best mean of each measure in bold and the marks as
        superscripts; the legend as LaTeX comments."""
        table = self.report()
        escape = report._latex_escape
        lines = [f"\\begin{{tabular}}{{l{'r' * len(table.columns)}}}", "\\toprule",
                 " & ".join(["measure"] + [escape(run) for run in table.columns]) + " \\\\",
                 "\\midrule"]
        for label, texts in self._marked_rows(table):
            cells = [(f"\\textbf{{{text}}}" if best else text)
                     + (f"$^{{{marker.replace(' ', chr(92) + ',')}}}$" if marker else "")
                     for text, marker, best in texts]
            lines.append(" & ".join([escape(label)] + cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines + [f"% {note}" for note in table.notes]) + "\n"

    def to_dataframe(self) -> Any:
        """A pandas DataFrame, a row per run: each measure's mean, and with a baseline
        each measure's corrected p-value against it and its win / tie / loss counts
        (needs pandas)."""
        pd = require("pandas", extra="pandas", for_what="RunComparison.to_dataframe()")
        rows = []
        for run in self.runs:
            row: dict[str, Any] = {"run": run}
            for measure, comparison in self.comparisons.items():
                row[measure] = comparison.means[run]
                if self.baseline is not None:
                    if run == self.baseline:
                        row[f"{measure} p-value"] = math.nan
                        row[f"{measure} win/tie/loss"] = ""
                    else:
                        pair = comparison.pair(run, self.baseline)
                        row[f"{measure} p-value"] = pair.p_corrected
                        wins = self.win_tie_loss(measure)[(run, self.baseline)]
                        row[f"{measure} win/tie/loss"] = "/".join(map(str, wins))
            rows.append(row)
        return pd.DataFrame(rows).set_index("run")

    def __str__(self) -> str:
        return self.to_markdown()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunComparison) and self.to_json() == other.to_json()

    __hash__ = None     # type: ignore[assignment]

    def __repr__(self) -> str:
        return display.summary(
            f"RunComparison: {display.count(len(self.runs), 'run')} x "
            f"{display.count(len(self.measures), 'measure')}, "
            f"{display.count(len(self.topics), 'topic')}, {self._test()}; best",
            self._best().items())

    def _test(self) -> str:
        first = next(iter(self.comparisons.values()))
        return f"{first.test} ({first.correction})"

    def _repr_html_(self) -> str:
        table = self.report()
        rows = [(label, *texts) for label, texts in self._marked_rows(table)]
        pairs = [(f"{p.run_a} vs {p.run_b}", (f"{p.p_value:.3g}", ""),
                  (f"{p.p_corrected:.3g}", "*" if p.significant(self.alpha) else ""))
                 for c in self.comparisons.values() for p in c.pairs]
        labels = [f"{measure}: " for measure, c in self.comparisons.items() for _ in c.pairs]
        pairs = [(label + name, *rest) for label, (name, *rest) in zip(labels, pairs)]
        return (display.html_table(f"{self._test()}, {len(self.topics)} topics",
                                   ("measure", *table.columns), rows, table.notes)
                + display.html_table("pairs", ("pair", "p-value", "corrected"), pairs, ()))

    def _comparison(self, measure: str) -> stats.Comparison:
        if measure not in self.comparisons:
            raise InputError(f"no measure {measure!r}; the measures are {list(self.measures)}")
        return self.comparisons[measure]

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> str:
        """The whole comparison as JSON, floats at full precision (loaded back by
        :meth:`from_json` into an equal object)."""
        return json.dumps({"format": FORMAT, "version": 1, "baseline": self.baseline,
                           "alpha": self.alpha,
                           "comparisons": {m: _plain(c) for m, c in self.comparisons.items()}})

    @classmethod
    def from_json(cls, text: str) -> "RunComparison":
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                raise ValueError("not a cumgain run comparison")
            comparisons = {m: _comparison_of(c) for m, c in data["comparisons"].items()}
            return cls(comparisons, data["baseline"], float(data["alpha"]))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise InputError(f"not a saved RunComparison: {error}") from None


def _plain(obj: Any) -> Any:
    """A dataclass tree as JSON-ready values (arrays as lists, tuples as lists)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Mapping):
        return {key: _plain(value) for key, value in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [_plain(item) for item in obj]
    return obj


def _comparison_of(data: dict) -> stats.Comparison:
    table = data["table"]
    score_table = stats.ScoreTable(
        tuple(table["runs"]), tuple(table["topics"]),
        np.asarray(table["values"], dtype=np.float64).reshape(len(table["topics"]),
                                                               len(table["runs"])),
        table["measure"], {run: tuple(t) for run, t in table["dropped"].items()})
    omnibus = data["omnibus"]
    pairs = tuple(stats.PairwiseResult(**{
        **pair, "ci": stats.ConfidenceInterval(**pair["ci"]) if pair["ci"] else None})
        for pair in data["pairs"])
    return stats.Comparison(
        score_table, data["test"], data["posthoc"], data["correction"],
        stats.OmnibusResult(**{**omnibus, "df": tuple(omnibus["df"])}) if omnibus else None,
        pairs, data["baseline"], data["protected"], data["seed"])


def compare(qrels: Any, runs: Union[Mapping[str, Any], Sequence[Any]], measures: Any, *,
            test: stats.StatsTest = "friedman", correction: stats.Correction = "holm",
            baseline: Optional[str] = None, alpha: float = 0.05, seed: int = 0,
            confidence_level: Optional[float] = None,
            **options: Any) -> RunComparison:
    """Evaluate every run and compare them on every measure.

    Parameters
    ----------
    qrels : path, dict, DataFrame, rows or prepared judgments
        Anything :func:`cumgain.evaluate` takes; read once (:func:`cumgain.prepare_qrels`).
    runs : mapping name -> run, or a sequence of runs
        Runs as :func:`cumgain.evaluate` takes them; a sequence of files is named as the
        command line names them (:mod:`cumgain.io.run_names`), other runs ``run1``, ...
    measures : str or list of str
        Measure spellings (or ir_measures measure objects).
    test, correction : str
        As in :func:`cumgain.stats.compare` (default: Friedman with Conover's pairs,
        Holm's correction).
    baseline : str, optional
        Compare each run with this one only (the correction family: those pairs), as
        PyTerrier's ``baseline=``.
    alpha : float
        The level the marks use (and :meth:`RunComparison.significant`).
    seed : int
        The seed of the randomization test and the bootstrap (default 0: the same result
        every time).
    confidence_level : float, optional
        Also give each pair a bootstrap confidence interval of its mean difference.
    **options
        The evaluation's policies (``topics``, ``ties``, ``depth``, ``judged_only``,
        ``relevance_level``, ``score_precision``, ...) as in :func:`cumgain.evaluate`.

    Returns
    -------
    RunComparison

    Raises
    ------
    InputError
        Fewer than two runs, an unknown measure or baseline, a bad test or policy.

    Examples
    --------
    >>> qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 2}, "3": {"d": 1, "e": 1}}
    >>> runs = {"A": {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}, "3": {"d": 1.0, "e": 2.0}},
    ...         "B": {"1": {"b": 2.0, "a": 1.0}, "2": {"x": 1.0}, "3": {"x": 2.0, "d": 1.0}}}
    >>> result = compare(qrels, runs, ["P@1", "AP"], test="ttest")
    >>> result.means["A"]["P@1"], result.win_tie_loss("P@1")[("A", "B")]
    (1.0, (3, 0, 0))
    """
    if isinstance(runs, (str, bytes)) or not isinstance(runs, (Mapping, Sequence)):
        raise InputError("runs must map names to runs, or be a list of runs")
    if len(runs) < 2:
        raise InputError(f"compare needs at least two runs, got {len(runs)}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if baseline is not None and isinstance(runs, Mapping) and baseline not in runs:
        raise InputError(f"baseline {baseline!r} is not one of the runs {list(runs)}")
    parse_measures(measures)                    # (an unknown measure: before any work)
    judgments = prepare_qrels(qrels)
    options.setdefault("warn", False)
    given = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    results = [evaluate(judgments, run, measures, **options) for run in given]
    evaluations = dict(zip(_names(runs, results), results))
    if baseline is not None and baseline not in evaluations:
        raise InputError(f"baseline {baseline!r} is not one of the runs {list(evaluations)}")
    names = list(results[0].means)
    comparisons = {name: stats.compare(evaluations, name, test=test, correction=correction,
                                       baseline=baseline, seed=seed,
                                       confidence_level=confidence_level)
                   for name in names}
    return RunComparison(comparisons, baseline, alpha)


def _names(runs: Any, results: list) -> list[str]:
    """The runs' names: the mapping's keys; for a list, as the command line names runs
    (their tags, else their file names: :mod:`cumgain.io.run_names`), else run1, ..."""
    if isinstance(runs, Mapping):
        return [str(name) for name in runs]
    if all(isinstance(run, str) for run in runs):
        return run_names(list(runs), results)
    return [f"run{i + 1}" for i in range(len(runs))]
