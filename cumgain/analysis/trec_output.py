"""trec_eval's measure selection and text output, reproduced byte for byte.

Only formatting and trec_eval's command-line rules live here; every number comes
from :func:`cumgain.evaluate`, and what to print of a measure from its family
(:mod:`cumgain.measures`).

Measure selection (trec_eval.c ``mark_measure`` and each measure's ``init``):

* ``-m name`` marks a measure; ``-m name.params`` marks it and records the
  parameters. A measure marked several times uses the **first** parameter list
  given for it anywhere on the command line (``-m P.5 -m P.10`` gives P_5 only;
  ``-m P -m P.5`` also gives P_5 only), or its defaults if none was given.
* Nicknames mark several measures (``official``, the default when no ``-m`` is given,
  ``all_trec``, ``set``, ``prefs``, ``all_prefs``, ``qrels_jg``: measures.c).
* Measures print in trec_eval's registry order, whatever the command-line order:
  :data:`PRINT_ORDER`, then their parameters in order. Names trec_eval does not know
  (``nDCG@10(discount=tois)``, ``CG@5``, ...) are a cumgain extension; they print in
  the slot of their trec_eval family if they have one, otherwise after all others.

Output (``meas_print_single.c``, ``meas_print_final.c``): one line per value,
``printf("%-22s\\t%s\\t%6.4f\\n", name, qid, value)``; counts print as integers
(``%ld``), ``runid`` prints the run tag and ``relstring`` its string in quotes. With
``-q`` every topic's block comes first (topics in byte order of the id), then the
summary (``all``) block. A family prints per topic and in the summary as it declares
(``runid``, ``num_q``, ``gm_map``, ``gm_bpref`` in the summary only, ``relstring`` per
topic only). With -Z, every value but the text ones prints as ``Z%-22s\\t%s\\t%6.4f``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional, Sequence

import numpy as np

from cumgain.exceptions import InputError
from cumgain.measures import FAMILIES, NICKNAMES, TREC_ORDER, Measure
from cumgain.measures.trec_names import NEW_IN_10

if TYPE_CHECKING:
    from cumgain.engine.results import Evaluation

#: The order in which trec_eval 10.0 prints measures (its registry, measures.c).
PRINT_ORDER = TREC_ORDER

# Families of the cumgain extensions that have a trec_eval slot.
_SLOT_OF_FAMILY = {"nDCG": "ndcg_cut"}


class Selection:
    """The measures one trec_eval command line asks for: ``spellings`` go to
    :func:`cumgain.evaluate` as they are."""

    def __init__(self, spellings: list[str]):
        self.spellings = spellings

    def __repr__(self) -> str:
        return f"Selection(spellings={self.spellings})"


def select_measures(arguments: Sequence[str], version: str = "10") -> Selection:
    """Resolve the ``-m`` arguments of one command line, with trec_eval's rules;
    ``version`` "9": 9.0.8's nicknames (without the measures new in 10.0).

    >>> select_measures(["P.5", "P.10", "map"]).spellings
    ['P.5', 'map']
    >>> select_measures(["official"]).spellings[:3]
    ['runid', 'num_q', 'num_ret']
    """
    if not arguments:
        arguments = ["official"]
    marked: dict = {}          # trec_eval family -> None (an ordered set)
    parameters: dict = {}      # family -> the first parameter list given
    extensions: list = []      # cumgain spellings trec_eval does not know
    for argument in arguments:
        name, dot, params = argument.partition(".")
        trec_family = name in FAMILIES and FAMILIES[name].trec is not None
        if dot and not params and (name in NICKNAMES or trec_family):
            raise InputError(f"improper measure in parameter {argument!r} (nothing after '.')")
        if name in NICKNAMES:           # parameters after a nickname are ignored
            marked.update(dict.fromkeys(member for member in NICKNAMES[name]
                                        if version != "9" or member not in NEW_IN_10))
        elif trec_family:
            marked[name] = None
            if dot:
                parameters.setdefault(name, params)
        else:
            extensions.append(argument)     # validated by the measure parser
    spellings = [f"{family}.{parameters[family]}" if family in parameters else family
                 for family in marked]
    return Selection(spellings + extensions)


def print_order(measures: Iterable[Measure]) -> list[Measure]:
    """The measures in trec_eval's print order (stable for equal keys)."""
    def key(item: tuple[int, Measure]) -> tuple[int, int]:
        index, measure = item
        slot = _SLOT_OF_FAMILY.get(measure.family, measure.family)
        rank = PRINT_ORDER.index(slot) if slot in PRINT_ORDER else len(PRINT_ORDER)
        return (rank, index)
    return [measure for _, measure in sorted(enumerate(measures), key=key)]


GM_FLOOR = 1e-5     # trec_eval's MIN_GEO_MEAN


def summary_without(result: Evaluation, hidden: Iterable[str]) -> dict[str, float]:
    """The summary values trec_eval 9.0.8 prints under ``-c``: it evaluates only the
    topics the run has, sums their values in topic order and divides by the number of
    qrels topics; a geometric mean adds ``n_missing * log(1e-5)`` to its sum at the end
    (meas_avg.c). (10.0 evaluates the missing topics too, on a fake ranking, as
    cumgain's means do.)"""
    from cumgain.engine.results import aggregate

    hidden = set(hidden)
    visible = np.array([topic not in hidden for topic in result.topics], dtype=bool)
    n_all, n_hidden = len(result.topics), int((~visible).sum())
    means = dict(result.means)
    for measure in result.measures:
        if measure.kind == "text" or measure.family == "num_q":
            continue
        values = np.asarray(result.values[measure.name], dtype=np.float64)[visible]
        total = float(np.cumsum(values)[-1]) if len(values) else 0.0
        if measure.aggregate == "sum":
            means[measure.name] = total
        elif measure.aggregate == "gmean":
            means[measure.name] = math.exp((total + n_hidden * math.log(GM_FLOOR)) / n_all)
        else:
            means[measure.name] = total / n_all if n_all else aggregate(measure, values)
    return means


def value_line(name: str, qid: str, value: Any, kind: str, zscores: bool = False) -> str:
    """One output line, ``%-22s\\t%s\\t%6.4f`` (``%ld`` for counts, the text for
    ``text`` values), without newline; with ``zscores``, ``Z%-22s\\t%s\\t%6.4f``."""
    if kind == "text":
        return f"{name:<22}\t{qid}\t{value}"
    if zscores:
        return f"Z{name:<22}\t{qid}\t{value:6.4f}"
    if kind == "count":
        return f"{name:<22}\t{qid}\t{int(value)}"
    return f"{name:<22}\t{qid}\t{value:6.4f}"


def trec_lines(result: Evaluation, *, per_topic: bool, summary: bool,
               printed: Optional[set[str]] = None, hidden_topics: Iterable[str] = (),
               summary_num_rel: Optional[float] = None,
               zscores: bool = False) -> Iterator[str]:
    """The lines trec_eval prints for an :class:`~cumgain.engine.evaluator.Evaluation`.

    ``hidden_topics`` are evaluated (they count in the means) but not printed per
    topic (trec_eval 9.0.8 under ``-c``). ``printed``: the names of the measures to
    print (default: all of ``result``). ``summary_num_rel`` replaces the summary
    ``num_rel`` (trec_eval's ``-c`` quirk). ``zscores``: the values are z-scores (-Z).
    """
    measures = print_order(m for m in result.measures if printed is None or m.name in printed)
    if per_topic:
        hidden = set(hidden_topics)
        columns = []
        for m in measures:
            if not m.spec.per_topic:
                continue
            values = result.values[m.name]
            if m.kind == "text":
                values = [f"'{text}'" for text in values]
            columns.append((m.name, m.kind, np.asarray(values).tolist()))
        for t, topic in enumerate(result.topics):
            if topic in hidden:
                continue
            for name, kind, values in columns:
                yield value_line(name, topic, values[t], kind, zscores)
    if summary:
        for measure in measures:
            if not measure.spec.summary:
                continue
            value = result.means[measure.name]
            if measure.family == "num_rel" and measure.relevance_level is None \
                    and summary_num_rel is not None:
                value = summary_num_rel
            yield value_line(measure.name, "all", value, measure.kind, zscores)
