"""The C/W/L measures of cwl_eval, as ir_measures computes them with its ``cwl_eval``
provider: ``RBP(rel=r)``, ``INST``, ``INSQ``, ``BPM@k``, ``SDCG@k``, ``NERR8@k``,
``NERR9@k``, ``NERR10``, ``NERR11`` (with ir_measures' names, parameters and defaults),
and ``RBP`` without ``rel`` as ir_measures computes it with trectools.

A C/W/L user model gives c_i, the probability of going on from rank i to rank i + 1;
rank i weighs W_i = prod_{j<i} c_j / sum_{r<=1000} prod_{j<r} c_j, and the measure is
the expected utility sum_{i<=1000} W_i g_i (cwl_eval's EU). What this module takes from
cwl_eval (cwl/ruler/ranking.py, cwl/ruler/measures/cwl_metrics.py) and ir_measures
(providers/cwl_eval.py):

* Gains. ``rel=r`` (RBP): g = 1 for a judged level >= r, else 0. ``min_rel`` /
  ``max_rel`` (the others): g = (clip(level, min_rel, max_rel) - min_rel) /
  (max_rel - min_rel). A negative judged level is first raised to 0 (ir_measures:
  ``rel = max(qrel.relevance, 0)``), so it counts as judged with level 0. With
  ``gains=`` m (cumgain's): g = (clip(m(level), m(min_rel), m(max_rel)) - m(min_rel)) /
  (m(max_rel) - m(min_rel)), cwl_eval's gain on the qrels whose levels are their gains;
  graded RBP (no ``rel``) sums m(level) instead of the level.
* Unjudged documents (no judgment at all) gain 0 (cwl_eval's worst case: NaN gains
  become ``min_gain`` = 0).
* Depth: the ranking is cut or padded to exactly 1000 ranks (``max_n=1000``), padding
  gaining 0; documents below rank 1000 are ignored, and W is spread over all 1000 ranks
  (so RBP's weights are p^(i-1) / sum_{j<=1000} p^(j-1), not (1 - p) p^(i-1)).
* Residual (cwl_eval -r, ``RBP(rel=r, residual=True)``): EU in the best case (unjudged
  and missing ranks up to 1000 gain ``max_gain`` = 1) minus EU in the worst case.
* Order: ir_measures sorts each topic by score, descending, ties in the run's order
  (a stable sort); cumgain ranks by its ``ties`` policy, so ``ties="input_order"``
  reproduces ir_measures (for a dict or a file run).
* Topics: ir_measures scores every qrels topic, 0 for one the run lacks, and averages
  them all; cumgain does so with ``topics="qrels"`` (by default it averages the topics of
  both run and qrels).

The kernels (``cgcore._cwl``) build W exactly as cwl_eval does, bit for bit; the last
sum, which cwl_eval takes with a BLAS dot product whose order depends on the machine,
is taken exactly and rounded once (see cgcore/_cwl.pyx).

``RBP`` without ``rel``: ir_measures' cwl_eval provider needs ``rel``; without it (and for
``RBP@k``) ir_measures calls trectools' ``get_rbp(binary_topical_relevance=False,
average_ties=True)``: (1 - p) sum_{i<=k} p^(i-1) g_i with g the judged level (levels
<= 0 gain nothing), no normalisation and no depth limit; trectools gives each group of
equal scores the mean of its weights, which ``ties="average"`` reproduces (it gives each
the mean of its gains: the same sum). ``RBP(rel=r)@k``, which ir_measures computes with
no provider, is here cwl_eval's RBP of the top k documents.
"""
from __future__ import annotations

import numpy as np

from cgcore import _cwl as kernels
from cumgain.exceptions import InputError
from cumgain.measures.base import Family, register
from cumgain.measures.batch import Batch, gain_mapping_of, mapping_key
from cumgain.measures.parse import PARAMS
from cumgain.measures.ranked import tie_group_means

#: ir_measures' defaults (ir_measures/measures/rbp.py, nerr.py, inst.py, bpm.py).
DEFAULT_RBP_P = 0.8
DEFAULT_NERR10_P = 0.9
DEFAULT_T = 1.0
DEFAULT_MIN_REL = 0
#: cwl_eval's max_n (ir_measures passes 1000, cwl_eval's default).
DEPTH = kernels.DEPTH

_MODELS = {"RBP": kernels.MODEL_RBP, "INSQ": kernels.MODEL_INSQ,
           "INST": kernels.MODEL_INST, "BPM": kernels.MODEL_BPM,
           "SDCG": kernels.MODEL_SDCG, "NERR8": kernels.MODEL_NERR8,
           "NERR9": kernels.MODEL_NERR9, "NERR10": kernels.MODEL_NERR10,
           "NERR11": kernels.MODEL_NERR11}
_RANGED = ("INST", "INSQ", "BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11")
_EXAMPLES = {"INST": "INST(max_rel=3)", "INSQ": "INSQ(max_rel=3)", "BPM": "BPM(max_rel=3)@10",
             "SDCG": "SDCG(max_rel=3)@10", "NERR8": "NERR8(max_rel=3)@10",
             "NERR9": "NERR9(max_rel=3)@10", "NERR10": "NERR10(max_rel=3)",
             "NERR11": "NERR11(max_rel=3)"}


def _read_residual(value, spelling: str) -> dict:
    if not isinstance(value, bool):
        raise InputError(f"measure {spelling!r}: residual must be True or False")
    return {"params": (("residual", value),)}


PARAMS.setdefault("residual", _read_residual)


def _check(family: str, params: dict, relevance_level, gains, dcg=None) -> None:
    """The parameters that depend on each other (readers check each alone)."""
    if family in _RANGED:
        if "max_rel" not in params:
            raise InputError(f"{family} needs max_rel, the relevance level that gains 1 "
                             f"(like {_EXAMPLES[family]})")
        low, high = params.get("min_rel", DEFAULT_MIN_REL), params["max_rel"]
        if not low < high:
            raise InputError(f"{family}: min_rel ({low}) must be less than max_rel ({high})")
    if family == "SDCG" and dcg is not None:
        raise InputError("SDCG takes only dcg='log2' (cwl_eval's); map the levels with "
                         "gains= instead, like SDCG(gains='exponential',max_rel=3)@10")
    if family == "RBP" and gains is not None and relevance_level is not None:
        raise InputError("RBP(rel=r) is binary (gain 1 from level r): it takes no gains=; "
                         "RBP(gains=...) without rel is the graded RBP")
    if family == "RBP" and params.get("residual") and relevance_level is None:
        raise InputError("RBP(residual=True) needs rel= (the residual is cwl_eval's, whose "
                         "RBP is binary), like RBP(rel=1, residual=True)")


def _checked(family: str):
    """The family's parse-time check (run where the parser asks a family which family an
    ir_measures form means: it means this one)."""
    def redirect(options: dict, cutoff) -> str:
        _check(family, dict(options.get("params", ())), options.get("relevance_level"),
               options.get("gains"), options.get("_dcg"))
        return family
    return redirect


def _gains(batch: Batch, measure) -> tuple:
    """Per ranked row, cwl_eval's gain in the worst case (unjudged: 0) and in the best
    case (unjudged: 1); under ties="average" each group of equal scores shares its mean
    (only the measures whose weights do not depend on the gains allow that). With
    ``gains=`` m, the range is mapped too: g = (clip(m(level), m(min_rel), m(max_rel))
    - m(min_rel)) / (m(max_rel) - m(min_rel))."""
    ranked = batch.ranked(measure)
    if measure.relevance_level is not None:
        key = ("rel", measure.relevance_level)
    else:
        key = ("range", measure.param("min_rel", DEFAULT_MIN_REL), measure.param("max_rel"))
    mapped = measure.gains is not None and key[0] == "range"

    def build():
        levels = batch.levels(measure)
        in_qrels = ranked.judged | (levels < 0)
        if key[0] == "rel":
            gains = (np.maximum(levels, 0.0) >= key[1]).astype(np.float64)
        elif mapped:
            low, high = _mapped_range(measure, float(key[1]), float(key[2]))
            levels = np.where(in_qrels, batch.mapped_gains(measure, levels), 0.0)
            gains = (np.clip(levels, low, high) - low) / (high - low)
        else:
            low, high = float(key[1]), float(key[2])
            gains = (np.clip(np.maximum(levels, 0.0), low, high) - low) / (high - low)
        worst = np.where(in_qrels, gains, 0.0)
        best = np.where(in_qrels, gains, 1.0)
        if batch.tie_means:
            worst, best = tie_group_means(worst, ranked), tie_group_means(best, ranked)
        return worst, best
    extra = mapping_key(measure) if mapped else ()
    return batch.cached(("cwl_gains", id(ranked)) + key + extra, build)


def _mapped_range(measure, low: float, high: float) -> tuple:
    """(m(min_rel), m(max_rel)) under the measure's gains, which must rise between them."""
    low_gain, high_gain = (float(g) for g in gain_mapping_of(measure)(np.array([low, high])))
    if not low_gain < high_gain:
        raise InputError(f"measure {measure.name!r}: the gain of min_rel ({low_gain:g}) must "
                         f"be less than the gain of max_rel ({high_gain:g})")
    return low_gain, high_gain


def _parameter(measure) -> float:
    family = measure.family
    if family == "RBP":
        return measure.param("p", DEFAULT_RBP_P)
    if family == "NERR10":
        return measure.param("p", DEFAULT_NERR10_P)
    if family in ("INST", "INSQ", "BPM", "NERR11"):
        return measure.param("T", DEFAULT_T)
    return 0.0


def _cwl(measures: list, batch: Batch) -> list:
    """Each measure with one kernel call over the batch's topics."""
    columns = []
    for measure in measures:
        family = measure.family
        _check(family, dict(measure.params), measure.relevance_level, measure.gains)
        ranked = batch.ranked(measure)
        parameter = _parameter(measure)
        if family == "RBP" and measure.relevance_level is None:    # trectools' RBP
            limit = measure.cutoff if measure.cutoff is not None else np.iinfo(np.int64).max
            columns.append(kernels.geometric_utility(batch.gains(measure), ranked.offsets,
                                                     parameter, limit))
            continue
        if family == "RBP":
            limit = measure.cutoff if measure.cutoff is not None else DEPTH
            cutoff = 0
        else:
            if family in ("BPM", "SDCG", "NERR8", "NERR9") and measure.cutoff is None:
                raise InputError(f"{family} needs a cut-off, like {_EXAMPLES[family]}")
            limit, cutoff = DEPTH, measure.cutoff or 0
        worst, best = _gains(batch, measure)
        model = _MODELS[family]
        value = kernels.expected_utility(worst, ranked.offsets, model, parameter, cutoff,
                                         limit, 0.0)
        if measure.param("residual", False):
            value = kernels.expected_utility(best, ranked.offsets, model, parameter, cutoff,
                                             limit, 1.0) - value
        columns.append(value)
    return columns


_W = "sum_{i<=1000} W_i g_i, "
_RANGE = ", g = (clip(level, min_rel, max_rel) - min_rel) / (max_rel - min_rel)"
_CWL = "cwl_eval (ireval/cwl) cwl/ruler/measures/"
_FRAMEWORK = "; C/W/L: Moffat, Bailey, Scholer & Thomas, TOIS 2017; cwl_eval: Azzopardi, " \
    "Thomas & Moffat, SIGIR 2019"
_NERR = f"{_CWL}cwl_nerr.py; Azzopardi, Mackenzie & Moffat, ICTIR 2021{_FRAMEWORK}"
_RANGE_PARAMS = ("min_rel", "max_rel", "gains")

register(
    Family("RBP", "rel=r: sum_{i<=1000} W_i [level_i >= r], W_i = p^(i-1) / sum_{j<=1000} "
           "p^(j-1) (p = 0.8; @k: the top k; residual=True: what unjudged and missing ranks "
           "could add); no rel: (1 - p) sum_{i<=k} p^(i-1) level_i", _cwl,
           ir_names=("RBP",), ir_params=("p", "rel", "residual", "gains"), at="cutoff",
           redirect=_checked("RBP"),
           source=f"{_CWL}cwl_rbp.py (rel=), trectools get_rbp (no rel); Moffat & Zobel, "
                  f"TOIS 2008{_FRAMEWORK}"),
    Family("INST", _W + "c_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - sum_{j<=i} "
           "g_j (T = 1)" + _RANGE, _cwl, ir_names=("INST",),
           ir_params=("T",) + _RANGE_PARAMS, redirect=_checked("INST"), ordered=True,
           source=f"{_CWL}cwl_inst.py; Moffat, Bailey, Scholer & Thomas, ADCS 2015{_FRAMEWORK}"),
    Family("INSQ", _W + "c_i = ((i + 2T - 1) / (i + 2T))^2 (T = 1)" + _RANGE, _cwl,
           ir_names=("INSQ",), ir_params=("T",) + _RANGE_PARAMS, redirect=_checked("INSQ"),
           source=f"{_CWL}cwl_insq.py; Moffat, Scholer & Thomas, ADCS 2012{_FRAMEWORK}"),
    Family("BPM", "(1/m) sum_{i<=m} g_i, m the first rank with sum_{j<=i} g_j >= T or i = k "
           "(T = 1)" + _RANGE, _cwl, ir_names=("BPM",), ir_params=("T",) + _RANGE_PARAMS,
           at="cutoff_required", redirect=_checked("BPM"), ordered=True,
           source=f"{_CWL}cwl_bpm.py (static); Zhang et al., SIGIR 2017{_FRAMEWORK}"),
    Family("SDCG", "sum_{i<=k} (g_i / log2(i + 1)) / sum_{i<=k} 1 / log2(i + 1): DCG@k over "
           "the DCG of k documents of gain 1" + _RANGE, _cwl, ir_names=("SDCG",),
           ir_params=("dcg", "gains", "min_rel", "max_rel"), at="cutoff_required",
           redirect=_checked("SDCG"),
           source=f"{_CWL}cwl_dcg.py (NDCG-k); Jarvelin & Kekalainen, TOIS 2002{_FRAMEWORK}"),
    Family("NERR8", _W + "c_i = 1 - g_i for i < k, 0 from rank k" + _RANGE, _cwl,
           ir_names=("NERR8",), ir_params=_RANGE_PARAMS, at="cutoff_required",
           redirect=_checked("NERR8"), ordered=True, source=_NERR),
    Family("NERR9", _W + "c_i = (i / (i + 1)) (1 - g_i) for i < k, 0 from rank k" + _RANGE,
           _cwl, ir_names=("NERR9",), ir_params=_RANGE_PARAMS, at="cutoff_required",
           redirect=_checked("NERR9"), ordered=True, source=_NERR),
    Family("NERR10", _W + "c_i = p (1 - g_i) (p = 0.9)" + _RANGE, _cwl, ir_names=("NERR10",),
           ir_params=("p",) + _RANGE_PARAMS, redirect=_checked("NERR10"), ordered=True,
           source=_NERR),
    Family("NERR11", _W + "c_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i) (T = 1)" + _RANGE,
           _cwl, ir_names=("NERR11",), ir_params=("T",) + _RANGE_PARAMS,
           redirect=_checked("NERR11"), ordered=True, source=_NERR),
)
