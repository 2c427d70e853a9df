"""Measures that tell judged documents from unjudged ones (trec_eval's ``bpref``,
``gm_bpref``, ``infAP``, ``unj``, ``rbp_resid``, ``relstring``).

Each ranked document is not pooled (no judgment), pooled but unjudged (a judgment
with a negative level: trec_eval's "-1 in the qrels"), judged non-relevant, or judged
relevant (Batch.status). Under -J only judged documents remain.
"""
from __future__ import annotations

import numpy as np

from cgcore import _measures as kernels
from cgcore import _tie_expected as expected
from cgcore import _trec_measures as trec_kernels
from cumgain.measures.base import Family, register
from cumgain.measures.ranked import tie_group_means
from cumgain.measures.batch import UNJUDGED, Batch

UNJUDGED_CUTOFFS = (5, 10, 20)
GM_FLOOR = 1e-5
DEFAULT_P = 0.9     # trec_eval's rbp and rbp_resid


def _bpref_values(batch: Batch, measure) -> np.ndarray:
    ranked = batch.ranked(measure)

    def build():
        if batch.policies["ties"] == "expected":
            return expected.expected_binary_preference(
                batch.status(measure), ranked.scores, ranked.offsets,
                batch.num_relevant(measure), batch.num_nonrelevant(measure))
        return trec_kernels.binary_preference(batch.status(measure), ranked.offsets,
                                              batch.num_relevant(measure),
                                              batch.num_nonrelevant(measure))
    return batch.cached(("bpref", id(ranked), batch.level(measure)), build)


def _bpref(measures: list, batch: Batch) -> list:
    return [_bpref_values(batch, m) for m in measures]


def _gm_bpref(measures: list, batch: Batch) -> list:
    return [kernels.log_floored(_bpref_values(batch, m), GM_FLOOR) for m in measures]


def _inferred_ap(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        columns.append(trec_kernels.inferred_average_precision(
            batch.status(measure), ranked.offsets, batch.num_relevant(measure)))
    return columns


def _not_judged(batch: Batch, measure) -> np.ndarray:
    """1.0 per ranked document without a judgment >= 0 (not pooled, or unjudged); under
    ``batch.tie_means``, each group of equal scores shares its mean."""
    ranked = batch.ranked(measure)

    def build():
        flags = (batch.status(measure) <= UNJUDGED).astype(np.float64)
        return tie_group_means(flags, ranked) if batch.tie_means else flags
    return batch.cached(("not_judged", id(ranked)), build)


def _unjudged(measures: list, batch: Batch) -> list:
    """Fraction of the top k without a judgment (missing ranks count as judged)."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        found = kernels.relevant_in_top(_not_judged(batch, measure), ranked.offsets,
                                        np.full(batch.n_topics, measure.cutoff, np.int64))
        columns.append(found / measure.cutoff)
    return columns


def _rbp_residual(measures: list, batch: Batch) -> list:
    """p^N + (1 - p) sum_{i: not judged} p^(i-1): the most rbp could still grow if
    every unjudged document were relevant; 0 when every document is judged."""
    columns = []
    for measure in measures:
        p = measure.param("p", DEFAULT_P)
        ranked = batch.ranked(measure)
        flags = _not_judged(batch, measure)
        sums, powers = trec_kernels.geometric_sums(flags, ranked.offsets, p)
        any_unjudged = kernels.relevant_in_top(flags, ranked.offsets,
                                               np.diff(ranked.offsets)) > 0
        columns.append(np.where(any_unjudged, powers + (1 - p) * sums, 0.0))
    return columns


# trec_eval's characters (m_relstring.c): the level 0-9, '>' above 9, '-' not pooled,
# '.' pooled but unjudged.
def _relstring(measures: list, batch: Batch) -> list:
    """The first ``length`` (default 10) documents' judgments as characters."""
    columns = []
    for measure in measures:
        length = max(int(measure.param("values", (10.0,))[0]), 0)
        ranked = batch.ranked(measure)
        # only the rows shown: the first ``length`` of each topic
        starts = ranked.offsets[:-1]
        shown = np.minimum(np.diff(ranked.offsets), length)
        offsets = np.zeros(len(shown) + 1, dtype=np.int64)
        np.cumsum(shown, out=offsets[1:])
        rows = np.repeat(starts - offsets[:-1], shown) + np.arange(offsets[-1])
        levels = batch.levels(measure)[rows]
        status = batch.status(measure)[rows]
        whole = np.floor(levels)                   # trec_eval reads levels with atol
        characters = np.where(whole > 9, ord(">"), 0).astype(np.uint8)
        small = (whole >= 0) & (whole <= 9)
        characters[small] = (whole[small] + ord("0")).astype(np.uint8)
        characters[status == 0] = ord("-")
        characters[status == UNJUDGED] = ord(".")
        text = characters.tobytes().decode("ascii")
        bounds = offsets.tolist()
        column = np.empty(batch.n_topics, dtype=object)
        column[:] = [text[a:b] for a, b in zip(bounds, bounds[1:])]
        columns.append(column)
    return columns


def _check_relstring(measure, spelling: str) -> None:
    from cumgain.exceptions import InputError
    values = measure.param("values")
    if len(values) != 1 or not 0 <= values[0] <= 1e6:
        raise InputError(f"measure {spelling!r}: relstring takes one length, like relstring.20")


register(
    Family("bpref", "(1/R) sum over relevant retrieved d of 1 - min(n_d, R) / min(N_nonrel, "
           "R), n_d the judged non-relevant above d", _bpref, trec="plain",
           ir_names=("Bpref", "BPref"), ir_params=("rel",), ordered=True, expected_ties=True,
           source="trec_eval m_bpref.c; Buckley & Voorhees, SIGIR 2004"),
    Family("relstring", "the judgments of the top documents as characters (0-9, '>' above "
           "9, '-' not pooled, '.' unjudged)", _relstring, trec="floats",
           trec_defaults=(10.0,), aggregate="none", kind="text", summary=False,
           ordered=True, source="trec_eval m_relstring.c"),
    Family("infAP", "inferred AP: precision at each relevant document estimated from the "
           "judged documents above it", _inferred_ap, trec="plain", ir_names=("infAP",),
           ir_params=("rel",), ordered=True,
           source="trec_eval m_infap.c; Yilmaz & Aslam, CIKM 2006"),
    Family("gm_bpref", "exp(mean over topics of log(max(bpref, 1e-5))); per topic the log",
           _gm_bpref, trec="plain", aggregate="gmean", per_topic=False, ordered=True,
           source="trec_eval m_gm_bpref.c"),
    Family("rbp_resid", "p^N + (1 - p) sum over unjudged ranks i of p^(i-1) (p = 0.9)",
           _rbp_residual, trec="pairs", missing_value=0.0, since="10",
           source="trec_eval m_rbp_resid.c; Moffat & Zobel, TOIS 2008"),
    Family("unj", "fraction of the top k without a judgment", _unjudged, trec="cutoffs",
           trec_defaults=UNJUDGED_CUTOFFS, missing_value=0.0, since="10",
           source="trec_eval m_unjudged.c"),
)

from cumgain.measures.parse import PARAMETER_CHECKS  # noqa: E402 - after the families

PARAMETER_CHECKS["relstring"] = _check_relstring
