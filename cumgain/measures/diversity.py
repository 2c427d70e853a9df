"""The novelty and diversity measures of the TREC Web track's ndeval (``ndeval.c`` 4.5),
with ir_measures' names, aliases, parameters and defaults (its ``pyndeval`` provider):
``ERR_IA@k``, ``nERR_IA@k``, ``alpha_DCG@k`` (``α_DCG``), ``alpha_nDCG@k``
(``α_nDCG``), ``NRBP``, ``nNRBP``, ``AP_IA`` (``MAP_IA``), ``P_IA@k``, ``StRecall@k``.

They need subtopic judgments (ndeval's qrels, ``qid subtopic docno rel``), read by
:func:`cumgain.engine.diversity.load_subtopics` and passed to :func:`cumgain.evaluate` as the
qrels; :mod:`cumgain.engine.diversity` evaluates them and says exactly what they compute.
Notation of the formulas: g(i) = sum over the subtopics s the document at rank i is
relevant to of (1 - alpha)^(documents relevant to s above i); S = the topic's subtopics
with a relevant document; I(i) = S (1 - alpha)^(i-1); "the ideal" is ndeval's greedy
ideal ranking of the judged documents.

Parameters: ``alpha`` (redundancy intolerance, default 0.5; ERR_IA and nERR_IA always use
0.5, as ir_measures runs them), ``beta`` (NRBP's patience, default 0.5), ``rel`` (the
level from which a subtopic judgment is relevant; default: the evaluation's
``relevance_level``, 1), ``judged_only`` (drop the ranked documents that have no
subtopic judgment). The cut-off families need a cut-off (ir_measures accepts
``ERR_IA`` without one, then fails when evaluating it).
"""
from __future__ import annotations

from cumgain.exceptions import InputError
from cumgain.measures.base import Family, register

#: The value of alpha and beta when a measure does not give (or take) them.
DEFAULT_ALPHA = 0.5
DEFAULT_BETA = 0.5


def _needs_subtopics(measures: list, batch) -> list:
    raise InputError("the diversity measures need subtopic judgments (ndeval's qrels: qid "
                     "subtopic docno rel): read them with "
                     "cumgain.engine.diversity.load_subtopics and pass them as the qrels")


_SOURCE = "ndeval.c 4.5 (TREC Web track), run by pyndeval / ir_measures; "
_PLAIN = ("rel", "judged_only")
register(
    Family("ERR_IA", "sum_{i<=k} g(i)/i / sum_{i<=k} I(i)/i, alpha = 0.5 (k = 1: g(1), "
           "unnormalised, as in ndeval)", _needs_subtopics, ir_names=("ERR_IA",),
           ir_params=_PLAIN, at="cutoff_required", input="subtopics", ordered=True,
           source=_SOURCE + "Chapelle et al., CIKM 2009"),
    Family("nERR_IA", "ERR_IA@k / ERR_IA@k of the greedy ideal", _needs_subtopics,
           ir_names=("nERR_IA",), ir_params=_PLAIN, at="cutoff_required",
           input="subtopics", ordered=True, source=_SOURCE + "Chapelle et al., CIKM 2009"),
    Family("alpha_DCG", "sum_{i<=k} g(i)/log2(i+1) / sum_{i<=k} I(i)/log2(i+1) (k = 1: "
           "g(1), unnormalised, as in ndeval)", _needs_subtopics,
           ir_names=("alpha_DCG", "α_DCG"), ir_params=("alpha",) + _PLAIN,
           at="cutoff_required", input="subtopics", ordered=True,
           source=_SOURCE + "Clarke et al., SIGIR 2008"),
    Family("alpha_nDCG", "alpha_DCG@k / alpha_DCG@k of the greedy ideal", _needs_subtopics,
           ir_names=("alpha_nDCG", "α_nDCG"), ir_params=("alpha",) + _PLAIN,
           at="cutoff_required", input="subtopics", ordered=True,
           source=_SOURCE + "Clarke et al., SIGIR 2008"),
    Family("NRBP", "(1 - (1 - alpha) beta) / S * sum_i g(i) beta^(i-1), the whole ranking",
           _needs_subtopics, ir_names=("NRBP",), ir_params=("alpha", "beta", "rel"),
           input="subtopics", ordered=True, source=_SOURCE + "Clarke et al., ICTIR 2009"),
    Family("nNRBP", "NRBP / NRBP of the greedy ideal", _needs_subtopics,
           ir_names=("nNRBP",), ir_params=("alpha", "beta", "rel"), input="subtopics",
           ordered=True, source=_SOURCE + "Clarke et al., ICTIR 2009"),
    Family("AP_IA", "mean over the S subtopics of AP against the subtopic's relevant "
           "documents", _needs_subtopics, ir_names=("AP_IA", "MAP_IA"), ir_params=_PLAIN,
           input="subtopics", ordered=True, source=_SOURCE + "Agrawal et al., WSDM 2009"),
    Family("P_IA", "relevant (document, subtopic) pairs in the top k / (k S)",
           _needs_subtopics, ir_names=("P_IA",), ir_params=_PLAIN, at="cutoff_required",
           input="subtopics", ordered=True, source=_SOURCE + "Agrawal et al., WSDM 2009"),
    Family("StRecall", "subtopics with a relevant document in the top k / S",
           _needs_subtopics, ir_names=("StRecall",), ir_params=("rel",),
           at="cutoff_required", input="subtopics", ordered=True,
           source=_SOURCE + "Zhai et al., SIGIR 2003"),
)
