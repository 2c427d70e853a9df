"""A pure-Python twin of :func:`cgcore._diversity.diversity_measures`, the test oracle.

It follows ndeval.c (version 4.5, the TREC Web track's novelty and diversity evaluation,
as pyndeval runs it) function by function, on the same arrays ndeval keeps: a 0/1
judgment per (judged document, subtopic), ``nrelSub``, ``actualSubtopics``, the greedy
ideal ranking over *every* judged document re-scored at each rank (``idealResult``),
then ``computeDCG``, ``computeNRBP``, ``computeERR`` on the ideal and on the run,
``renormalize``, ``computeSTRecall``, ``computePrecision`` and ``computeMAP``, each with
its own arrays of ndeval's ``DEPTH`` (here: the largest cut-off asked for). The compiled
kernel reorganises this into one pass per ranking and a greedy over the relevant
documents only; the two must agree bit for bit. Where ndeval divides 0 by 0 (nNRBP of a
topic without relevant judgments) the value is 0, as in the kernel.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

AT_CUTOFF = ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "P_IA", "StRecall")
WHOLE = ("NRBP", "nNRBP", "AP_IA")


def _discount(rank: int) -> float:
    return 1.0 if rank <= 0 else math.log(2.0) / math.log(rank + 2.0)


def _ideal_order(rel: list, docs: list, alpha: float) -> list:
    """idealResult: the judged documents (positions in ``docs``, which is in docno
    order) ranked greedily; ties to the greater docno."""
    n_subtopics = len(rel[0]) if rel else 0
    gain = [1.0] * n_subtopics
    unranked = list(range(len(docs)))
    order = []
    while unranked:
        where, best = -1, 0.0
        for i in unranked:
            score = 0.0
            for j in range(n_subtopics):
                if rel[i][j]:
                    score += gain[j]
            if where == -1 or score > best or (score == best and i > where):
                best, where = score, i
        order.append(where)
        unranked.remove(where)
        for j in range(n_subtopics):
            if rel[where][j]:
                gain[j] *= 1.0 - alpha
    return order


def _dcg_err(ranking: list, n_subtopics: int, actual: int, alpha: float, depth: int):
    """computeDCG and computeERR of a ranking (rows of 0/1 judgments, None: unjudged)."""
    dcg, err = [0.0] * depth, [0.0] * depth
    if actual == 0:
        return dcg, err
    for use_err, out in ((False, dcg), (True, err)):
        gain = [1.0] * n_subtopics
        for i in range(min(depth, len(ranking))):
            score = 0.0
            if ranking[i] is not None:
                for j in range(n_subtopics):
                    if ranking[i][j]:
                        score += gain[j]
                        gain[j] *= 1.0 - alpha
            out[i] = score / float(i + 1) if use_err else score * _discount(i)
        ideal_ideal, ideal_gain = [0.0] * depth, float(actual)
        for i in range(depth):
            ideal_ideal[i] = ideal_gain / float(i + 1) if use_err else ideal_gain * _discount(i)
            ideal_gain *= 1.0 - alpha
        for i in range(1, depth):
            out[i] += out[i - 1]
            ideal_ideal[i] += ideal_ideal[i - 1]
        for i in range(1, depth):
            out[i] /= ideal_ideal[i]
    return dcg, err


def _nrbp(ranking: list, n_subtopics: int, actual: int, alpha: float, beta: float) -> float:
    """computeNRBP."""
    if actual == 0:
        return 0.0
    gain, decay, nrbp = [1.0] * n_subtopics, 1.0, 0.0
    for row in ranking:
        score = 0.0
        if row is not None:
            for j in range(n_subtopics):
                if row[j]:
                    score += gain[j]
                    gain[j] *= 1.0 - alpha
        nrbp += score * decay
        decay *= beta
    return nrbp * ((1 - (1 - alpha) * beta) / actual)


def _topic(rel: list, docs: list, ranking: list, n_subtopics: int, alpha: float,
           beta: float, cutoffs: list) -> tuple[list, list]:
    depth = cutoffs[-1] if cutoffs else 0
    nrel_sub = [sum(row[j] for row in rel) for j in range(n_subtopics)]
    actual = sum(1 for n in nrel_sub if n)
    # the ideal (qrels) list
    ideal = [rel[i] for i in _ideal_order(rel, docs, alpha)] if actual else []
    ideal_dcg, ideal_err = _dcg_err(ideal, n_subtopics, actual, alpha, depth)
    ideal_nrbp = _nrbp(ideal, n_subtopics, actual, alpha, beta)
    # the run
    dcg, err = _dcg_err(ranking, n_subtopics, actual, alpha, depth)
    nrbp = _nrbp(ranking, n_subtopics, actual, alpha, beta)
    ndcg, nerr = [0.0] * depth, [0.0] * depth
    for i in range(depth):              # renormalize
        if dcg[i]:
            ndcg[i] = dcg[i] / ideal_dcg[i]
            nerr[i] = err[i] / ideal_err[i]
    nnrbp = nrbp / ideal_nrbp if ideal_nrbp != 0.0 else 0.0   # ndeval: 0 / 0 = NaN
    strec, precision, map_ia = [0.0] * depth, [0.0] * depth, 0.0
    if actual:
        seen, count = [0] * n_subtopics, 0
        for i in range(depth):          # computeSTRecall
            if i < len(ranking) and ranking[i] is not None:
                for j in range(n_subtopics):
                    if not seen[j] and ranking[i][j]:
                        count += 1
                        seen[j] = 1
            strec[i] = count / actual
        count = 0
        for i in range(depth):          # computePrecision
            if i < len(ranking) and ranking[i] is not None:
                count += sum(1 for j in range(n_subtopics) if ranking[i][j])
            precision[i] = float(count) / float((i + 1) * actual)
        counts, totals = [0] * n_subtopics, [0.0] * n_subtopics
        for i, row in enumerate(ranking):   # computeMAP
            if row is not None:
                for j in range(n_subtopics):
                    if row[j]:
                        counts[j] += 1
                        totals[j] += counts[j] / float(i + 1)
        for j in range(n_subtopics):
            if nrel_sub[j]:
                map_ia += totals[j] / nrel_sub[j]
        map_ia /= actual
    at = [err, nerr, dcg, ndcg, precision, strec]
    return ([[row[k - 1] for k in cutoffs] for row in at], [nrbp, nnrbp, map_ia])


def diversity_measures(judged_offsets: Int64Array, relevant_offsets: Int64Array,
                       relevant_subtopics: Int64Array, n_subtopics: Int64Array,
                       ranked_offsets: Int64Array, ranked_docs: Int64Array,
                       cutoffs: Sequence[int] | Int64Array, alpha: float, beta: float
                       ) -> tuple[Float64Array, Float64Array]:
    """The arguments and results of :func:`cgcore._diversity.diversity_measures`."""
    n_topics = len(judged_offsets) - 1
    cutoffs = [int(k) for k in cutoffs]
    at = np.zeros((len(AT_CUTOFF), n_topics, len(cutoffs)))
    whole = np.zeros((len(WHOLE), n_topics))
    for t in range(n_topics):
        docs = list(range(int(judged_offsets[t]), int(judged_offsets[t + 1])))
        width = int(n_subtopics[t])
        rel = []
        for d in docs:
            row = [0] * width
            for p in range(int(relevant_offsets[d]), int(relevant_offsets[d + 1])):
                row[int(relevant_subtopics[p])] = 1
            rel.append(row)
        ranking = [None if int(d) < 0 else rel[int(d) - docs[0]]
                   for d in ranked_docs[int(ranked_offsets[t]):int(ranked_offsets[t + 1])]]
        values, totals = _topic(rel, docs, ranking, width, float(alpha), float(beta), cutoffs)
        for m, row in enumerate(values):
            at[m, t, :] = row
        whole[:, t] = totals
    return at, whole
