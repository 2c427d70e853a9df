"""What a measure is: a :class:`Family` declared once, with everything about it, and the
:class:`Measure` instances the parser makes of it.

A family module (``trec_counts``, ``trec_binary``, ...) declares its families with
:func:`register`; the parser (:mod:`cumgain.measures.parse`) reads their spellings and
parameters from here, the evaluator calls ``family.compute`` and aggregates with
``family.aggregate``, and the trec_eval report prints with ``family.kind`` and
``family.per_topic`` / ``family.summary``. Nothing else knows a family by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

GainsSpec = Union[None, str, tuple[tuple[float, float], ...]]

#: trec_eval's syntax for a measure's parameters (``meas_init.c``):
#: ``plain`` (none), ``cutoffs`` (``P.5,10``: whole numbers, read with atol, sorted,
#: positive, distinct; one value each, printed ``P_5``), ``float_cutoffs``
#: (``iprec_at_recall.0.1,0.5``: atof, sorted, distinct; printed ``%3.2f``), ``floats``
#: (``utility.1,-1,0,0``: an ordered list; one value, printed ``utility_1,-1,0,0``),
#: ``pairs`` (``ndcg.1=3,2=9``: name=value pairs; printed ``ndcg_1=3,2=9``).
TREC_SYNTAXES = ("plain", "cutoffs", "float_cutoffs", "floats", "pairs")

#: How per-topic values combine into the summary (trec_eval's ``calc_avg``);
#: ``mean_defined`` is the mean over the topics whose value is not NaN (ir_measures'
#: mean for a provider that reports no value for some topics).
AGGREGATES = ("mean", "mean_defined", "sum", "gmean", "first", "none")

#: What a value is: ``float`` (printed %6.4f), ``count`` (printed %ld, summed),
#: ``text`` (relstring, runid: printed as text).
KINDS = ("float", "count", "text")

#: What a family is computed from: a ranked run joined with qrels (``ranking``),
#: trec_eval's judgment groups (``-R qrels_jg``), preference judgments (``-R prefs``),
#: or subtopic judgments (ndeval's ``qid subtopic docno rel``: the diversity measures).
INPUTS = ("ranking", "judgment_groups", "preferences", "subtopics")


@dataclass(frozen=True)
class Family:
    """One measure family, declared once.

    ``compute(measures, batch)`` returns one per-topic float64 array (an object array
    for ``text`` families) per measure, for the topics of ``batch`` (a
    :class:`cumgain.measures.batch.Batch`); the measures given are all of this
    family (or of families sharing its ``compute``) in one evaluation, so cut-offs
    and parameters can share one kernel call.
    """

    name: str                        # canonical: trec_eval's name where it has one
    formula: str                     # one line, for the docs and the README table
    compute: Callable[..., Any]      # (measures, batch) -> list of per-topic arrays
    trec: Optional[str] = None       # trec_eval parameter syntax (TREC_SYNTAXES), or None
    trec_defaults: tuple[Any, ...] = ()  # default cut-offs / parameters of that syntax
    ir_names: tuple[str, ...] = ()   # ir_measures-style names, the first canonical
    ir_params: tuple[str, ...] = ()  # parameters the ir form takes (keys of parse.PARAMS)
    at: str = "none"                 # the ir form's @: "none", "cutoff" (optional),
                                     # "cutoff_required", "recall" (IPrec@0.5)
    redirect: Optional[Callable[..., str]] = None  # (options, cutoff) -> family name for ir forms
                                         # that mean another family (AP@10 -> map_cut)
    trec_twin: Optional[str] = None  # the trec_eval family equal to this one at its
                                     # defaults (nDCG@k: ndcg_cut.k), for suggestions
    aggregate: str = "mean"
    kind: str = "float"
    per_topic: bool = True           # trec_eval -q prints it per topic
    summary: bool = True             # trec_eval prints it in the 'all' block
    input: str = "ranking"
    ordered: bool = False            # depends on the order within groups of equal
                                     # scores: undefined under ties="average"
    expected_ties: bool = False      # ordered, and computes its exact expectation over
                                     # those orders under ties="expected"
    missing_value: Optional[float] = None  # a qrels topic the run lacks (topics="qrels"):
                                           # None = computed on an empty ranking
    unlisted_gain: str = "identity"  # a level a gains= table leaves out: its own value
                                     # (ir_measures' mapping) or "error" (NTCIREVAL's
                                     # tables list every level)
    since: str = ""                  # "10" for measures new in trec_eval 10.0
    source: str = ""                 # where the definition comes from

    def __post_init__(self) -> None:
        assert self.trec is None or self.trec in TREC_SYNTAXES, self.trec
        assert self.aggregate in AGGREGATES and self.kind in KINDS and self.input in INPUTS
        assert self.at in ("none", "cutoff", "cutoff_required", "recall")
        assert self.unlisted_gain in ("identity", "error")


@dataclass(frozen=True)
class Measure:
    """One measure to compute: the output ``name`` and everything that defines it.

    ``gains``: None (gain = relevance level), a scheme string ("0-1-10-100",
    "exponential"), or a tuple of (level, gain) pairs; ``gain_fallback`` says what an
    unlisted level gets: "identity" (trec_eval's gain tables) or "error".
    ``relevance_level`` / ``judged_only``: per-measure overrides of the evaluation's
    policies (ir_measures' ``rel=`` and ``judged_only=``), None to inherit.
    ``params``: the family's other parameters as sorted (key, value) pairs (``p``,
    ``beta``, ``recall``, ``fractions``, ``coefficients``, ``length``, ...).
    """

    name: str
    family: str
    cutoff: Optional[int] = None
    gains: GainsSpec = None
    gain_fallback: str = "identity"
    discount: str = "trec_eval"
    base: float = 2.0
    relevance_level: Optional[float] = None
    judged_only: Optional[bool] = None
    params: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def spec(self) -> Family:
        """The :class:`Family` this measure belongs to."""
        return FAMILIES[self.family]

    @property
    def aggregate(self) -> str:
        """How per-topic values combine (see :data:`AGGREGATES`)."""
        return self.spec.aggregate

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def is_count(self) -> bool:
        return self.spec.kind == "count"

    def param(self, key: str, default: Any = None) -> Any:
        """The value of one of ``params``."""
        for name, value in self.params:
            if name == key:
                return value
        return default


#: Every family, by canonical name, in trec_eval's registry order first (measures.c:
#: the order trec_eval prints in), then the others in the order declared.
FAMILIES: dict[str, Family] = {}


def register(*families: Family) -> None:
    """Add families to the registry (each family module calls this once)."""
    for family in families:
        if family.name in FAMILIES:
            raise ValueError(f"measure family {family.name!r} is declared twice")
        FAMILIES[family.name] = family


def expected_tie_families() -> list[str]:
    """The order-dependent families with an exact expectation under ties="expected"."""
    return [name for name, family in FAMILIES.items() if family.expected_ties]
