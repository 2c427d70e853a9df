"""Judgment groups (trec_eval ``-R qrels_jg``) and the measures averaged over them
(``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``).

A qrels_jg file (``qid jg docno rel``) holds, per topic, several independent sets of
judgments, one per group ``jg`` (different assessors, say). A ``*_avgjg`` measure is
its base measure (``map``, ``P``, ``Rprec_mult``) computed against each group's
judgments alone and averaged over the topic's groups: the values summed in the
groups' byte order, then divided by their number (trec_eval's ``form_res_rels_jg.c``
and ``m_*_avgjg.c``). Each group is evaluated as a topic of its own, against the
topic's ranking, by the ordinary engine.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from cumgain.engine.evaluator import evaluate
from cumgain.engine.kinds import JudgmentKind, register_kind
from cumgain.engine.results import Evaluation, TopicsWarning, aggregate, topics_warning
from cumgain.exceptions import InputError
from cumgain.measures.base import Measure
from cumgain.measures.judgment_groups import base_measure
from cumgain.measures.ranked import gather
from cumgain.trec_io import Qrels, Run, load_run, read_grouped_qrels
from cumgain.types import TopicPolicy



@dataclass(frozen=True, eq=False)
class JudgmentGroups:
    """Judgments in groups: ``qrels`` has one topic per (topic, group), named by its
    position (``"000000000"``, ...) in (topic, group) order; ``topics[i]`` and
    ``groups[i]`` are the topic and group of position ``i``."""

    qrels: Qrels
    topics: tuple[str, ...]
    groups: tuple[str, ...]
    source: str


def load_judgment_groups(source: Any) -> JudgmentGroups:
    """Read a qrels_jg file (trec_eval's ``-R qrels_jg``: ``qid group docno rel``).

    Parameters
    ----------
    source : str or os.PathLike
        The file, plain or gzip; ``"-"`` reads standard input.

    Returns
    -------
    JudgmentGroups

    Raises
    ------
    FormatError
        A malformed line, with the file and line number.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "jg")
    >>> _ = open(path, "w").write("1 a d1 1\\n1 b d1 0\\n1 b d2 1\\n")
    >>> groups = load_judgment_groups(path)
    >>> groups.topics, groups.groups
    (('1', '1'), ('a', 'b'))
    """
    if isinstance(source, JudgmentGroups):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"judgment groups must be read from a path, got "
                         f"{type(source).__name__}")
    grouped = read_grouped_qrels(source)
    pairs = [topic.split("\t") for topic in grouped.topics]
    order = sorted(range(len(pairs)), key=lambda i: (pairs[i][0], pairs[i][1]))
    rows, offsets = gather(grouped.offsets, np.array(order, dtype=np.int64))
    qrels = Qrels(tuple(f"{i:09d}" for i in range(len(order))), offsets, grouped.docnos[rows],
                  grouped.relevance[rows], grouped.source,
                  None if grouped.lines is None else grouped.lines[rows])
    return JudgmentGroups(qrels, tuple(pairs[i][0] for i in order),
                          tuple(pairs[i][1] for i in order), grouped.source)


def evaluate_groups(groups: JudgmentGroups, run: Any, measures: list[Measure], *,
                    topics: TopicPolicy, warn: bool, **policies: Any) -> Evaluation:
    """:func:`cumgain.evaluate` for judgment groups: each measure's base measure per
    group, averaged over each topic's groups."""
    for measure in measures:
        if measure.spec.input != "judgment_groups" and measure.family not in ("num_q",
                                                                               "runid"):
            raise InputError(f"measure {measure.name!r} cannot be computed from judgment "
                             "groups (-R qrels_jg): only map_avgjg, P_avgjg, "
                             "Rprec_mult_avgjg, num_q and runid can")
    run = load_run(run)
    run_index = {topic: i for i, topic in enumerate(run.topics)}
    qrels_topics = set(groups.topics)
    run_only = tuple(sorted(set(run.topics) - qrels_topics))
    missing = tuple(sorted(qrels_topics - set(run_index)))
    if topics == "strict" and (run_only or missing):
        raise InputError(f"topics differ: {len(run_only)} in the run only, {len(missing)} in "
                         "the judgment groups only (topics='strict')")
    if warn and (run_only or missing):
        warnings.warn(topics_warning(run_only, missing, (), topics), TopicsWarning, stacklevel=3)
    # the run's rows, once per group of its topic (groups of topics it lacks: none)
    present = [i for i, topic in enumerate(groups.topics) if topic in run_index]
    positions = np.array([run_index[groups.topics[i]] for i in present], dtype=np.int64)
    rows, offsets = gather(run.offsets, positions)
    grouped_run = Run(tuple(groups.qrels.topics[i] for i in present), offsets,
                      run.docnos[rows], run.scores[rows], run.tag, run.source,
                      None if run.lines is None else run.lines[rows])
    base = [base_measure(m) for m in measures if m.spec.input == "judgment_groups"]
    inner = evaluate(groups.qrels, grouped_run, base, topics=topics, warn=False, **policies) \
        if base else None

    evaluated = sorted(qrels_topics) if topics == "qrels" else sorted(qrels_topics & set(run_index))
    index = {topic: t for t, topic in enumerate(evaluated)}
    values = {}
    for measure in measures:
        if measure.family == "num_q":
            values[measure.name] = np.ones(len(evaluated))
            continue
        if measure.family == "runid":
            values[measure.name] = np.array([run.tag] * len(evaluated), dtype=object)
            continue
        column = inner.values[base_measure(measure).name]
        sums, counts = np.zeros(len(evaluated)), np.zeros(len(evaluated))
        for group_topic, value in zip(inner.topics, column.tolist()):   # in group order
            t = index[groups.topics[int(group_topic)]]
            sums[t] += value
            counts[t] += 1
        values[measure.name] = np.where(counts > 1, sums / np.maximum(counts, 1), sums)
    means = {m.name: aggregate(m, values[m.name], run.tag) for m in measures}
    policies = dict(inner.policies if inner is not None else {}, topics=topics)
    return Evaluation(topics=tuple(evaluated), measures=tuple(measures), values=values,
                      means=means, run_only_topics=run_only,
                      missing_topics=missing if topics != "strict" else (),
                      run_tag=run.tag, policies=policies)


register_kind(JudgmentKind("judgment_groups", JudgmentGroups, evaluate_groups,
                           "trec_eval -R qrels_jg; cumgain.load_judgment_groups"))
