"""Measures as data: one registry, one parser for every spelling.

Spellings accepted (all resolve to :class:`Measure` objects):

* trec_eval / pytrec_eval: ``map``, ``P_5``, ``P.5,10``, ``P`` (trec_eval's default
  cut-offs), ``ndcg_cut.10``, ``ndcg_cut_10``, ``ndcg.1=3,2=9`` (a gain table; the
  measure is renamed ``ndcg_1=3,2=9`` as in trec_eval), ``recip_rank``, ``Rprec``,
  ``success.1,5``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``gm_map``,
  ``dcg``, ``ideal_dcg``, ``ndcg_rel``, ``Rndcg``. Output names are trec_eval's.
* ir_measures: ``nDCG@10``, ``nDCG``, ``P@5``, ``R@100``, ``AP``, ``AP@100``, ``RR``,
  ``RR@10``, ``Rprec``, ``Success@10``, ``NumQ``, ``NumRet``, ``NumRel``, ``NumRelRet``,
  with parameters ``nDCG(judged_only=True)@10``, ``P(rel=2)@5``,
  ``nDCG(gains={0:0,1:1,2:3})@10``, ``nDCG(dcg='exp-log2')@10``. Output names are the
  spelling given (spaces removed).
* The Jarvelin & Kekalainen family at any cut-off: ``CG@k``, ``DCG@k``, ``nCG@k``,
  ``nDCG@k``, ``avg_pos_nCG@k``, ``avg_pos_nDCG@k`` with parameters ``discount``
  (``tois``, ``note``, ``trec_eval``, ``none``, ``rank``), ``base`` (any b > 1) and
  ``gains`` (``0-1-10-100``, ``exponential``, ``{0:0,1:1,2:10,3:100}``, ...), written
  ``nDCG@10(discount=tois, base=10, gains=0-1-10-100)`` or
  ``nDCG(discount=tois, base=10, gains=0-1-10-100)@10``.

Defaults in measure names follow trec_eval and ir_measures: discount ``trec_eval``
(1/log2(i+1)), gains = relevance level, the ideal from all judged documents. (The
vector API, :mod:`cumgain.vectors`, defaults to the TOIS rule instead.)
"""
from __future__ import annotations

import ast
import difflib
import re
import threading
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from cumgain.exceptions import InputError

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)

# family -> (aggregate over topics, is a count)
FAMILIES = {
    "num_q": ("sum", True), "num_ret": ("sum", True), "num_rel": ("sum", True),
    "num_rel_ret": ("sum", True), "map": ("mean", False), "map_cut": ("mean", False),
    "gm_map": ("gmean", False), "Rprec": ("mean", False), "recip_rank": ("mean", False),
    "P": ("mean", False), "recall": ("mean", False), "success": ("mean", False),
    "ndcg": ("mean", False), "ndcg_cut": ("mean", False), "ndcg_rel": ("mean", False),
    "Rndcg": ("mean", False), "dcg": ("mean", False), "ideal_dcg": ("mean", False),
    "CG": ("mean", False), "DCG": ("mean", False), "nCG": ("mean", False),
    "nDCG": ("mean", False), "avg_pos_nCG": ("mean", False), "avg_pos_nDCG": ("mean", False),
}

# trec_eval names: which take cut-offs (with their defaults) and which a gain table.
TREC_CUTOFF_FAMILIES = {"P": TREC_CUTOFFS, "recall": TREC_CUTOFFS, "map_cut": TREC_CUTOFFS,
                        "ndcg_cut": TREC_CUTOFFS, "success": SUCCESS_CUTOFFS}
TREC_GAIN_FAMILIES = ("ndcg", "ndcg_rel", "Rndcg", "dcg", "ideal_dcg")
TREC_PLAIN = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
              "recip_rank")
TREC_NAMES = TREC_PLAIN + tuple(TREC_CUTOFF_FAMILIES) + TREC_GAIN_FAMILIES

# ir_measures names -> family (cut-off families get @k)
IR_MEASURES_NAMES = {
    "nDCG": "nDCG", "P": "P", "R": "recall", "AP": "AP", "RR": "recip_rank",
    "Rprec": "Rprec", "Success": "success", "NumQ": "num_q", "NumRet": "num_ret",
    "NumRel": "num_rel", "NumRelRet": "num_rel_ret", "CG": "CG", "DCG": "DCG", "nCG": "nCG",
    "avg_pos_nCG": "avg_pos_nCG", "avg_pos_nDCG": "avg_pos_nDCG",
}

DISCOUNT_NAMES = ("tois", "note", "trec_eval", "none", "rank")

GainsSpec = Union[None, str, tuple]


@dataclass(frozen=True)
class Measure:
    """One measure to compute: the output ``name`` and everything that defines it.

    ``gains``: None (gain = relevance level), a scheme string ("0-1-10-100",
    "exponential"), or a tuple of (level, gain) pairs; ``gain_fallback`` says what an
    unlisted level gets: "identity" (trec_eval's gain tables) or "error".
    ``relevance_level`` / ``judged_only``: per-measure overrides of the evaluation's
    policies (ir_measures' ``rel=`` and ``judged_only=``), None to inherit.
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

    @property
    def aggregate(self) -> str:
        """How per-topic values combine: "mean", "sum" (counts) or "gmean" (gm_map)."""
        return FAMILIES[self.family][0]

    @property
    def is_count(self) -> bool:
        return FAMILIES[self.family][1]


def _atol(text: str) -> int:
    """C's atol: leading integer part ("23.4" -> 23, "abc" -> 0)."""
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def _trec_cutoffs(family: str, params: str, spelling: str) -> list[int]:
    cutoffs = [_atol(part) for part in params.split(",")]
    if any(cutoff <= 0 for cutoff in cutoffs):
        raise InputError(f"measure {spelling!r}: cut-offs must be positive integers")
    if len(set(cutoffs)) != len(cutoffs):
        raise InputError(f"measure {spelling!r}: duplicate cut-offs")
    return sorted(cutoffs)


def _trec_gain_table(params: str, spelling: str) -> tuple:
    pairs = []
    for part in params.split(","):
        level, equals, gain = part.partition("=")
        try:
            pairs.append((float(int(level)), float(gain)))
        except ValueError:
            raise InputError(
                f"measure {spelling!r}: gain parameters must be level=gain pairs "
                "with integer levels, like ndcg.1=3,2=9") from None
        if not equals:
            raise InputError(f"measure {spelling!r}: malformed pair {part!r}")
    return tuple(pairs)


def _parse_trec(spelling: str) -> Optional[list[Measure]]:
    """trec_eval spellings, or None if ``spelling`` is not one."""
    if spelling in TREC_PLAIN or spelling in TREC_GAIN_FAMILIES:
        return [Measure(spelling, spelling)]
    if spelling in TREC_CUTOFF_FAMILIES:
        return [Measure(f"{spelling}_{k}", spelling, cutoff=k)
                for k in TREC_CUTOFF_FAMILIES[spelling]]
    family, dot, params = spelling.partition(".")
    if dot and family in TREC_CUTOFF_FAMILIES:
        return [Measure(f"{family}_{k}", family, cutoff=k)
                for k in _trec_cutoffs(family, params, spelling)]
    if dot and family in TREC_GAIN_FAMILIES:
        return [Measure(f"{family}_{params}", family, gains=_trec_gain_table(params, spelling))]
    if dot and family in TREC_PLAIN:
        raise InputError(f"measure {spelling!r}: {family} takes no parameters")
    match = re.fullmatch(r"(\w+?)_(\d+)", spelling)
    if match and match.group(1) in TREC_CUTOFF_FAMILIES:
        family, cutoff = match.group(1), int(match.group(2))
        if cutoff <= 0:
            raise InputError(f"measure {spelling!r}: cut-offs must be positive")
        return [Measure(spelling, family, cutoff=cutoff)]
    return None


def _split_arguments(text: str) -> list[str]:
    """Split ``a=1, gains={0:0, 1:1}`` at top-level commas."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


# CPython 3.11 (gh-106905): the AST builder's recursion counter is shared by all
# threads, so ast.literal_eval in several threads at once can raise "SystemError: AST
# constructor recursion depth mismatch". Evaluations may run in threads: one at a time.
_AST_LOCK = threading.Lock()


def _parse_value(raw: str, key: str, spelling: str):
    raw = raw.strip()
    try:
        with _AST_LOCK:
            return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw.strip("'\"")  # bare words: tois, 0-1-10-100, exponential


def _parse_gains(value, spelling: str) -> tuple[GainsSpec, str]:
    if isinstance(value, dict):
        try:
            return tuple(sorted((float(k), float(v)) for k, v in value.items())), "error"
        except (TypeError, ValueError):
            raise InputError(f"measure {spelling!r}: gains must map numbers to numbers") from None
    if isinstance(value, str):
        from cumgain.gains import gain_mapping
        gain_mapping(value)  # validates the scheme name
        return value, "error"
    raise InputError(f"measure {spelling!r}: cannot use {value!r} as gains")


_IR_FORM = re.compile(
    r"(?P<name>[A-Za-z_]\w*)(?:\((?P<args1>.*)\))?(?:@(?P<cutoff>\d+))?(?:\((?P<args2>.*)\))?")


def _parse_ir(spelling: str) -> Optional[Measure]:
    match = _IR_FORM.fullmatch(spelling)
    if not match or match.group("name") not in IR_MEASURES_NAMES:
        return None
    if match.group("args1") is not None and match.group("args2") is not None:
        raise InputError(f"measure {spelling!r}: give the parameters once")
    name = match.group("name")
    family = IR_MEASURES_NAMES[name]
    cutoff = int(match.group("cutoff")) if match.group("cutoff") else None
    if cutoff is not None and cutoff < 1:
        raise InputError(f"measure {spelling!r}: the cut-off must be >= 1")
    options: dict = {}
    arguments = match.group("args1") if match.group("args1") is not None else match.group("args2")
    for part in _split_arguments(arguments or ""):
        key, equals, raw = part.partition("=")
        key = key.strip()
        if not equals:
            raise InputError(f"measure {spelling!r}: parameter {part.strip()!r} is not key=value")
        value = _parse_value(raw, key, spelling)
        if key == "rel":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"measure {spelling!r}: rel must be a number")
            options["relevance_level"] = float(value)
        elif key == "judged_only":
            if not isinstance(value, bool):
                raise InputError(f"measure {spelling!r}: judged_only must be True or False")
            options["judged_only"] = value
        elif key == "gains" and family in ("nDCG", "CG", "DCG", "nCG", "avg_pos_nCG",
                                           "avg_pos_nDCG"):
            options["gains"], options["gain_fallback"] = _parse_gains(value, spelling)
        elif key == "dcg" and family == "nDCG":
            if value == "exp-log2":
                options["gains"], options["gain_fallback"] = "exponential", "error"
            elif value != "log2":
                raise InputError(f"measure {spelling!r}: dcg must be 'log2' or 'exp-log2'")
        elif key == "discount" and family in ("nDCG", "DCG", "avg_pos_nDCG"):
            if value not in DISCOUNT_NAMES:
                raise InputError(
                    f"measure {spelling!r}: discount must be one of {DISCOUNT_NAMES}")
            options["discount"] = value
        elif key == "base" and family in ("nDCG", "DCG", "avg_pos_nDCG"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 1:
                raise InputError(f"measure {spelling!r}: base must be a number > 1")
            options["base"] = float(value)
        else:
            raise InputError(f"measure {spelling!r}: unknown parameter {key!r} for {name}")
    if family in ("num_q", "num_ret", "num_rel", "num_rel_ret", "Rprec") and cutoff is not None:
        raise InputError(f"measure {spelling!r}: {name} takes no cut-off")
    if family in ("P", "success", "avg_pos_nCG", "avg_pos_nDCG", "CG", "DCG", "nCG") \
            and cutoff is None and family not in ("CG", "DCG", "nCG"):
        raise InputError(f"measure {spelling!r}: {name} needs a cut-off, like {name}@10")
    if family == "AP":
        family = "map_cut" if cutoff is not None else "map"
    if family == "recall" and cutoff is None:
        raise InputError(f"measure {spelling!r}: R needs a cut-off, like R@100")
    return Measure(spelling, family, cutoff=cutoff, **options)


def parse_measure(spelling: str) -> list[Measure]:
    """Resolve one measure spelling to one or more measures (``P`` gives nine)."""
    if not isinstance(spelling, str):
        raise InputError(f"a measure name must be a string, got {spelling!r}")
    compact = re.sub(r"\s+", "", spelling)
    if not compact:
        raise InputError("empty measure name")
    measures = _parse_trec(compact)
    if measures is not None:
        return measures
    measure = _parse_ir(compact)
    if measure is not None:
        return [measure]
    known = list(TREC_NAMES) + list(IR_MEASURES_NAMES)
    stem = re.sub(r"_\d+$", "", re.split(r"[.@(]", compact)[0])
    close = difflib.get_close_matches(stem, known, n=4, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"unknown measure {spelling!r}{hint}")


def parse_measures(spellings: Union[str, Iterable[str]]) -> list[Measure]:
    """Resolve measure spellings; a repeated output name keeps its first definition
    (trec_eval uses only the first parameter list of a measure given twice)."""
    if isinstance(spellings, str):
        spellings = [spellings]
    resolved: dict[str, Measure] = {}
    for spelling in spellings:
        for measure in parse_measure(spelling):
            resolved.setdefault(measure.name, measure)
    if not resolved:
        raise InputError("no measures given")
    return list(resolved.values())
