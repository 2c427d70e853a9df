"""trec_eval's measure selection and text output, reproduced byte for byte.

Only formatting and trec_eval's command-line rules live here; every number comes
from :func:`cumgain.evaluate`.

Measure selection (trec_eval.c ``mark_measure`` and each measure's ``init``):

* ``-m name`` marks a measure; ``-m name.params`` marks it and records the
  parameters. A measure marked several times uses the **first** parameter list
  given for it anywhere on the command line (``-m P.5 -m P.10`` gives P_5 only;
  ``-m P -m P.5`` also gives P_5 only), or its defaults if none was given.
* Nicknames mark several measures: ``official`` (the default when no ``-m`` is
  given) and ``all_trec``, restricted here to the measures cumgain supports.
* Measures print in trec_eval's registry order, whatever the command-line order:
  :data:`PRINT_ORDER`, then cut-offs ascending. Names trec_eval does not know
  (``nDCG@10(discount=tois)``, ``CG@5``, ...) are a cumgain extension; they print in
  the slot of their trec_eval family if they have one, otherwise after all others.

Output (``meas_print_single.c``, ``meas_print_final.c``): one line per value,
``printf("%-22s\\t%s\\t%6.4f\\n", name, qid, value)``; the counts ``num_*`` print as
integers (``%ld``), ``runid`` prints the run tag. With ``-q`` every topic's block comes
first (topics in byte order of the id), then the summary (``all``) block. ``runid``,
``num_q`` and ``gm_map`` print in the summary only.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Optional, Sequence

import numpy as np

from cumgain.exceptions import InputError
from cumgain.measures import (
    TREC_CUTOFF_FAMILIES,
    TREC_GAIN_FAMILIES,
    TREC_PLAIN,
    Measure,
)

# The order in which trec_eval 10.0 prints measures (its registry, measures.c). Checked
# against the expected outputs: dcg and ideal_dcg print *before* ndcg.
PRINT_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
)

# Families of the cumgain extensions that have a trec_eval slot.
_SLOT_OF_FAMILY = {"nDCG": "ndcg_cut", "AP": "map"}

# Printed in the summary block only (trec_eval's print_single_meas is empty for them).
SUMMARY_ONLY = ("runid", "num_q", "gm_map")

# trec_eval's nicknames (measures.c), restricted to what cumgain computes. The
# unsupported members are listed so that the help and the errors can say so.
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "recip_rank", "P")
ALL_TREC = OFFICIAL + ("recall", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "success")
NICKNAMES = {"official": OFFICIAL, "all_trec": ALL_TREC}
NICKNAMES_LEFT_OUT = {
    "official": ("bpref", "iprec_at_recall"),
    "all_trec": ("bpref", "iprec_at_recall", "relstring", "infAP", "gm_bpref", "Rprec_mult",
                 "utility", "11pt_avg", "binG", "G", "relative_P", "set_P", "set_relative_P",
                 "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid",
                 "unj"),
}

# trec_eval names cumgain does not compute (measures and nicknames): a clear error.
UNSUPPORTED = frozenset(
    NICKNAMES_LEFT_OUT["all_trec"]
    + ("set", "prefs", "all_prefs", "qrels_jg", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
       "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
       "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
       "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
       "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap"))

TREC_FAMILIES = ("runid",) + TREC_PLAIN + tuple(TREC_CUTOFF_FAMILIES) + TREC_GAIN_FAMILIES


class Selection:
    """The measures one trec_eval command line asks for.

    ``spellings`` go to :func:`cumgain.evaluate` as they are; ``runid`` says whether
    the ``runid`` line is wanted.
    """

    def __init__(self, runid: bool, spellings: list):
        self.runid = runid
        self.spellings = spellings

    def __repr__(self) -> str:
        return f"Selection(runid={self.runid}, spellings={self.spellings})"


def select_measures(arguments: Sequence[str]) -> Selection:
    """Resolve the ``-m`` arguments of one command line, with trec_eval's rules.

    >>> select_measures(["P.5", "P.10", "map"]).spellings
    ['P.5', 'map']
    >>> select_measures(["official"]).runid
    True
    """
    if not arguments:
        arguments = ["official"]
    marked: dict = {}          # trec_eval family -> None (an ordered set)
    parameters: dict = {}      # family -> the first parameter list given
    extensions: list = []      # cumgain spellings trec_eval does not know
    for argument in arguments:
        name, dot, params = argument.partition(".")
        if dot and not params and (name in NICKNAMES or name in TREC_FAMILIES):
            raise InputError(f"improper measure in parameter {argument!r} (nothing after '.')")
        if name in NICKNAMES:
            marked.update(dict.fromkeys(NICKNAMES[name]))
        elif name in TREC_FAMILIES:
            marked[name] = None
            if dot:
                parameters.setdefault(name, params)
        elif name in UNSUPPORTED or argument in UNSUPPORTED:
            raise InputError(f"trec_eval measure {argument!r} is not supported by cumgain; "
                             f"supported: {', '.join(sorted(NICKNAMES) + list(TREC_FAMILIES))}")
        else:
            extensions.append(argument)     # validated by the measure parser
    spellings = []
    for family in marked:
        if family == "runid":
            continue
        spellings.append(f"{family}.{parameters[family]}" if family in parameters else family)
    return Selection("runid" in marked, spellings + extensions)


def print_order(measures: Iterable[Measure]) -> list:
    """The measures in trec_eval's print order (stable for equal keys)."""
    def key(item):
        index, measure = item
        slot = _SLOT_OF_FAMILY.get(measure.family, measure.family)
        rank = PRINT_ORDER.index(slot) if slot in PRINT_ORDER else len(PRINT_ORDER)
        return (rank, measure.cutoff or 0, index)
    return [measure for _, measure in sorted(enumerate(measures), key=key)]


def value_line(name: str, qid: str, value: float, count: bool) -> str:
    """One output line, ``%-22s\\t%s\\t%6.4f`` (``%ld`` for counts), without newline."""
    if count:
        return f"{name:<22}\t{qid}\t{int(value)}"
    return f"{name:<22}\t{qid}\t{value:6.4f}"


def trec_lines(result, selection: Selection, *, per_topic: bool, summary: bool,
               printed: Optional[set] = None, hidden_topics: Iterable[str] = (),
               summary_num_rel: Optional[float] = None) -> Iterator[str]:
    """The lines trec_eval prints for an :class:`~cumgain.evaluator.Evaluation`.

    ``hidden_topics`` are evaluated (they count in the means) but not printed per
    topic (trec_eval 9.0.8 under ``-c``). ``printed``: the names of the measures to
    print (default: all of ``result``). ``summary_num_rel`` replaces the summary
    ``num_rel`` (trec_eval's ``-c`` quirk).
    """
    measures = print_order(m for m in result.measures if printed is None or m.name in printed)
    if per_topic:
        hidden = set(hidden_topics)
        columns = [(m.name, m.is_count, np.asarray(result.values[m.name]).tolist())
                   for m in measures if m.family not in SUMMARY_ONLY]
        for t, topic in enumerate(result.topics):
            if topic in hidden:
                continue
            for name, count, values in columns:
                yield value_line(name, topic, values[t], count)
    if summary:
        if selection.runid:
            yield f"{'runid':<22}\tall\t{result.run_tag}"
        for measure in measures:
            value = result.means[measure.name]
            if measure.family == "num_rel" and measure.relevance_level is None \
                    and summary_num_rel is not None:
                value = summary_num_rel
            yield value_line(measure.name, "all", value, measure.is_count)
