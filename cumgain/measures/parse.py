"""One parser for every spelling of every measure, driven by the registry.

* trec_eval / pytrec_eval: ``map``, ``P`` (the default cut-offs), ``P.5,10``, ``P_5``,
  ``ndcg_cut_20,4`` (pytrec_eval's spelling of two cut-offs), ``iprec_at_recall.0.1,0.5``,
  ``iprec_at_recall_0.10``, ``utility.1,-1,0,0``, ``ndcg.1=3,2=9`` (reported as
  ``ndcg_1=3,2=9``, and that name is read back too). Parameters are read as trec_eval
  reads them (``meas_init.c``): cut-offs with atol (``23.4`` is 23), sorted, positive and
  distinct; where atol would silently read something else than what is written, the
  cut-off is an error instead: an exponent (``P.1e3``, which atol reads as 1), other
  text after the digits (``P.5x``), a cut-off beyond 2**53 - 1. Fractional cut-offs
  (recall levels, multiples of R) and the other numbers up to 1e6.
  Output names are trec_eval's.
* ir_measures: ``Name(param=value, ...)@k`` or ``Name@k(param=value, ...)``, e.g.
  ``nDCG@10``, ``P(rel=2)@5``, ``AP``, ``RR@10``, ``IPrec@0.5``, ``SetP(relative=True)``,
  ``NumRet(rel=1)``; a family takes only the parameters it declares. Output names are
  the spelling given, without spaces.

Every number of every parameter, in every spelling, is read by one rule
(:func:`decimal`): decimal digits with an optional fraction and exponent (``5``,
``0.5``, ``.5``, ``1e-3``). Anything else (``0x10``, which C's atof reads as 16 and
Python as 16 too; ``1_0``; ``5x``, which atof reads as 5; ``inf``) is an InputError
naming the parameter, never a number read one way here and another there.
"""
from __future__ import annotations

import difflib
import dataclasses
import functools
import math
import re
from typing import Any, Callable, Iterable, Optional, Union, get_args

from cumgain.exceptions import InputError
from cumgain.common.limits import MAX_RANK
from cumgain.measures.base import FAMILIES, Family, Measure
from cumgain.types import DiscountRule

DISCOUNT_NAMES: tuple[DiscountRule, ...] = get_args(DiscountRule)
MAX_FRACTION = 1e6      # the largest fractional cut-off (recall level, multiple of R)


# ---------------------------------------------------------------- trec_eval's syntax

def atol(text: str) -> Optional[int]:
    """C's atol on a parameter: the leading integer part ("23.4" -> 23); None where
    atol would read no digit at all (it would give 0)."""
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else None


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def decimal(text: str) -> Optional[float]:
    """A parameter's number, by the rule every spelling follows: decimal digits with an
    optional fraction and exponent (``5``, ``0.5``, ``.5``, ``-1e-3``; spaces around
    ignored); None for anything else (``0x10``, ``1_0``, ``5x``, ``inf``, ``nan``)."""
    text = text.strip()
    return float(text) if _DECIMAL.fullmatch(text) else None


def trec_float_name(family: str, value: float) -> str:
    """The name trec_eval gives one float cut-off: ``family_%3.2f``."""
    return f"{family}_{value:3.2f}"


def _numbers(text: str, read: Callable, spelling: str, what: str) -> list:
    values = []
    for part in text.split(","):
        value = read(part)
        if value is None:
            raise InputError(f"measure {spelling!r}: {part!r} is not {what}")
        values.append(value)
    return values


_WHOLE = re.compile(r"([+-]?)(\d+)(\.\d*)?")
_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


def whole_cutoff(text: str, spelling: str) -> int:
    """One whole-number cut-off as trec_eval's atol reads it (``23.4`` is 23, ``05`` is
    5), where that is what is written; an InputError where atol would read something
    else without a word: an exponent (``1e3``, which atol reads as 1), other text after
    the digits (``5x``), no digits, or a number beyond MAX_RANK (atol overflows)."""
    match = _WHOLE.fullmatch(text)
    if match is None:
        if _EXPONENT.fullmatch(text):
            value = float(text)
            meant = f" ({int(value)})" if value.is_integer() and 0 < value <= MAX_RANK else ""
            raise InputError(
                f"measure {spelling!r}: cut-off {text!r} is written with an exponent, which "
                f"trec_eval's atol reads as {atol(text) or 0}; write the whole number{meant}")
        raise InputError(f"measure {spelling!r}: cut-off {text!r} is not a whole number")
    digits = match.group(2).lstrip("0") or "0"
    if len(digits) > len(str(MAX_RANK)) or int(digits) > MAX_RANK:
        raise InputError(f"measure {spelling!r}: cut-off {_shorten(text)} is beyond the "
                         f"largest, 2**53 - 1 = {MAX_RANK}")
    return -int(digits) if match.group(1) == "-" else int(digits)


def _shorten(text: str) -> str:
    return repr(text) if len(text) <= 30 else f"{text[:12]!r}... ({len(text)} characters)"


def _cutoffs(family: Family, text: str, spelling: str) -> list:
    """Whole-number cut-offs as trec_eval reads them (whole_cutoff), sorted, > 0,
    distinct."""
    cutoffs = sorted(whole_cutoff(part, spelling) for part in text.split(","))
    if cutoffs[0] <= 0:
        raise InputError(f"measure {spelling!r}: cut-offs must be positive integers")
    if len(set(cutoffs)) != len(cutoffs):
        raise InputError(f"measure {spelling!r}: duplicate cut-offs")
    return [Measure(f"{family.name}_{k}", family.name, cutoff=k) for k in cutoffs]


def _float_cutoffs(family: Family, text: str, spelling: str) -> list:
    """Fractional cut-offs (recall points, multiples of R): decimal, sorted, distinct."""
    points = sorted(_numbers(text, decimal, spelling, "a number"))
    if len(set(points)) != len(points):
        raise InputError(f"measure {spelling!r}: duplicate cut-offs")
    if any(not math.isfinite(x) or not 0 <= x <= MAX_FRACTION for x in points):
        raise InputError(f"measure {spelling!r}: cut-offs must be finite numbers from 0 "
                         f"to {MAX_FRACTION:g}")
    return [Measure(trec_float_name(family.name, x), family.name, params=(("at", x),))
            for x in points]


def _floats(family: Family, text: Optional[str], spelling: str) -> list:
    """An ordered list of numbers (utility's coefficients, set_F's beta, ...); the
    measure is renamed ``family_text`` when given."""
    values = tuple(float(v) for v in family.trec_defaults) if text is None else \
        tuple(_numbers(text, decimal, spelling, "a number"))
    if any(not math.isfinite(v) for v in values):
        raise InputError(f"measure {spelling!r}: parameters must be finite")
    name = family.name if text is None else f"{family.name}_{text}"
    return [Measure(name, family.name, params=(("values", values),))]


def _pairs(family: Family, text: str, spelling: str) -> list:
    """``name=value`` pairs (trec_eval's get_param_pairs): integer names are relevance
    levels and their values gains; other names are the family's own parameters."""
    gains, others = [], []
    for part in text.split(","):
        key, equals, raw = part.partition("=")
        value = decimal(raw) if equals and raw else None
        if not equals or not key or value is None:
            raise InputError(f"measure {spelling!r}: malformed pair parameter {_shorten(part)}; "
                             f"write them like {family.name}.1=3,2=9")
        if not math.isfinite(value):
            raise InputError(f"measure {spelling!r}: {_shorten(part)}: the value must be "
                             "finite (below about 1.8e308)")
        if re.fullmatch(r"[+-]?\d+", key):
            level = float(key)          # not int(key): no digit limit, and 1e400 is inf
            if not math.isfinite(level):
                raise InputError(f"measure {spelling!r}: relevance level {_shorten(key)} is "
                                 "beyond float64's range")
            gains.append((level, value))
        else:
            others.append((key, value))
    allowed = PAIR_NAMES.get(family.name, ())
    for key, _ in others:
        if key not in allowed:
            raise InputError(f"measure {spelling!r}: {family.name} takes "
                             + (f"{' and '.join(allowed)} and " if allowed else "")
                             + f"level=gain pairs, not {key!r}")
    if gains and family.name not in GAIN_TABLE_FAMILIES:
        raise InputError(f"measure {spelling!r}: {family.name} takes no gain table")
    return [Measure(f"{family.name}_{text}", family.name,
                    gains=tuple(sorted(gains, key=lambda pair: pair[0])) if gains else None,
                    params=tuple(sorted(others)))]


#: trec_eval families whose pair parameters are level=gain (gain_init.c's setup_gains).
GAIN_TABLE_FAMILIES = ("ndcg", "dcg", "ideal_dcg", "ndcg_rel", "Rndcg", "G", "rbp")
#: Named pair parameters (m_rbp.c, m_rbp_resid.c).
PAIR_NAMES = {"rbp": ("p",), "rbp_resid": ("p",)}
#: Checks of a family's parameters beyond their syntax: family -> (measure, spelling).
PARAMETER_CHECKS: dict[str, Callable[[Measure, str], None]] = {}


def _trec_measures(family: Family, text: Optional[str], spelling: str) -> list:
    """The measures of ``family`` with parameters ``text`` (None: the defaults),
    checked by the family's PARAMETER_CHECKS entry if it has one."""
    measures = _trec_syntax(family, text, spelling)
    check = PARAMETER_CHECKS.get(family.name)
    for measure in measures if check is not None else ():
        check(measure, spelling)
    return measures


def _trec_syntax(family: Family, text: Optional[str], spelling: str) -> list:
    syntax = family.trec
    if syntax == "plain":
        if text is not None:
            raise InputError(f"measure {spelling!r}: {family.name} takes no parameters")
        return [Measure(family.name, family.name)]
    if syntax == "cutoffs":
        return _cutoffs(family, text or ",".join(map(str, family.trec_defaults)), spelling)
    if syntax == "float_cutoffs":
        return _float_cutoffs(family, text or ",".join(map(repr, family.trec_defaults)),
                              spelling)
    if syntax == "floats":
        return _floats(family, text, spelling)
    if text is None:                        # pairs, none given
        return [Measure(family.name, family.name)]
    return _pairs(family, text, spelling)


def _trec_families() -> dict:
    return {name: family for name, family in FAMILIES.items() if family.trec is not None}


def _parse_trec(spelling: str) -> Optional[list]:
    """trec_eval spellings, or None if ``spelling`` is not one."""
    families = _trec_families()
    if spelling in families:
        return _trec_measures(families[spelling], None, spelling)
    name, dot, text = spelling.partition(".")
    if dot and name in families:
        if not text:
            raise InputError(f"measure {spelling!r}: nothing after '.'")
        return _trec_measures(families[name], text, spelling)
    # family_suffix: the printed name read back (P_5, iprec_at_recall_0.10, ndcg_1=3,2=9,
    # utility_2,-1,0,0), and pytrec_eval's ndcg_cut_20,4; the longest family name wins
    # (map_cut_10 is map_cut's, not map's)
    for name in sorted(families, key=len, reverse=True):
        if not spelling.startswith(name + "_") or len(spelling) == len(name) + 1:
            continue
        family, suffix = families[name], spelling[len(name) + 1:]
        if family.trec == "plain":
            continue
        if family.trec == "cutoffs" and not re.fullmatch(r"\d+(,\d+)*", suffix):
            continue
        if family.trec == "float_cutoffs" and decimal(suffix.split(",")[0]) is None:
            continue
        if family.trec == "pairs" and not re.fullmatch(r"[^=,]+=[^=,]+(,[^=,]+=[^=,]+)*",
                                                      suffix):
            continue
        if family.trec == "floats" and any(decimal(part) is None for part in suffix.split(",")):
            continue
        measures = _trec_measures(family, suffix, spelling)
        if family.trec == "cutoffs" and "," not in suffix:   # named as given: P_05 stays
            measures = [Measure(spelling, family.name, cutoff=measures[0].cutoff)]
        return measures
    return None


# ---------------------------------------------------------------- ir_measures' syntax

def _split_arguments(text: str) -> list:
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


_WHOLE_NUMBER = re.compile(r"[+-]?\d+")


def _scalar(raw: str) -> Any:
    """One value as written: True / False, a quoted string (quotes dropped), an int
    (digits only), a float (:func:`decimal`), or else the bare word itself (``tois``,
    ``0-1-10-100``, ``exponential>=2``; also ``0x10`` or ``1_0``, which the readers
    then refuse as not numbers)."""
    raw = raw.strip()
    if raw in ("True", "False"):
        return raw == "True"
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if _WHOLE_NUMBER.fullmatch(raw):
        return int(raw) if len(raw) <= 40 else float(raw)   # (a huge one: inf, refused)
    value = decimal(raw)
    return raw if value is None else value


def _literal(raw: str) -> Any:
    """A parameter's value, read without recursion (a scheme of thousands of levels is
    a word like any other): a scalar (:func:`_scalar`), or a flat ``{level: gain, ...}``
    table of numbers."""
    raw = raw.strip()
    if not (raw.startswith("{") and raw.endswith("}")):
        return _scalar(raw)
    table = {}
    body = raw[1:-1].strip()
    for entry in body.split(",") if body else ():
        key, colon, value = entry.partition(":")
        level, gain = _scalar(key), _scalar(value)
        if not colon or not _number(level) or not _number(gain):
            return raw                  # (refused by the reader: not numbers to numbers)
        table[level] = gain
    return table


def _number(value: Any) -> bool:
    """A finite int or float (an int beyond float64's range is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _read_rel(value: Any, spelling: str) -> dict:
    if not _number(value) or value < 0:
        raise InputError(f"measure {spelling!r}: rel must be a number >= 0")
    return {"relevance_level": float(value)}


def _read_judged_only(value: Any, spelling: str) -> dict:
    if not isinstance(value, bool):
        raise InputError(f"measure {spelling!r}: judged_only must be True or False")
    return {"judged_only": value}


def _read_gains(value: Any, spelling: str) -> dict:
    if isinstance(value, dict):     # (what a level the table leaves out gets: the
        table = tuple(sorted((float(k), float(v)) for k, v in value.items()))  # family's
        return {"gains": table}                                 # unlisted_gain)
    if isinstance(value, str) and value.startswith("{"):
        raise InputError(f"measure {spelling!r}: gains must map numbers to numbers, "
                         f"like gains={{0:0, 1:1, 2:3}}")
    if isinstance(value, str):
        from cumgain.gains import gain_mapping
        gain_mapping(value)  # validates the scheme name
        return {"gains": value, "gain_fallback": "error"}
    raise InputError(f"measure {spelling!r}: cannot use {value!r} as gains")


def _read_dcg(value: Any, spelling: str) -> dict:
    if value == "exp-log2":
        return {"gains": "exponential", "gain_fallback": "error", "_dcg": value}
    if value != "log2":
        raise InputError(f"measure {spelling!r}: dcg must be 'log2' or 'exp-log2'")
    return {}


def _read_discount(value: Any, spelling: str) -> dict:
    if value not in DISCOUNT_NAMES:
        raise InputError(f"measure {spelling!r}: discount must be one of {DISCOUNT_NAMES}")
    return {"discount": value}


def _read_base(value: Any, spelling: str) -> dict:
    if not _number(value) or not value > 1:
        raise InputError(f"measure {spelling!r}: base must be a number > 1")
    return {"base": float(value)}


def _read_beta(value: Any, spelling: str) -> dict:
    if not _number(value) or value < 0:
        raise InputError(f"measure {spelling!r}: beta must be a number >= 0")
    return {"params": (("beta", float(value)),)}


def _read_p(value: Any, spelling: str) -> dict:
    if not _number(value) or not 0 <= value <= 1:
        raise InputError(f"measure {spelling!r}: p must be a number in [0, 1]")
    return {"params": (("p", float(value)),)}


def _read_alpha(value: Any, spelling: str) -> dict:
    if not _number(value) or not 0 <= value <= 1:
        raise InputError(f"measure {spelling!r}: alpha must be a number in [0, 1]")
    return {"params": (("alpha", float(value)),)}


def _read_total_gain(value: Any, spelling: str) -> dict:
    if not _number(value) or not value > 0:
        raise InputError(f"measure {spelling!r}: T must be a number > 0")
    return {"params": (("T", float(value)),)}


def _read_whole(name: str):
    def read(value: Any, spelling: str) -> dict:
        if isinstance(value, bool) or not isinstance(value, int) or not -2 ** 31 < value < 2 ** 31:
            raise InputError(f"measure {spelling!r}: {name} must be a whole number")
        return {"params": ((name, value),)}
    return read


def _read_flag(name: str):
    def read(value: Any, spelling: str) -> dict:
        if not isinstance(value, bool):
            raise InputError(f"measure {spelling!r}: {name} must be True or False")
        return {"params": ((name, value),)}
    return read


def _read_relative(value: Any, spelling: str) -> dict:
    if not isinstance(value, bool):
        raise InputError(f"measure {spelling!r}: relative must be True or False")
    return {"relative": value}


#: The parameters of the ir_measures form: name -> reader(value, spelling) -> the
#: Measure fields it sets. A family lists the ones it takes in ``ir_params``.
PARAMS: dict[str, Callable[[Any, str], dict[str, Any]]] = {
    "rel": _read_rel, "judged_only": _read_judged_only, "gains": _read_gains,
    "dcg": _read_dcg, "discount": _read_discount, "base": _read_base, "beta": _read_beta,
    "relative": _read_relative, "p": _read_p, "alpha": _read_alpha, "T": _read_total_gain,
    "min_rel": _read_whole("min_rel"), "max_rel": _read_whole("max_rel"),
    "normalize": _read_flag("normalize"),
}

_IR_FORM = re.compile(r"(?P<name>[^\W\d]\w*)(?:\((?P<args1>.*)\))?"
                      r"(?:@(?P<at>[0-9.eE+-]+))?(?:\((?P<args2>.*)\))?")


def _ir_names() -> dict:
    names = {}
    for family in FAMILIES.values():
        for name in family.ir_names:
            names[name] = family
    return names


def _parse_ir(spelling: str) -> Optional[Measure]:
    match = _IR_FORM.fullmatch(spelling)
    if not match or match.group("name") not in _ir_names():
        return None
    if match.group("args1") is not None and match.group("args2") is not None:
        raise InputError(f"measure {spelling!r}: give the parameters once")
    name = match.group("name")
    family = _ir_names()[name]
    options: dict = {}
    arguments = match.group("args1") if match.group("args1") is not None \
        else match.group("args2")
    for part in _split_arguments(arguments or ""):
        key, equals, raw = part.partition("=")
        key = key.strip()
        if not equals:
            raise InputError(f"measure {spelling!r}: parameter {part.strip()!r} is not key=value")
        if key not in family.ir_params:
            takes = ", ".join(family.ir_params) or "no parameters"
            raise InputError(f"measure {spelling!r}: {name} does not take {key!r} "
                             f"(it takes {takes})")
        if key in options.get("_given", ()):
            raise InputError(f"measure {spelling!r}: {key} given twice")
        options.setdefault("_given", []).append(key)
        read = PARAMS[key](_literal(raw), spelling)
        if "gains" in read and "gains" in options:
            raise InputError(f"measure {spelling!r}: give gains= or dcg='exp-log2' (which "
                             f"means gains='exponential'), not both")
        options["params"] = options.get("params", ()) + read.pop("params", ())
        options.update(read)
    options.pop("_given", None)
    if isinstance(options.get("gains"), tuple):     # a table: what an unlisted level gets
        options["gain_fallback"] = family.unlisted_gain
    at = match.group("at")
    cutoff = None
    top_k = options.pop("_top_k", None)     # torchmetrics' top_k=: the cut-off, spelled
    if top_k is not None and at is not None:    # as a parameter
        raise InputError(f"measure {spelling!r}: give the cut-off once (@k or top_k=)")
    if family.at == "recall":
        value = decimal(at) if at is not None and re.fullmatch(r"\d*\.?\d*", at) else None
        if value is None or not 0 <= value <= 1:
            raise InputError(f"measure {spelling!r}: {name} needs a recall level in [0, 1], "
                             f"like {name}@0.5")
        options["params"] = options.get("params", ()) + (("at", value),)
    elif at is not None:
        if family.at == "none":
            raise InputError(f"measure {spelling!r}: {name} takes no cut-off")
        if _EXPONENT.fullmatch(at):
            whole_cutoff(at, spelling)      # the exponent's message
        if not re.fullmatch(r"\d+", at):
            raise InputError(f"measure {spelling!r}: the cut-off must be a whole number >= 1")
        cutoff = whole_cutoff(at, spelling)
        if cutoff < 1:
            raise InputError(f"measure {spelling!r}: the cut-off must be a whole number >= 1")
    elif top_k is not None:
        cutoff = top_k
    elif family.at == "cutoff_required":
        raise InputError(f"measure {spelling!r}: {name} needs a cut-off, like {name}@10")
    target = family.redirect(options, cutoff) if family.redirect else family.name
    options.pop("relative", None)
    options.pop("_dcg", None)
    options["params"] = tuple(sorted(options.get("params", ())))
    return Measure(spelling, target, cutoff=cutoff, **options)


# ---------------------------------------------------------------- ranx's syntax

#: ranx's metric names (ranx/metrics/__init__.py) -> the ir form they mean: {at} is
#: "@k" or "", {rel} is ranx's relevance level (``-lN``, default 1). ranx drops the
#: judgments below the level from gains and ideal alike ("identity>=N" gains).
RANX_NAMES = {
    "hits": "Hits(rel={rel}){at}", "hit_rate": "Success(rel={rel}){at}",
    "precision": "P(rel={rel}){at}", "recall": "R(rel={rel}){at}", "f1": "F1(rel={rel}){at}",
    "r-precision": "Rprec(rel={rel})", "mrr": "RR(rel={rel}){at}",
    "map": "AP(rel={rel}){at}", "ndcg": "nDCG(gains='identity>={rel}'){at}",
    "ndcg_burges": "nDCG(gains='exponential>={rel}'){at}",
    "dcg": "DCG(gains='identity>={rel}'){at}",
    "dcg_burges": "DCG(gains='exponential>={rel}'){at}", "bpref": "Bpref(rel={rel})",
}
_WITHOUT_CUTOFF = {"precision": "SetP(rel={rel})", "recall": "SetR(rel={rel})"}
_RANX_FORM = re.compile(r"(?P<name>[a-z0-9_\-]+?)(?:@(?P<k>\d+))?(?:-l(?P<rel>\d+))?")
#: ranx's RBP: ``rbp.95`` (or ``rbp@95``) is p = 0.95, each document's gain its level when
#: at least ``-lN`` (default 1), else 0 (ranx/metrics/rank_biased_precision.py).
_RANX_RBP = re.compile(r"rbp[.@](?P<p>\d+)(?:-l(?P<rel>\d+))?")


def _parse_ranx(spelling: str) -> Optional[Measure]:
    """ranx's spellings (``ndcg@10``, ``map@100-l2``, ``hit_rate@5``, ``r-precision``),
    or None if ``spelling`` is not one. A cut-off of 0 or none means the whole ranking,
    as in ranx."""
    rbp = _RANX_RBP.fullmatch(spelling)
    if rbp:
        measure = _parse_ir(f"RBP(p=0.{rbp.group('p')},"
                            f"gains='identity>={int(rbp.group('rel') or 1)}')")
        return dataclasses.replace(measure, name=spelling)
    match = _RANX_FORM.fullmatch(spelling)
    if not match or match.group("name") not in RANX_NAMES:
        return None
    name, k = match.group("name"), int(match.group("k") or 0)
    template = RANX_NAMES[name] if k or name not in _WITHOUT_CUTOFF else _WITHOUT_CUTOFF[name]
    if k and "{at}" not in template:
        raise InputError(f"measure {spelling!r}: ranx's {name} takes no cut-off")
    ir_form = template.format(at=f"@{k}" if k else "", rel=int(match.group("rel") or 1))
    measure = _parse_ir(ir_form)
    return Measure(spelling, measure.family, cutoff=measure.cutoff, gains=measure.gains,
                   gain_fallback=measure.gain_fallback, relevance_level=measure.relevance_level,
                   params=measure.params)


# ---------------------------------------------------------------- entry points

def _render(family: Family, name: str, rest: str) -> list:
    """``name`` (a spelling of ``family``) with the cut-off or parameters the user wrote
    (``rest``), in the family's ir_measures and trec_eval forms."""
    at = rest.lstrip("._@")
    out = []
    if family.ir_names:
        ir_name = name if name in family.ir_names else family.ir_names[0]
        for candidate in dict.fromkeys((family.ir_names[0], ir_name)):
            if rest.startswith("("):
                out.append(candidate + rest)
            else:
                out.append(candidate + (f"@{at}" if at and family.at != "none" else ""))
    trec = FAMILIES[family.trec_twin] if family.trec_twin and at else family
    if trec.trec is not None and not rest.startswith("("):
        if not at:
            out.append(trec.name)
        elif trec.trec in ("cutoffs", "float_cutoffs") and decimal(at) is not None:
            out.append(f"{trec.name}.{at}")
    return out


def _suggestions(compact: str) -> list:
    """Spellings close to ``compact`` (ignoring case), with its cut-off or parameters:
    names equal but for case first, then near misses; for each, the family's canonical
    ir_measures spelling and its trec_eval spelling; each once, and only those that
    parse (a suggestion is never itself an unknown measure)."""
    stem = re.split(r"[.@(]", compact)[0]
    rest = compact[len(stem):]
    trimmed = re.sub(r"_[\d.,]+$", "", stem)
    if trimmed != stem and not rest:        # P_5-like: the cut-off is part of the stem
        stem, rest = trimmed, "@" + stem[len(trimmed) + 1:]
    spellings: dict = {}                    # lower-case name -> [(family, name)]
    for family in FAMILIES.values():
        for name in ((family.name,) if family.trec is not None else ()) + family.ir_names:
            spellings.setdefault(name.lower(), []).append((family, name))
    key = stem.lower()
    close = difflib.get_close_matches(key, list(spellings), n=3, cutoff=0.7)
    suggestions: list = []
    for match in ([key] if key in spellings else []) + [m for m in close if m != key]:
        for family, name in spellings[match]:
            for text in _render(family, name, rest):
                if text not in suggestions and text != compact and _names_a_measure(text):
                    suggestions.append(text)
    return suggestions[:6]


def is_ir_measures_measure(obj: Any) -> bool:
    """Whether ``obj`` is an ir_measures measure object (``nDCG@10``, ``AP(rel=2)``),
    told without importing ir_measures."""
    return type(obj).__module__.startswith("ir_measures.") and hasattr(obj, "NAME") \
        and hasattr(obj, "params")


def parse_measure(spelling: Union[str, Measure]) -> list[Measure]:
    """Resolve one measure spelling to one or more measures (``P`` gives nine). An
    ir_measures measure object is read as its ``str()`` (``nDCG@10``), which is the
    name it is reported under."""
    if isinstance(spelling, Measure):
        return [spelling]
    if is_ir_measures_measure(spelling):
        spelling = str(spelling)
    if not isinstance(spelling, str):
        raise InputError(f"a measure must be a name (str), a cumgain Measure or an "
                         f"ir_measures measure, got {spelling!r}")
    compact = re.sub(r"\s+", "", spelling)
    if not compact:
        raise InputError("empty measure name")
    measures = _parse_compact(compact, len(FAMILIES))
    if measures is None:
        _explain_unknown(spelling, compact)
        close = _suggestions(compact)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(f"unknown measure {spelling!r}{hint}")
    return list(measures)


_AT_ANYTHING = re.compile(r"(?P<name>[^\W\d]\w*)(?:\(.*\))?@(?P<at>[^(]*)(?:\(.*\))?")


def _names_a_measure(text: str) -> bool:
    try:
        return bool(text) and _parse_compact(text, len(FAMILIES)) is not None
    except InputError:
        return False


def _explain_unknown(spelling: str, compact: str) -> None:
    """Raise the error that says what is wrong with a spelling that names no measure,
    where that can be told: several measures in one string, or a cut-off that is not
    a number."""
    for parts in (spelling.split(), _split_arguments(spelling)):
        parts = [part.strip() for part in parts]
        if len(parts) > 1 and all(_names_a_measure(part) for part in parts):
            raise InputError(f"{spelling!r} names several measures ({', '.join(parts)}); "
                             "give each one separately (on the command line, -m once "
                             "per measure)")
    match = _AT_ANYTHING.fullmatch(compact)
    if match and match.group("name") in _ir_names():
        if not match.group("at"):
            raise InputError(f"measure {spelling!r}: no cut-off after '@' (like "
                             f"{match.group('name')}@10)")
        raise InputError(f"measure {spelling!r}: the cut-off {match.group('at')!r} of "
                         f"{match.group('name')} is not a number")


@functools.lru_cache(maxsize=4096)
def _parse_compact(compact: str, n_families: int) -> Optional[tuple[Measure, ...]]:
    """The measures one spelling (whitespace removed) names, None if it names none;
    remembered, so an evaluation in a loop (one query at a time) parses its names
    once. ``n_families`` is the registry's size, so a family registered later is never
    missed. Malformed parameters raise (lru_cache does not remember errors)."""
    try:
        if _RANX_RBP.fullmatch(compact):    # (trec_eval's rbp takes only k=v pairs)
            return (_parse_ranx(compact),)
        measures = _parse_trec(compact)
        if measures is not None:
            return tuple(measures)
        measure = _parse_ir(compact)
        if measure is None:
            measure = _parse_ranx(compact)
    except InputError as error:
        if len(compact) <= 100:
            raise
        # a name thousands of characters long (a 5,000-digit cut-off) is shown shortened
        raise InputError(str(error).replace(repr(compact), _shorten(compact))) from None
    return None if measure is None else (measure,)


def parse_measures(spellings: Union[str, Measure, Iterable[Union[str, Measure]]]
                   ) -> list[Measure]:
    """Resolve measure spellings; a repeated output name keeps its first definition
    (trec_eval uses only the first parameter list of a measure given twice)."""
    if isinstance(spellings, (str, Measure)) or is_ir_measures_measure(spellings):
        spellings = [spellings]
    resolved: dict[str, Measure] = {}
    for spelling in spellings:
        for measure in parse_measure(spelling):
            resolved.setdefault(measure.name, measure)
    if not resolved:
        raise InputError("no measures given")
    return list(resolved.values())
