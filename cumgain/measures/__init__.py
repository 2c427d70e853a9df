"""Measures as data: every measure family declared once (:mod:`.base`), in the family
modules below, and one parser for every spelling (:mod:`.parse`).

Family modules: :mod:`.counts` (``num_*``, ``runid``), :mod:`.binary` (P, recall, AP,
RR, R-precision, interpolated precision, set measures, ...), :mod:`.judged` (bpref,
infAP, unj, rbp_resid, relstring), :mod:`.graded` (nDCG and trec_eval's other graded
measures, and the cumulated-gain family of Jarvelin & Kekalainen), :mod:`.ir_measures_misc`
(ERR, Judged, Compat, Accuracy: ir_measures' own providers), :mod:`.sakai` (NTCIREVAL's
Q, nERR, iRBU, GAP, MSnDCG and JKnDCG), :mod:`.cwl` (cwl_eval's C/W/L measures),
:mod:`.diversity` (ndeval's measures over subtopic judgments), :mod:`.torchmetrics`
(torchmetrics' RetrievalFallOut, RetrievalAUROC, RetrievalMAP, RetrievalPrecision); the registry,
:data:`FAMILIES`, holds them all. Defaults in measure names follow trec_eval and
ir_measures: discount 1/log2(i+1), gain = relevance level, the ideal from all judged
documents (the vector API, :mod:`cumgain.vectors`, defaults to the TOIS rule).
"""
from cumgain.measures.base import FAMILIES, Family, Measure, register
from cumgain.measures import (  # noqa: F401,E402 - each module registers its families
    binary, counts, cwl, diversity, graded, ir_measures_misc, judged, judgment_groups,
    preferences, sakai, torchmetrics)
from cumgain.measures.binary import SUCCESS_CUTOFFS, TREC_CUTOFFS
from cumgain.measures.parse import DISCOUNT_NAMES, parse_measure, parse_measures
from cumgain.measures.trec_names import NICKNAMES, TREC_ORDER

#: trec_eval's measure names cumgain computes (every family with a trec_eval spelling).
TREC_NAMES = tuple(name for name in TREC_ORDER if name in FAMILIES
                   and FAMILIES[name].trec is not None)

__all__ = ["DISCOUNT_NAMES", "FAMILIES", "Family", "Measure", "NICKNAMES", "SUCCESS_CUTOFFS",
           "TREC_CUTOFFS", "TREC_NAMES", "TREC_ORDER", "parse_measure", "parse_measures",
           "register"]
