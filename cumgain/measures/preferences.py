"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``): how many of the
preferences between documents that the judgments state a ranking fulfils.

Computed from preference judgments (:mod:`cumgain.engine.preferences`, which holds their
definitions in full), not from a ranking joined with qrels: :func:`cumgain.evaluate`
takes them when given a :class:`cumgain.engine.preferences.Preferences` as the qrels.
"""
from __future__ import annotations

from cumgain.exceptions import InputError
from cumgain.measures.base import Family, register


def _from_preferences(measures: list, batch) -> list:
    raise InputError("preference measures need preference judgments (trec_eval -R prefs or "
                     "-R qrels_prefs): read them with cumgain.engine.preferences.load_preferences")


_SOURCE = "trec_eval m_{}.c, form_prefs_counts.c (-R prefs)"
_FORMULAS = {
    "prefs_num_prefs_poss": "preferences stated (retrieved, implied and not occurring)",
    "prefs_num_prefs_ful": "preferences fulfilled (retrieved and implied)",
    "prefs_num_prefs_ful_ret": "preferences fulfilled with both documents retrieved",
    "prefs_simp": "fulfilled / possible, over all preferences",
    "prefs_pair": "mean over document pairs of the fraction of judgment groups the ranking "
                  "agrees with",
    "prefs_avgjg": "fulfilled / possible per judgment group, averaged over the groups",
    "prefs_avgjg_Rnonrel": "prefs_avgjg with each group's non-relevant documents cut or "
                           "padded to R",
    "prefs_simp_ret": "prefs_simp over pairs of retrieved documents",
    "prefs_pair_ret": "prefs_pair over pairs of retrieved documents",
    "prefs_avgjg_ret": "prefs_avgjg over pairs of retrieved documents",
    "prefs_avgjg_Rnonrel_ret": "prefs_avgjg_Rnonrel among retrieved documents",
    "prefs_simp_imp": "prefs_simp over pairs with at least one document retrieved",
    "prefs_pair_imp": "prefs_pair over pairs with at least one document retrieved",
    "prefs_avgjg_imp": "prefs_avgjg over pairs with at least one document retrieved",
}
_COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")

register(*(Family(name, formula, _from_preferences, trec="plain", input="preferences",
                  aggregate="sum" if name in _COUNTS else "mean",
                  kind="count" if name in _COUNTS else "float", ordered=True,
                  source=_SOURCE.format(name))
           for name, formula in _FORMULAS.items()))
