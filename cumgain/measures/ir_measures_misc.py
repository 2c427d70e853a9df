"""The measures ir_measures computes with its own small providers rather than through
trec_eval: ``ERR`` (gdeval), ``Judged`` (judged), ``Compat`` (compat) and ``Accuracy``
(accuracy), with ir_measures' names, parameters and defaults; each reproduces its
provider's formula (the provider named in each docstring is from ir_measures 0.4.3).

What the providers do that cumgain does not copy, and how to get the same numbers:

* **Tie order.** gdeval orders equal scores by docno descending, as trec_eval does
  (cumgain's default); the judged, compat and msmarco providers by docno *ascending*
  (``ties="docno_asc"``), the accuracy provider keeps the run's order
  (``ties="input_order"``). Only the tie rule of the evaluation applies here.
* **Rounding.** gdeval prints ``%.5f``, so ir_measures' ERR is rounded to 5 decimals
  (ir_measures#50); cumgain's ERR is the unrounded value of the same formula.
* **Gains** (cumgain's, not gdeval's): ``ERR(gains=m)`` has R = m(level) / (g_max + 1),
  g_max = m(max_rel), else the top gain of a table, else m(4), so that exponential
  gains give gdeval's (2^level - 1) / 2^4; ``Compat(gains=m)`` orders the ideal by gain.
* **Topics.** The providers report the qrels topics, 0 for one the run lacks (the
  accuracy provider reports nothing instead); ``topics="qrels"`` gives the same set.
* **Compat's ideal ranking.** Within a level, Clarke's reference code (compatibility.py)
  puts the retrieved documents in run order, then the unretrieved ones; so does cumgain.
  The compat provider instead sorts them by run score with 0.0 for an unretrieved
  document, so a retrieved one with a negative score falls behind the unretrieved ones
  of its level (and one scored exactly 0.0 ties with them, in qrels order). The values
  differ only where a relevant retrieved document has a score <= 0.
* **Accuracy's mean.** The provider leaves out a topic without a (relevant,
  non-relevant) pair in the top k; here its value is NaN and the mean is over the other
  topics (``mean_defined``), ir_measures' mean. (Where the provider raises
  ZeroDivisionError, a topic with no non-relevant document in the top k, the value here
  is NaN too.)

ir_measures' msmarco provider (its RR) needs no family of its own: it differs from
trec_eval's recip_rank only in ordering ties by docno ascending, so cumgain's ``RR@k``
with ``ties="docno_asc"`` is its value per topic (topics without a relevant document
are 0 in both).
"""
from __future__ import annotations

import numpy as np

from cgcore import _tie_expected as expected
from cgcore import _graded_extra as kernels
from cgcore import _measures as trec_kernels
from cumgain.exceptions import InputError
from cumgain.measures.base import Family, register
from cumgain.measures.batch import UNJUDGED, Batch, safe_ratio
from cumgain.measures.sakai import satisfaction

GDEVAL_MAX_JUDGMENT = 4     # gdeval.pl's $MAX_JUDGMENT: the highest level a qrels may hold
COMPAT_P = 0.95             # ir_measures' Compat defaults
COMPAT_NORMALIZE = True


def _cutoff(batch: Batch, measure) -> int:
    """The measure's cut-off, or the full depth of the evaluation (every rank)."""
    return measure.cutoff if measure.cutoff is not None else batch.full_depth(measure)


# ---------------------------------------------------------------- ERR (gdeval)

def _check_top_level(measure, batch: Batch) -> int:
    """``max_rel`` (gdeval's MAX_JUDGMENT, 4 unless given); no judgment may exceed it,
    as gdeval refuses such a qrels file."""
    top = measure.param("max_rel", GDEVAL_MAX_JUDGMENT)
    if not 1 <= top <= 1000:
        raise InputError(f"measure {measure.name!r}: max_rel must be a whole number in "
                         f"[1, 1000], got {top}")
    levels = batch.qrels_levels(measure)
    highest = levels.max(initial=-np.inf)
    if highest > top:
        hint = "" if measure.param("max_rel") is not None else \
            f" (gdeval's maximum judgment; write ERR(max_rel={int(np.ceil(highest))}) to " \
            "allow higher levels)"
        raise InputError(f"measure {measure.name!r}: relevance level {highest:g} is above "
                         f"{top}{hint}")
    return top


def _gdeval_err(measures: list, batch: Batch) -> list:
    """gdeval.pl's err: R_i = (2^g_i - 1) / 2^4 with g_i the level of the document at
    rank i (0 if not judged or judged <= 0), summed as gdeval sums it. With ``gains=``:
    R_i = g_i / (g_max + 1), g_max the gain of the top level (see _mapped_satisfaction)."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        if measure.gains is not None:
            probabilities = _mapped_satisfaction(batch, measure)
        else:
            top = _check_top_level(measure, batch)

            def build(measure=measure, top=top):
                levels = np.maximum(batch.levels(measure), 0.0)
                return (np.power(2.0, levels) - 1.0) / 2.0 ** top
            probabilities = batch.cached(("gdeval_err", id(ranked), top), build)
        columns.append(
            expected.expected_err(probabilities, ranked.scores, ranked.offsets,
                                  _cutoff(batch, measure))
            if batch.policies["ties"] == "expected" else
            kernels.expected_reciprocal_rank(probabilities, ranked.offsets,
                                             _cutoff(batch, measure), kernels.ORDER_GDEVAL))
    return columns


def _mapped_satisfaction(batch: Batch, measure) -> np.ndarray:
    """R = g / (g_max + 1) for ERR(gains=...): g_max is the gain of level ``max_rel`` if
    given, else the largest gain of a gains table, else the gain of gdeval's top level 4
    (so ERR(gains="exponential") is gdeval's (2^level - 1) / 2^4), as nERR's R."""
    run, _, _ = satisfaction(batch, measure, GDEVAL_MAX_JUDGMENT)
    return run


# ---------------------------------------------------------------- Judged

def _judged(measures: list, batch: Batch) -> list:
    """The judged provider: of the top min(k, N), the fraction with a judgment at any
    level (a negative one included: the provider asks only whether the document is in
    the qrels); 0 when N = 0."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        in_qrels = batch.cached(("in_qrels", id(ranked)), lambda: (
            batch.status(measure) >= UNJUDGED).astype(np.float64))
        shown = np.minimum(batch.num_retrieved(measure), _cutoff(batch, measure))
        found = trec_kernels.relevant_in_top(in_qrels, ranked.offsets, shown)
        columns.append(safe_ratio(found, shown.astype(np.float64)))
    return columns


# ---------------------------------------------------------------- Compat

def _compat(measures: list, batch: Batch) -> list:
    """Compatibility with Clarke's ideal ranking: see cgcore._graded_extra.compatibility."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        ideal, ideal_offsets = batch.ideal(measure)
        columns.append(kernels.compatibility(
            batch.gains(measure), ranked.offsets, ideal, ideal_offsets,
            measure.param("p", COMPAT_P), measure.param("normalize", COMPAT_NORMALIZE)))
    return columns


# ---------------------------------------------------------------- Accuracy

def _accuracy(measures: list, batch: Batch) -> list:
    """The accuracy provider: of the (relevant, non-relevant) pairs among the top k, the
    fraction with the relevant document above, where relevant means a level >= rel
    (documents without a judgment have level 0, negative judgments keep theirs); NaN
    for a topic without such a pair, which the provider leaves out of its mean."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        level = batch.level(measure)
        relevant = batch.cached(("accuracy_relevant", id(ranked), level), lambda: (
            batch.levels(measure) >= level).astype(np.float64))
        columns.append(kernels.pairwise_accuracy(relevant, ranked.offsets,
                                                 _cutoff(batch, measure)))
    return columns


_IR = "ir_measures 0.4.3"
register(
    Family("ERR", "sum_{i<=k} R_i / i prod_{j<i} (1 - R_j), R_i = (2^level - 1) / 2^4 "
           "(gdeval; levels above 4 refused unless max_rel= raises the 4); unrounded; with "
           "gains=: R_i = g_i / (g_max + 1), g_max the gain of max_rel, of the table's top, "
           "or of level 4",
           _gdeval_err, ir_names=("ERR",), ir_params=("max_rel", "gains"), at="cutoff",
           expected_ties=True,
           ordered=True, source=f"gdeval.pl 1.2a ({_IR} gdeval provider); Chapelle et al., "
           "CIKM 2009"),
    Family("Judged", "fraction of the top min(k, N) with a judgment (negative ones too); "
           "0 when N = 0", _judged, ir_names=("Judged",), at="cutoff", ordered=True,
           source=f"{_IR} judged provider (OpenNIR)"),
    Family("Compat", "RBO(run, ideal, p) over max(N, R) ranks, / RBO(ideal, ideal, p) if "
           "normalize (p = 0.95, normalize = True); the ideal by level, then run order, "
           "then the unretrieved",
           _compat, ir_names=("Compat",), ir_params=("p", "normalize", "gains"), ordered=True,
           source=f"{_IR} compat provider; Clarke's compatibility.py; Clarke, Vtyurina & "
           "Smucker, TOIS 2021"),
    Family("Accuracy", "fraction of (relevant, non-relevant) pairs in the top k with the "
           "relevant one above; NaN without such a pair, left out of the mean (as "
           "ir_measures does)",
           _accuracy, ir_names=("Accuracy",), ir_params=("rel",), at="cutoff", ordered=True,
           aggregate="mean_defined",
           source=f"{_IR} accuracy provider"),
)
