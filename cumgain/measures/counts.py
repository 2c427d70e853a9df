"""Counts (trec_eval's ``runid``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``,
``num_nonrel_judged_ret``): summed over topics, printed as integers.

R = judgments at the relevance level or above; N = ranked documents (after -M and -J).
"""
from __future__ import annotations

import numpy as np

from cgcore import _measures as kernels
from cumgain.measures.base import Family, register
from cumgain.measures.batch import NONRELEVANT, Batch


def _runid(measures: list, batch: Batch) -> list:
    tag = batch.shared.run_tag
    column = np.empty(batch.n_topics, dtype=object)
    column.fill(tag)
    return [column for _ in measures]


def _num_q(measures: list, batch: Batch) -> list:
    return [np.ones(batch.n_topics) for _ in measures]


def _num_ret(measures: list, batch: Batch) -> list:
    return [batch.num_retrieved(m).astype(np.float64) for m in measures]


def _num_rel(measures: list, batch: Batch) -> list:
    return [batch.num_relevant(m) for m in measures]


def _num_rel_ret(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        columns.append(kernels.relevant_in_top(batch.relevant(measure), ranked.offsets,
                                               np.diff(ranked.offsets)))
    return columns


def _num_nonrel_judged_ret(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        nonrelevant = (batch.status(measure) == NONRELEVANT).astype(np.float64)
        columns.append(kernels.relevant_in_top(nonrelevant, ranked.offsets,
                                               np.diff(ranked.offsets)))
    return columns


def _redirect_num_ret(options: dict, cutoff) -> str:
    """ir_measures: NumRet(rel=k) counts the retrieved documents at level k or above."""
    return "num_rel_ret" if "relevance_level" in options else "num_ret"


register(
    Family("runid", "the run's tag (the last line's, as trec_eval reads it)", _runid,
           trec="plain", aggregate="first", kind="text", per_topic=False,
           source="trec_eval m_runid.c"),
    Family("num_q", "number of topics evaluated", _num_q, trec="plain", ir_names=("NumQ",),
           aggregate="sum", kind="count", per_topic=False, source="trec_eval m_num_q.c"),
    Family("num_ret", "N: documents retrieved", _num_ret, trec="plain",
           ir_names=("NumRet",), ir_params=("rel",), redirect=_redirect_num_ret,
           aggregate="sum", kind="count", source="trec_eval m_num_ret.c"),
    Family("num_rel", "R: judgments at the relevance level or above", _num_rel, trec="plain",
           ir_names=("NumRel",), ir_params=("rel",), aggregate="sum", kind="count",
           source="trec_eval m_num_rel.c"),
    Family("num_rel_ret", "relevant documents retrieved", _num_rel_ret, trec="plain",
           ir_names=("NumRelRet",), ir_params=("rel",), aggregate="sum", kind="count",
           source="trec_eval m_num_rel_ret.c"),
    Family("num_nonrel_judged_ret", "judged non-relevant documents retrieved",
           _num_nonrel_judged_ret, trec="plain", aggregate="sum", kind="count",
           source="trec_eval m_num_nonrel_judged_ret.c"),
)
