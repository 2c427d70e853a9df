"""Measures averaged over judgment groups (trec_eval ``-R qrels_jg``): ``map_avgjg``,
``P_avgjg``, ``Rprec_mult_avgjg``.

Each is its base measure (``map``, ``P``, ``Rprec_mult``) computed against each
judgment group's judgments alone, summed over the topic's groups in their byte order
and divided by their number (trec_eval's ``m_*_avgjg.c``); :mod:`cumgain.engine.judgment_groups`
reads the groups and evaluates them.
"""
from __future__ import annotations

from cumgain.exceptions import InputError
from cumgain.measures.base import Family, Measure, register
from cumgain.measures.binary import R_MULTIPLES, TREC_CUTOFFS

#: family -> the family each group is evaluated with
BASE_FAMILY = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}


def base_measure(measure: Measure) -> Measure:
    """The measure each group is evaluated with (map_avgjg -> map, P_avgjg_5 -> P_5)."""
    return Measure(f"{measure.name}\0per group", BASE_FAMILY[measure.family],
                   cutoff=measure.cutoff, relevance_level=measure.relevance_level,
                   judged_only=measure.judged_only, params=measure.params)


def _per_group(measures: list, batch) -> list:
    raise InputError("judgment-group measures need judgment groups (trec_eval -R qrels_jg): "
                     "read them with cumgain.engine.judgment_groups.load_judgment_groups")


_SOURCE = "trec_eval m_{}.c (-R qrels_jg)"
register(
    Family("map_avgjg", "AP against each judgment group's judgments, averaged over the "
           "topic's groups", _per_group, trec="plain", input="judgment_groups", ordered=True,
           source=_SOURCE.format("map_avgjg")),
    Family("P_avgjg", "P@k against each judgment group, averaged over the groups",
           _per_group, trec="cutoffs", trec_defaults=TREC_CUTOFFS, input="judgment_groups",
           source=_SOURCE.format("P_avgjg")),
    Family("Rprec_mult_avgjg", "Rprec_mult against each judgment group, averaged over the "
           "groups", _per_group, trec="float_cutoffs", trec_defaults=R_MULTIPLES,
           input="judgment_groups", ordered=True, source=_SOURCE.format("Rprec_mult_avgjg")),
)
