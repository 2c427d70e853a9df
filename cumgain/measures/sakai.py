"""Sakai's graded measures as NTCIREVAL computes them (and pyNTCIREVAL, its Python
port): ``Q`` (Q-measure), ``OMeasure``, ``PMeasure`` and ``PPlusMeasure`` (for finding
one highly relevant document), NCU in its four variants ``NCUguP``, ``NCUguBR``, ``NCUrbP``
and ``NCUrbBR``, ``nERR``, ``iRBU``, ``GAP`` (Robertson et al.'s graded AP),
and NTCIREVAL's two nDCGs under their NTCIREVAL names, ``MSnDCG`` (the "Microsoft
version": discount 1/log(i + 1), cumgain's ``nDCG``) and ``JKnDCG`` (the original of
Jarvelin & Kekalainen that NTCIREVAL prints as ``nDCG``: no discount before rank b,
1/log_b(i) from there; ``nDCG(discount='tois', base=b)``).

Gains: NTCIREVAL takes one gain value per relevance level (``-g 1:2:3``); here that is
``gains={1: 1, 2: 2, 3: 3}`` (or a scheme such as ``"0-1-2-3"``), and without ``gains=``
the gain of a level is the level. A document is relevant when its gain is > 0 (in
NTCIREVAL: a level >= 1, whose gain must be positive); the relevance level (-l,
``rel=``) plays no part, as in nDCG. Gains must not be negative. The ideal ranking is
every judged document by gain, descending. ``judged_only=True`` gives NTCIREVAL's
condensed-list versions (its ``-j``).

nERR and iRBU need the gain of the top level, g_max (NTCIREVAL: the last ``-g``
value): the largest gain of the ``gains=`` table, or the gain of level ``max_rel`` when
given (needed when ``gains=`` is not a table). A document satisfies the user with
probability g / (g_max + 1) (so exponential gains 2^l - 1 give Chapelle et al.'s
(2^l - 1) / 2^l_max).

NCU (normalised cumulative utility, Sakai & Robertson, EVIA 2008) is the expected
utility, over a population of users who stop at one relevant document each, of the
documents down to the one where they stop: sum over the relevant ranks i of Pr(i) NU(i).
NU is precision C(i)/i (``P``) or the blended ratio (``BR``, Q's, with ``beta=``); Pr is
graded-uniform (``gu``: proportional to a stop value per level, ``stops={1: 1, 2: 2}``,
NTCIREVAL's ``-s 1:2``, by default the gains) or rank-biased (``rb``: gamma^(C(i) - 1),
``gamma=0.95``, NTCIREVAL's ``--gamma``), normalised over the relevant judgments. ``@k``
truncates the ranking (NTCIREVAL's ``label --truncate k``); the normalisation stays.

Zero ideal: where pyNTCIREVAL divides by zero (a topic without a relevant judgment:
nERR, the nDCGs), the value is 0 here, as trec_eval's nDCG is.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np

from cgcore import _graded_extra as kernels
from cgcore import _tie_expected as expected
from cumgain.exceptions import GainMappingError, InputError
from cumgain.gains import gain_mapping
from cumgain.measures.base import Family, Measure, register
from cumgain.measures.batch import Batch, safe_ratio
from cumgain.measures.graded import _ndcg
from cumgain.measures.parse import PARAMS

Q_BETA = 1.0            # NTCIREVAL's --beta
IRBU_P = 0.99           # Sakai & Zeng (SIGIR 2019) and NTCIR WWW's iRBU
IRBU_EFFORT = 0.0       # the effort term, a constant for a given cut-off, left out
NCU_GAMMA = 0.95        # NTCIREVAL's --gamma (rank-biased NCU)


def _read_effort(value: Any, spelling: str) -> dict:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise InputError(f"measure {spelling!r}: e must be a finite number >= 0")
    return {"params": (("e", float(value)),)}


def _read_gamma(value: Any, spelling: str) -> dict:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value <= 1:
        raise InputError(f"measure {spelling!r}: gamma must be a number in [0, 1]")
    return {"params": (("gamma", float(value)),)}


def _read_stops(value: Any, spelling: str) -> dict:
    def stop_value(x: Any) -> bool:
        return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)
    if not isinstance(value, dict) or not value or not all(
            stop_value(level) and stop_value(stop) and stop >= 0
            for level, stop in value.items()):
        raise InputError(f"measure {spelling!r}: stops must map relevance levels to stop "
                         "values >= 0, like stops={1: 1, 2: 2, 3: 3} (NTCIREVAL's -s 1:2:3)")
    table = tuple(sorted((float(level), float(stop)) for level, stop in value.items()))
    return {"params": (("stops", table),)}


for _key, _reader in (("e", _read_effort), ("gamma", _read_gamma), ("stops", _read_stops)):
    if PARAMS.setdefault(_key, _reader) is not _reader:     # pragma: no cover
        raise RuntimeError(f"another module registered a reader for the parameter {_key!r}")


def _cutoff(batch: Batch, measure) -> int:
    return measure.cutoff if measure.cutoff is not None else batch.full_depth(measure)


def _checked_gains(batch: Batch, measure) -> tuple:
    """(ranked gains, ideal gains, ideal offsets), the judged gains checked >= 0."""
    judged = batch.judged_gains(measure)
    if len(judged) and judged.min() < 0:
        raise InputError(f"measure {measure.name!r}: gains must be >= 0 (got "
                         f"{judged.min():g})")
    ideal, ideal_offsets = batch.ideal(measure)
    return batch.gain_values(measure), ideal, ideal_offsets


_SCHEME = re.compile(r"^-?\d+(\.\d+)?(-\d+(\.\d+)?)+$")


def top_gain(measure: Measure, default_max_rel: int | None = None) -> float:
    """g_max: the gain of level ``max_rel`` if given, else the largest gain of the
    measure's gain table, else the gain of level ``default_max_rel`` if given."""
    max_rel = measure.param("max_rel")
    gains = measure.gains
    if max_rel is not None:
        if max_rel < 1:
            raise InputError(f"measure {measure.name!r}: max_rel must be >= 1, got {max_rel}")
        if gains is None:
            return float(max_rel)
        if isinstance(gains, tuple):
            table = dict(gains)
            if float(max_rel) not in table:
                raise GainMappingError(f"measure {measure.name!r}: gains has no gain for level "
                                 f"max_rel={max_rel}")
            return float(table[float(max_rel)])
        return float(gain_mapping(gains)([float(max_rel)])[0])
    if isinstance(gains, tuple) and gains:
        return float(max(gain for _, gain in gains))
    if isinstance(gains, str) and _SCHEME.match(gains.strip()):
        return float(max(float(part) for part in gains.strip().split("-")))
    if default_max_rel is not None:
        return float(gain_mapping(gains)([float(default_max_rel)])[0])
    raise InputError(f"measure {measure.name!r} needs the gain of the top relevance level: "
                     "give a gain for every level, gains={1: 1, 2: 2, 3: 3} (NTCIREVAL's "
                     "-g 1:2:3), or the top level, max_rel=3")


def satisfaction(batch: Batch, measure: Measure, default_max_rel: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R = g / (g_max + 1) for the ranked documents and for the ideal ranking."""
    gains, ideal, ideal_offsets = _checked_gains(batch, measure)
    g_max = top_gain(measure, default_max_rel)
    if len(ideal) and ideal.max() > g_max:
        raise InputError(f"measure {measure.name!r}: a judged gain ({ideal.max():g}) is above "
                         f"the top level's ({g_max:g})")
    return gains / (g_max + 1.0), ideal / (g_max + 1.0), ideal_offsets


def _q_measure(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        gains, ideal, ideal_offsets = _checked_gains(batch, measure)
        columns.append(kernels.q_measure(gains, batch.ranked(measure).offsets, ideal,
                                         ideal_offsets, measure.param("beta", Q_BETA),
                                         _cutoff(batch, measure)))
    return columns


def _at_preferred(kind: int):
    """The compute function of O-, P- or P+-measure (``kind``: a PREFERRED_ code)."""
    def compute(measures: list, batch: Batch) -> list:
        columns = []
        for measure in measures:
            gains, ideal, ideal_offsets = _checked_gains(batch, measure)
            ranked = batch.ranked(measure)
            levels = np.where(ranked.judged, batch.levels(measure), 0.0)
            columns.append(kernels.blended_ratio_at_preferred(
                gains, levels, ranked.offsets, ideal, ideal_offsets,
                measure.param("beta", Q_BETA), _cutoff(batch, measure), kind))
        return columns
    return compute


def _stop_values(measure: Measure, levels: np.ndarray, relevant: np.ndarray,
                 gains: np.ndarray) -> np.ndarray:
    """The stop value of each relevant row (its level's in ``stops=``, else its gain),
    0 for the others."""
    table = measure.param("stops")
    if table is None:
        return np.where(relevant, gains, 0.0)
    stops = dict(table)
    wanted = np.unique(levels[relevant])
    missing = [level for level in wanted.tolist() if level not in stops]
    if missing:
        raise InputError(f"measure {measure.name!r}: stops has no stop value for relevance "
                         f"level {missing[0]:g}")
    known = np.array(sorted(stops), dtype=np.float64)
    values = np.array([stops[level] for level in known.tolist()], dtype=np.float64)
    position = np.minimum(np.searchsorted(known, levels), len(known) - 1)
    return np.where(relevant, values[position], 0.0)


def _graded_stop_totals(batch: Batch, measure: Measure) -> np.ndarray:
    """Per topic, the sum of the stop values of its relevant judgments (gain > 0),
    summed per level in ascending order as pyNTCIREVAL's p_gu does."""
    offsets = batch.ranked(measure).qrels_offsets
    levels = batch.qrels_levels(measure)
    gains = batch.judged_gains(measure)
    relevant = gains > 0
    stops = _stop_values(measure, levels, relevant, gains)[relevant]
    levels = levels[relevant]
    topic = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))[relevant]
    order = np.lexsort((levels, topic))
    counts = np.bincount(topic, minlength=len(offsets) - 1)
    kept_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return kernels.graded_stop_totals(np.ascontiguousarray(levels[order]),
                                      np.ascontiguousarray(stops[order]), kept_offsets)


def _normalised_cumulative_utility(stopping: int, utility: str):
    """The compute function of an NCU variant: ``stopping`` a STOP_ code of the kernels,
    ``utility`` "P" (precision: beta = 0) or "BR" (the blended ratio, ``beta=``)."""
    def compute(measures: list, batch: Batch) -> list:
        columns = []
        for measure in measures:
            gains, ideal, ideal_offsets = _checked_gains(batch, measure)
            ranked = batch.ranked(measure)
            if stopping == kernels.STOP_GRADED_UNIFORM:
                stops = _stop_values(measure, batch.levels(measure), gains > 0, gains)
                totals = _graded_stop_totals(batch, measure)
            else:
                stops, totals = gains, np.zeros(len(ranked.offsets) - 1)
            beta = measure.param("beta", Q_BETA) if utility == "BR" else 0.0
            columns.append(kernels.normalised_cumulative_utility(
                gains, stops, ranked.offsets, ideal, ideal_offsets, totals, beta,
                measure.param("gamma", NCU_GAMMA), _cutoff(batch, measure), stopping))
        return columns
    return compute


def _normalised_err(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        run, ideal, ideal_offsets = satisfaction(batch, measure)
        cutoff = _cutoff(batch, measure)
        order = kernels.ORDER_NTCIREVAL
        ranked = batch.ranked(measure)
        err = expected.expected_err(run, ranked.scores, ranked.offsets, cutoff) \
            if batch.policies["ties"] == "expected" else \
            kernels.expected_reciprocal_rank(run, ranked.offsets, cutoff, order)
        best = kernels.expected_reciprocal_rank(ideal, ideal_offsets, cutoff, order)
        columns.append(safe_ratio(err, best))
    return columns


def _intentwise_rbu(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        run, _, _ = satisfaction(batch, measure)
        columns.append(kernels.rank_biased_utility(
            run, batch.ranked(measure).offsets, _cutoff(batch, measure),
            measure.param("p", IRBU_P), measure.param("e", IRBU_EFFORT)))
    return columns


def _graded_ap(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        gains, ideal, ideal_offsets = _checked_gains(batch, measure)
        columns.append(kernels.graded_average_precision(
            gains, batch.ranked(measure).offsets, ideal, ideal_offsets,
            _cutoff(batch, measure)))
    return columns


def _microsoft_ndcg(measures: list, batch: Batch) -> list:
    return _ndcg([dataclasses.replace(m, discount="trec_eval") for m in measures], batch)


def _original_ndcg(measures: list, batch: Batch) -> list:
    return _ndcg([dataclasses.replace(m, discount="tois") for m in measures], batch)


_NTCIREVAL = "NTCIREVAL (pyNTCIREVAL 0.0.3)"
_GAINS = ("gains", "judged_only")
_NCU = "Sakai & Robertson, EVIA 2008"
register(
    Family("Q", "(1/min(R, k)) sum_{i<=k, g_i>0} (C(i) + beta cg(i)) / (i + beta cg*(i)), "
           "C(i) relevant in the top i, cg / cg* cumulative gain of run / ideal (beta = 1)",
           _q_measure, ir_names=("Q", "QMeasure"), ir_params=("beta",) + _GAINS,
           at="cutoff", ordered=True, unlisted_gain="error",
           source=f"{_NTCIREVAL} QMeasure; Sakai, AIRS 2004 / IPM 2007"),
    Family("OMeasure", "BR(r) at r, the first relevant rank (within k); BR(i) = (C(i) + "
           "beta cg(i)) / (i + beta cg*(i)) (beta = 1)", _at_preferred(kernels.PREFERRED_O),
           ir_names=("OMeasure",), ir_params=("beta",) + _GAINS, at="cutoff", ordered=True,
           unlisted_gain="error", source=f"{_NTCIREVAL} OMeasure; Sakai, IPSJ TOD 48(SIG9), "
           "2007"),
    Family("PMeasure", "BR(p) at p, the first rank of the highest level retrieved (0 if p "
           "is past k)", _at_preferred(kernels.PREFERRED_P), ir_names=("PMeasure",),
           ir_params=("beta",) + _GAINS, at="cutoff", ordered=True, unlisted_gain="error",
           source=f"{_NTCIREVAL} PMeasure; Sakai, IPSJ TOD 48(SIG9), 2007"),
    Family("PPlusMeasure", "(1/C(p)) sum of BR(i) over the relevant ranks i <= p (and k), "
           "p the first rank of the highest level retrieved",
           _at_preferred(kernels.PREFERRED_P_PLUS), ir_names=("PPlusMeasure", "Pplus"),
           ir_params=("beta",) + _GAINS, at="cutoff", ordered=True, unlisted_gain="error",
           source=f"{_NTCIREVAL} PPlusMeasure; Sakai, IPSJ TOD 48(SIG9), 2007"),
    Family("NCUguP", "sum_{i<=k, g_i>0} Pr(i) C(i)/i, Pr(i) = s_i / (sum of s over the "
           "relevant judgments), s_i the stop value of i's level (stops=, default the gains)",
           _normalised_cumulative_utility(kernels.STOP_GRADED_UNIFORM, "P"),
           ir_names=("NCUguP",), ir_params=("stops",) + _GAINS, at="cutoff", ordered=True,
           unlisted_gain="error", source=f"{_NTCIREVAL} NCUguP; {_NCU}"),
    Family("NCUguBR", "sum_{i<=k, g_i>0} Pr(i) BR(i), BR(i) = (C(i) + beta cg(i)) / (i + "
           "beta cg*(i)) (beta = 1), Pr(i) = s_i / (sum of s over the relevant judgments), "
           "s_i the stop value of i's level (stops=, default the gains)",
           _normalised_cumulative_utility(kernels.STOP_GRADED_UNIFORM, "BR"),
           ir_names=("NCUguBR",), ir_params=("beta", "stops") + _GAINS, at="cutoff",
           ordered=True, unlisted_gain="error", source=f"{_NTCIREVAL} NCUguBR; {_NCU}"),
    Family("NCUrbP", "sum_{i<=k, g_i>0} Pr(i) C(i)/i, Pr(i) = gamma^(C(i)-1) / "
           "sum_{j<R} gamma^j (gamma = 0.95)",
           _normalised_cumulative_utility(kernels.STOP_RANK_BIASED, "P"),
           ir_names=("NCUrbP",), ir_params=("gamma",) + _GAINS, at="cutoff", ordered=True,
           unlisted_gain="error", source=f"{_NTCIREVAL} NCUrbP; {_NCU}"),
    Family("NCUrbBR", "sum_{i<=k, g_i>0} Pr(i) BR(i), BR(i) = (C(i) + beta cg(i)) / (i + "
           "beta cg*(i)), Pr(i) = gamma^(C(i)-1) / sum_{j<R} gamma^j (beta = 1, "
           "gamma = 0.95)", _normalised_cumulative_utility(kernels.STOP_RANK_BIASED, "BR"),
           ir_names=("NCUrbBR",), ir_params=("beta", "gamma") + _GAINS, at="cutoff",
           ordered=True, unlisted_gain="error", source=f"{_NTCIREVAL} NCUrbBR; {_NCU}"),
    Family("nERR", "ERR@k / ERR of the ideal @k, R_i = g_i / (g_max + 1)", _normalised_err,
           ir_names=("nERR",), ir_params=("max_rel",) + _GAINS, at="cutoff", ordered=True,
           expected_ties=True,
           unlisted_gain="error", source=f"{_NTCIREVAL} nERR; Chapelle et al., CIKM 2009; Sakai & Song, "
           "SIGIR 2011"),
    Family("iRBU", "sum_{i<=k} p^i R_i prod_{j<i} (1 - R_j) - e sum_{i<=k} p^i, "
           "R_i = g_i / (g_max + 1) (p = 0.99, e = 0); not normalised", _intentwise_rbu,
           ir_names=("iRBU",), ir_params=("p", "e", "max_rel") + _GAINS, at="cutoff",
           ordered=True, unlisted_gain="error", source="Sakai & Zeng, SIGIR 2019 (NTCIREVAL 190111+); Amigo, "
           "Spina & Carrillo-de-Albornoz, SIGIR 2018"),
    Family("GAP", "sum_{i<=k} (1/i) sum_{j<=i} min(g_j, g_i) / sum of the judged gains "
           "(gains: each grade's probability of being relevant to a user, scaled)",
           _graded_ap, ir_names=("GAP",), ir_params=_GAINS, at="cutoff", ordered=True,
           unlisted_gain="error", source="Robertson, Kanoulas & Yilmaz, SIGIR 2010 (NTCIREVAL --gap)"),
    Family("MSnDCG", "nDCG@k with discount 1/log(i + 1) (= nDCG@k; NTCIREVAL's "
           "Microsoft version)", _microsoft_ndcg, ir_names=("MSnDCG",), ir_params=_GAINS,
           at="cutoff", trec_twin="ndcg_cut", unlisted_gain="error",
           source=f"{_NTCIREVAL} MSnDCG; Burges et al., ICML 2005"),
    Family("JKnDCG", "nDCG@k with df(i) = 1 for i < b, log_b(i) from b (b = base = 2; "
           "NTCIREVAL's nDCG)", _original_ndcg, ir_names=("JKnDCG",),
           ir_params=("base",) + _GAINS, at="cutoff", unlisted_gain="error",
           source=f"{_NTCIREVAL} nDCG; Jarvelin & Kekalainen, TOIS 2002"),
)
