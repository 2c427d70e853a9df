"""Pure-Python twins of the kernels in ``cgcore._graded_extra``: the same signatures and
results, one topic and one rank at a time, written from the definitions (and, where a
kernel follows a reference implementation's order of operations, in that order, so the
twins agree bit for bit; graded AP sums its pairs directly). The test oracle of those
kernels; not for production use."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

ORDER_GDEVAL = 0
ORDER_NTCIREVAL = 1


def _topics(offsets: Sequence[int] | Int64Array) -> list[tuple[int, int]]:
    offsets = [int(x) for x in offsets]
    return list(zip(offsets, offsets[1:]))


def expected_reciprocal_rank(probabilities: Float64Array, offsets: Int64Array, cutoff: int,
                             order: int) -> Float64Array:
    out = []
    for start, stop in _topics(offsets):
        score, decay = 0.0, 1.0
        for i, r in enumerate(probabilities[start:min(stop, start + cutoff)]):
            r = float(r)
            if order == ORDER_GDEVAL:
                score += r * decay / (i + 1)
            else:
                score += r * ((1.0 / (i + 1)) * decay)
            decay *= 1.0 - r
        out.append(score)
    return np.array(out, dtype=np.float64)


def rank_biased_utility(probabilities: Float64Array, offsets: Int64Array, cutoff: int,
                        p: float, effort: float) -> Float64Array:
    out = []
    for start, stop in _topics(offsets):
        score, decay, weight, weights = 0.0, 1.0, 1.0, 0.0
        for r in probabilities[start:min(stop, start + cutoff)]:
            r = float(r)
            weight *= p
            score += weight * r * decay
            weights += weight
            decay *= 1.0 - r
        out.append(score - effort * weights)
    return np.array(out, dtype=np.float64)


def q_measure(gains: Float64Array, offsets: Int64Array, ideal: Float64Array,
              ideal_offsets: Int64Array, beta: float, cutoff: int) -> Float64Array:
    out = []
    for (start, stop), (ideal_start, ideal_stop) in zip(_topics(offsets),
                                                        _topics(ideal_offsets)):
        num_rel = ideal_stop - ideal_start
        if num_rel == 0:
            out.append(0.0)
            continue
        share = 1.0 / min(num_rel, cutoff)
        found, cg, ideal_cg, score = 0, 0.0, 0.0, 0.0
        for i, g in enumerate(gains[start:min(stop, start + cutoff)]):
            g = float(g)
            cg += g
            if i < num_rel:
                ideal_cg += float(ideal[ideal_start + i])
            if g > 0:
                found += 1
                score += (found + beta * cg) / ((i + 1) + beta * ideal_cg) * share
        out.append(score)
    return np.array(out, dtype=np.float64)


def graded_average_precision(gains: Float64Array, offsets: Int64Array, ideal: Float64Array,
                             ideal_offsets: Int64Array, cutoff: int) -> Float64Array:
    out = []
    for (start, stop), (ideal_start, ideal_stop) in zip(_topics(offsets),
                                                        _topics(ideal_offsets)):
        total = float(sum(ideal[ideal_start:ideal_stop]))
        ranked = [float(g) for g in gains[start:min(stop, start + cutoff)]]
        if not total > 0:
            out.append(0.0)
            continue
        score = sum(sum(min(ranked[j], g) for j in range(i + 1)) / (i + 1)
                    for i, g in enumerate(ranked) if g > 0)
        out.append(score / total)
    return np.array(out, dtype=np.float64)


def compatibility(levels: Float64Array, offsets: Int64Array, ideal: Float64Array,
                  ideal_offsets: Int64Array, p: float, normalize: bool) -> Float64Array:
    out = []
    for (start, stop), (ideal_start, ideal_stop) in zip(_topics(offsets),
                                                        _topics(ideal_offsets)):
        ranked = [float(x) for x in levels[start:stop]]
        wanted = [float(x) for x in ideal[ideal_start:ideal_stop]]
        depth = max(len(ranked), len(wanted))
        if depth == 0:
            out.append(0.0)
            continue
        # Clarke's ideal: by level, retrieved documents (named by their rank) in run
        # order, then the unretrieved ones (named None)
        documents = sorted(((-level, i) for i, level in enumerate(ranked) if level > 0))
        retrieved_levels = [-level for level, _ in documents]
        ideal_ranking, used = [], set()
        for level in wanted:
            match = next((rank for lvl, rank in zip(retrieved_levels,
                                                    (r for _, r in documents))
                          if lvl == level and rank not in used), None)
            if match is not None:
                used.add(match)
            ideal_ranking.append(match)
        run_set, ideal_set = set(), set()
        score = normalizer = 0.0
        weight = 1.0
        for i in range(depth):
            if i < len(ranked):
                run_set.add(i)
            if i < len(ideal_ranking) and ideal_ranking[i] is not None:
                ideal_set.add(ideal_ranking[i])
            score += weight * len(run_set & ideal_set) / (i + 1)
            normalizer += weight
            weight *= p
        score /= normalizer
        if normalize:
            best = best_normalizer = 0.0
            weight = 1.0
            for i in range(depth):
                best += weight * min(i + 1, len(wanted)) / (i + 1)
                best_normalizer += weight
                weight *= p
            best /= best_normalizer
            if best > 0:
                score /= best
        out.append(score)
    return np.array(out, dtype=np.float64)


def pairwise_accuracy(relevant: Float64Array, offsets: Int64Array, cutoff: int) -> Float64Array:
    out = []
    for start, stop in _topics(offsets):
        flags = [float(x) != 0.0 for x in relevant[start:min(stop, start + cutoff)]]
        pairs = [(i, j) for i, a in enumerate(flags) for j, b in enumerate(flags) if a and not b]
        if not pairs:
            out.append(math.nan)
            continue
        n_relevant, n_nonrelevant = sum(flags), len(flags) - sum(flags)
        above = sum(1 for i, j in pairs if j < i)
        out.append(1.0 - above / (float(n_nonrelevant) * n_relevant))
    return np.array(out, dtype=np.float64)
