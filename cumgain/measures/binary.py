"""Binary-relevance measures of trec_eval: a document is relevant when judged at the
relevance level or above (-l, ``rel=``); graded gains play no part.

Notation: N = documents retrieved (after -M and -J), R = relevant judgments,
rel(i) = 1 if the document at rank i is relevant, found(k) = sum_{i<=k} rel(i).
"""
from __future__ import annotations

import numpy as np

from cgcore import _measures as kernels
from cgcore import _tie_expected as expected
from cgcore import _trec_measures as trec_kernels
from cumgain.measures.base import Family, Measure, register
from cumgain.measures.batch import Batch, safe_ratio

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
GM_FLOOR = 1e-5     # trec_eval's MIN_GEO_MEAN: per topic log(max(value, 1e-5))
RECALL_ROUNDING = {"nearest": trec_kernels.ROUND_NEAREST,
                   "trec_eval9": trec_kernels.ROUND_UP_FROM_TENTH}


def values_of(measure: Measure, family: Family) -> tuple[float, ...]:
    """A ``floats`` family's parameters: the measure's, else the family's defaults."""
    return measure.param("values", tuple(float(v) for v in family.trec_defaults))


def _found(batch: Batch, measure, cutoffs: np.ndarray) -> np.ndarray:
    """found(min(k_t, N_t)) per topic."""
    ranked = batch.ranked(measure)
    return kernels.relevant_in_top(batch.relevant(measure), ranked.offsets,
                                   np.ascontiguousarray(cutoffs, dtype=np.int64))


def _found_all(batch: Batch, measure) -> np.ndarray:
    """num_rel_ret: found(N) per topic."""
    return batch.cached(("found_all", id(batch.ranked(measure)), batch.level(measure)),
                        lambda: _found(batch, measure, batch.num_retrieved(measure)))


def _constant(batch: Batch, k: int) -> np.ndarray:
    return np.full(batch.n_topics, k, dtype=np.int64)


def _precision(measures: list, batch: Batch) -> list:
    return [_found(batch, m, _constant(batch, m.cutoff)) / m.cutoff for m in measures]


def _recall(measures: list, batch: Batch) -> list:
    return [safe_ratio(_found(batch, m, _constant(batch, m.cutoff)), batch.num_relevant(m))
            for m in measures]


def _cutoffs_of(batch: Batch, measure) -> np.ndarray:
    """Per topic, the measure's cut-off k, or N (the whole ranking) without one."""
    return _constant(batch, measure.cutoff) if measure.cutoff is not None \
        else batch.num_retrieved(measure)


def _success(measures: list, batch: Batch) -> list:
    if batch.policies["ties"] == "expected":
        return [expected.expected_success(batch.relevant_flags(m), batch.ranked(m).scores,
                                          batch.ranked(m).offsets,
                                          np.maximum(_cutoffs_of(batch, m), 1))
                for m in measures]
    return [(_found(batch, m, _cutoffs_of(batch, m)) > 0).astype(np.float64)
            for m in measures]


def _hits(measures: list, batch: Batch) -> list:
    """found(k): relevant documents in the top k (ranx's hits; averaged over topics)."""
    return [_found(batch, m, _cutoffs_of(batch, m)) for m in measures]


def _f1(measures: list, batch: Batch) -> list:
    """ranx's f1@k: 2 (P R) / (P + R) with P = found(k) / k and R = found(k) / R_total
    (k = N without a cut-off); 0 when R_total, k or P + R is 0."""
    columns = []
    for measure in measures:
        k = _cutoffs_of(batch, measure).astype(np.float64)
        found = _found(batch, measure, _cutoffs_of(batch, measure))
        relevant = batch.num_relevant(measure)
        precision = safe_ratio(found, k)
        recall = safe_ratio(found, relevant)
        total = precision + recall
        columns.append(np.where((relevant > 0) & (k > 0) & (total > 0),
                                2 * safe_ratio(precision * recall, total), 0.0))
    return columns


def _r_precision(measures: list, batch: Batch) -> list:
    return [safe_ratio(_found(batch, m, batch.num_relevant(m).astype(np.int64)),
                       batch.num_relevant(m)) for m in measures]


def _relative_precision(measures: list, batch: Batch) -> list:
    """found(k) / min(k, R); 0 when R = 0."""
    columns = []
    for measure in measures:
        found = _found(batch, measure, _constant(batch, measure.cutoff))
        relevant = batch.num_relevant(measure)
        columns.append(safe_ratio(found, np.minimum(relevant, measure.cutoff)))
    return columns


def _precision_sums(batch: Batch, measure, cutoff: int) -> np.ndarray:
    """sum over relevant ranks i <= cutoff of found(i) / i (AP's numerator)."""
    ranked = batch.ranked(measure)
    return kernels.average_precision(batch.relevant(measure), ranked.offsets,
                                     np.ones(batch.n_topics), max(cutoff, 1))


def _average_precision(batch: Batch, measure, cutoff: int) -> np.ndarray:
    ranked = batch.ranked(measure)

    def build():
        if batch.policies["ties"] == "expected":
            return expected.expected_average_precision(
                batch.relevant_flags(measure), ranked.scores, ranked.offsets,
                batch.num_relevant(measure), max(cutoff, 1))
        return kernels.average_precision(batch.relevant(measure), ranked.offsets,
                                         batch.num_relevant(measure), max(cutoff, 1))
    return batch.cached(("AP", id(ranked), batch.level(measure), cutoff), build)


def _full_cutoff(batch: Batch, measure) -> int:
    return int(batch.num_retrieved(measure).max(initial=1))


def _map(measures: list, batch: Batch) -> list:
    return [_average_precision(batch, m, _full_cutoff(batch, m)) for m in measures]


def _map_cut(measures: list, batch: Batch) -> list:
    return [_average_precision(batch, m, m.cutoff) for m in measures]


def _gm_map(measures: list, batch: Batch) -> list:
    return [kernels.log_floored(_average_precision(batch, m, _full_cutoff(batch, m)), GM_FLOOR)
            for m in measures]


def _reciprocal_rank(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        cutoff = measure.cutoff if measure.cutoff is not None else _full_cutoff(batch, measure)
        columns.append(expected.expected_reciprocal_rank(
            batch.relevant_flags(measure), ranked.scores, ranked.offsets, cutoff)
            if batch.policies["ties"] == "expected"
            else kernels.reciprocal_rank(batch.relevant(measure), ranked.offsets, cutoff))
    return columns


def _interpolated(batch: Batch, measures: list, points: np.ndarray) -> tuple:
    measure = measures[0]
    ranked = batch.ranked(measure)
    rounding = RECALL_ROUNDING[batch.policies["recall_cutoffs"]]
    return trec_kernels.interpolated_precision(
        batch.relevant(measure), ranked.offsets, batch.num_relevant(measure),
        np.ascontiguousarray(points, dtype=np.float64), rounding)


def _by_variant(measures: list, batch: Batch) -> dict:
    """The measures grouped by what their rows depend on (judged_only, rel)."""
    groups: dict = {}
    for measure in measures:
        key = (batch.judged_only(measure), batch.level(measure))
        groups.setdefault(key, []).append(measure)
    return groups


def _at_points(measures: list, batch: Batch, table_of) -> list:
    """Measures with a fractional cut-off (``at``): for each variant (judged_only, rel),
    one ``table_of(first_measure, points)`` (topics x the variant's sorted points), as
    trec_eval computes all its cut-offs in one pass."""
    out = {}
    for group in _by_variant(measures, batch).values():
        points = sorted({m.param("at") for m in group})
        table = table_of(group[0], np.array(points, dtype=np.float64))
        for measure in group:
            out[measure.name] = np.ascontiguousarray(table[:, points.index(measure.param("at"))])
    return [out[m.name] for m in measures]


def _iprec_at_recall(measures: list, batch: Batch) -> list:
    return _at_points(measures, batch,
                      lambda measure, points: _interpolated(batch, [measure], points)[0])


def _eleven_point_average(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        points = values_of(measure, FAMILIES_HERE["11pt_avg"])
        if not points:
            columns.append(np.zeros(batch.n_topics))
            continue
        _, sums = _interpolated(batch, [measure], np.array(points))
        columns.append(sums / len(points))
    return columns


def _r_multiples(measures: list, batch: Batch) -> list:
    def table_of(measure, points):
        return trec_kernels.precision_at_r_multiples(
            batch.relevant(measure), batch.ranked(measure).offsets,
            batch.num_relevant(measure), points)
    return _at_points(measures, batch, table_of)


def _set_counts(batch: Batch, measure) -> tuple:
    """(num_rel_ret, N, R) as float64."""
    return (_found_all(batch, measure), batch.num_retrieved(measure).astype(np.float64),
            batch.num_relevant(measure))


def _of_set_counts(formula):
    """A compute function: ``formula(num_rel_ret, N, R)`` per measure, as float64 arrays."""
    def compute(measures: list, batch: Batch) -> list:
        return [formula(*_set_counts(batch, measure)) for measure in measures]
    compute.__doc__ = formula.__doc__
    return compute


def _set_precision(found, retrieved, relevant):
    """num_rel_ret / N, 0 when N is 0."""
    return safe_ratio(found, retrieved)


def _set_relative_precision(found, retrieved, relevant):
    """num_rel_ret / min(N, R), 0 when N or R is 0."""
    both = (retrieved > 0) & (relevant > 0)
    return safe_ratio(found, np.where(both, np.minimum(retrieved, relevant), 0))


def _set_recall(found, retrieved, relevant):
    """num_rel_ret / R, 0 when R is 0."""
    return safe_ratio(found, relevant)


def _set_map(found, retrieved, relevant):
    """num_rel_ret^2 / (N R) (set precision times set recall), 0 when N or R is 0."""
    return safe_ratio(found * found, retrieved * relevant)


def _set_f(measures: list, batch: Batch) -> list:
    """(beta + 1) P R / (beta P + R), P and R the set precision and recall; 0 when
    nothing relevant is retrieved."""
    columns = []
    for measure in measures:
        beta = measure.param("beta", values_of(measure, FAMILIES_HERE["set_F"])[0])
        found, retrieved, relevant = _set_counts(batch, measure)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = found / retrieved
            recall = found / relevant
            value = (beta + 1.0) * precision * recall / (beta * precision + recall)
        columns.append(np.where(found > 0, value, 0.0))
    return columns


def _utility(measures: list, batch: Batch) -> list:
    """a num_rel_ret + b (N - num_rel_ret) + c (R - num_rel_ret) +
    d (C + num_rel_ret - N - R), C the collection size (-N); 4 coefficients."""
    columns = []
    size = float(batch.policies["collection_size"])
    for measure in measures:
        a, b, c, d = values_of(measure, FAMILIES_HERE["utility"])
        found, retrieved, relevant = _set_counts(batch, measure)
        with np.errstate(over="ignore", invalid="ignore"):  # huge coefficients: refused
            columns.append(a * found + b * (retrieved - found) + c * (relevant - found)
                           + d * (size + found - retrieved - relevant))
    return columns


def _check_utility(measure, spelling: str) -> None:
    from cumgain.exceptions import InputError
    if len(measure.param("values")) != 4:
        raise InputError(f"measure {spelling!r}: utility takes 4 coefficients, like "
                         "utility.1,-1,0,0")


def _check_set_f(measure, spelling: str) -> None:
    from cumgain.exceptions import InputError
    values = measure.param("values")
    if len(values) < 1 or values[0] < 0:
        raise InputError(f"measure {spelling!r}: set_F takes beta >= 0, like set_F.0.5")


def _check_eleven_points(measure, spelling: str) -> None:
    from cumgain.exceptions import InputError
    from cumgain.measures.parse import MAX_FRACTION
    if any(not 0 <= x <= MAX_FRACTION for x in measure.param("values")):
        raise InputError(f"measure {spelling!r}: 11pt_avg takes recall levels from 0 to "
                         f"{MAX_FRACTION:g}, like 11pt_avg.0.25,0.5")


def _binary_gain(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        columns.append(trec_kernels.binary_gain(batch.relevant(measure), ranked.offsets,
                                                batch.num_relevant(measure)))
    return columns


def _yaap(measures: list, batch: Batch) -> list:
    """log((1 + S) / (1 + R - S)), S = sum over relevant ranks of found(i) / i."""
    columns = []
    for measure in measures:
        total = _precision_sums(batch, measure, _full_cutoff(batch, measure))
        ratio = (1.0 + total) / (1.0 + batch.num_relevant(measure) - total)
        columns.append(kernels.log_floored(ratio, 0.0))
    return columns


def _redirect_ap(options: dict, cutoff) -> str:
    return "map_cut" if cutoff is not None else "map"


def _redirect_set_p(options: dict, cutoff) -> str:
    return "set_relative_P" if options.get("relative") else "set_P"


_RANKED = ("rel", "judged_only")
FAMILIES_HERE = {family.name: family for family in (
    Family("map", "AP = (1/R) sum_{i: rel(i)} found(i) / i", _map, trec="plain",
           ir_names=("AP", "MAP"), ir_params=_RANKED, at="cutoff", redirect=_redirect_ap,
           trec_twin="map_cut", ordered=True, expected_ties=True, source="trec_eval m_map.c"),
    Family("gm_map", "exp(mean over topics of log(max(AP, 1e-5))); per topic the log",
           _gm_map, trec="plain", aggregate="gmean", per_topic=False, ordered=True,
           source="trec_eval m_gm_map.c"),
    Family("Rprec", "found(R) / R", _r_precision, trec="plain", ir_names=("Rprec", "RPrec"),
           ir_params=_RANKED, source="trec_eval m_Rprec.c"),
    Family("recip_rank", "1 / (rank of the first relevant document), 0 if none (within "
           "the cut-off: RR@k)", _reciprocal_rank, trec="plain", ir_names=("RR", "MRR"),
           ir_params=_RANKED, at="cutoff", ordered=True, expected_ties=True,
           source="trec_eval m_recip_rank.c"),
    Family("iprec_at_recall", "interpolated precision max_{j >= i} found(j)/j at the rank i "
           "where recall reaches x", _iprec_at_recall, trec="float_cutoffs",
           trec_defaults=RECALL_POINTS, ir_names=("IPrec",), ir_params=_RANKED, at="recall",
           ordered=True, source="trec_eval m_iprec_at_recall.c"),
    Family("P", "found(k) / k", _precision, trec="cutoffs", trec_defaults=TREC_CUTOFFS,
           ir_names=("P", "Precision"), ir_params=_RANKED, at="cutoff_required",
           source="trec_eval m_P.c"),
    Family("recall", "found(k) / R", _recall, trec="cutoffs", trec_defaults=TREC_CUTOFFS,
           ir_names=("R", "Recall"), ir_params=_RANKED, at="cutoff_required",
           source="trec_eval m_recall.c"),
    Family("Rprec_mult", "found(c) / c at c = (long)(x R + 0.9) documents",
           _r_multiples, trec="float_cutoffs", trec_defaults=R_MULTIPLES, ordered=True,
           source="trec_eval m_Rprec_mult.c"),
    Family("utility", "a num_rel_ret + b (N - num_rel_ret) + c (R - num_rel_ret) + "
           "d (C + num_rel_ret - N - R), C = -N", _utility, trec="floats",
           trec_defaults=(1.0, -1.0, 0.0, 0.0), missing_value=0.0,
           source="trec_eval m_utility.c"),
    Family("11pt_avg", "mean of iprec_at_recall over the recall points (default 0, 0.1, "
           "..., 1)", _eleven_point_average, trec="floats", trec_defaults=RECALL_POINTS,
           ordered=True, source="trec_eval m_11pt_avg.c"),
    Family("binG", "(1/R) sum_{i: rel(i)} 1 / log2(i + 2 - found(i))", _binary_gain,
           trec="plain", ordered=True, source="trec_eval m_binG.c"),
    Family("map_cut", "AP counting only ranks <= k", _map_cut, trec="cutoffs",
           trec_defaults=TREC_CUTOFFS, ordered=True, expected_ties=True,
           source="trec_eval m_map_cut.c"),
    Family("relative_P", "found(k) / min(k, R)", _relative_precision, trec="cutoffs",
           trec_defaults=TREC_CUTOFFS, source="trec_eval m_rel_P.c"),
    Family("success", "1 if found(k) > 0, else 0 (k = N without a cut-off)", _success,
           trec="cutoffs", trec_defaults=SUCCESS_CUTOFFS, ir_names=("Success",),
           ir_params=_RANKED, at="cutoff", ordered=True, expected_ties=True,
           source="trec_eval m_success.c"),
    Family("hits", "found(k): relevant documents in the top k (k = N without a cut-off), "
           "averaged over topics", _hits, ir_names=("Hits",), ir_params=_RANKED, at="cutoff",
           source="ranx metrics/hits.py"),
    Family("f1", "2 P R / (P + R) at k, P = found(k) / k, R = found(k) / R", _f1,
           ir_names=("F1",), ir_params=_RANKED, at="cutoff", ordered=True,
           source="ranx metrics/f1.py"),
    Family("set_P", "num_rel_ret / N", _of_set_counts(_set_precision), trec="plain",
           ir_names=("SetP",), ir_params=("rel", "relative", "judged_only"),
           redirect=_redirect_set_p, source="trec_eval m_set_P.c"),
    Family("set_relative_P", "num_rel_ret / min(N, R)", _of_set_counts(_set_relative_precision),
           trec="plain", ir_names=("SetRelP",), ir_params=_RANKED,
           source="trec_eval m_set_rel_P.c"),
    Family("set_recall", "num_rel_ret / R", _of_set_counts(_set_recall), trec="plain",
           ir_names=("SetR",), ir_params=("rel",), source="trec_eval m_set_recall.c"),
    Family("set_map", "num_rel_ret^2 / (N R)", _of_set_counts(_set_map), trec="plain",
           ir_names=("SetAP",), ir_params=_RANKED, source="trec_eval m_set_map.c"),
    Family("set_F", "(beta + 1) P R / (beta P + R) of the set precision and recall "
           "(beta = 1)", _set_f, trec="floats", trec_defaults=(1.0,), ir_names=("SetF",),
           ir_params=("rel", "beta", "judged_only"), source="trec_eval m_set_F.c"),
    Family("yaap", "log((1 + S) / (1 + R - S)), S = sum_{i: rel(i)} found(i) / i",
           _yaap, trec="plain", ordered=True, source="trec_eval m_yaap.c"),
)}
register(*FAMILIES_HERE.values())

from cumgain.measures.parse import PARAMETER_CHECKS  # noqa: E402 - after the families

PARAMETER_CHECKS.update({"utility": _check_utility, "set_F": _check_set_f,
                         "11pt_avg": _check_eleven_points})
