"""The ranking rules every evaluator shares: the policies' allowed values, docnos as
ids in byte order, the scores as compared (``score_precision``), and each topic's ranked
order under a tie rule cut at a depth."""
from __future__ import annotations

from typing import Any, Optional, get_args

import numpy as np

from cgcore import _measures as kernels
from cgcore import _trec
from cumgain.common.limits import whole_number
from cumgain.exceptions import InputError
from cumgain.measures.ranked import offsets_from_counts, positions_in_topic, topic_of_rows
from cumgain.types import GROUP_TIE_RULES, ScorePrecision, TieRule, TopicPolicy


TIE_RULES: tuple[TieRule, ...] = get_args(TieRule)
SCORE_PRECISIONS: tuple[ScorePrecision, ...] = get_args(ScorePrecision)
TOPIC_POLICIES: tuple[TopicPolicy, ...] = get_args(TopicPolicy)


def _check_choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise InputError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _docno_ids(docnos: np.ndarray) -> tuple[np.ndarray, int]:
    """Each docno's position in the sorted vocabulary (code-point order of str = byte
    order of UTF-8), and the vocabulary's size (at least 1). numpy's fixed-width
    strings are fast but drop trailing NULs ("d\\x00" would equal "d"): where a docno
    ends in one, Python's strings are sorted instead."""
    if len(docnos) == 0:
        return np.zeros(0, dtype=np.int64), 1
    fixed = docnos.astype(str)
    texts = docnos.tolist()
    if (np.char.str_len(fixed) == np.fromiter(map(len, texts), np.int64, len(texts))).all():
        vocabulary, ids = np.unique(fixed, return_inverse=True)
        return ids.reshape(-1).astype(np.int64), max(len(vocabulary), 1)
    index = {docno: i for i, docno in enumerate(sorted(set(texts)))}
    return np.fromiter(map(index.__getitem__, texts), np.int64, len(texts)), max(len(index), 1)


#: Per half-precision format: significant bits, the exponent of the smallest normal
#: value, the largest finite value.
HALF_FORMATS = {"float16": (11, -14, 65504.0), "bfloat16": (8, -126, (2 - 2 ** -7) * 2 ** 127)}


def compared_scores(scores: np.ndarray, score_precision: ScorePrecision) -> np.ndarray:
    """The scores as float64, rounded first to float32 (as C casts), float16 or bfloat16
    under that ``score_precision`` (to nearest, ties to even; beyond the format's range:
    +-inf)."""
    scores = scores.astype(np.float64)
    if score_precision == "float32":
        with np.errstate(over="ignore"):
            scores = scores.astype(np.float32).astype(np.float64)
    elif score_precision in HALF_FORMATS:
        scores = half_rounded(scores, *HALF_FORMATS[score_precision])
    return scores


def half_rounded(values: np.ndarray, bits: int, min_exponent: int, largest: float
                 ) -> np.ndarray:
    """float64 ``values`` rounded to ``bits`` significant bits (ties to even), the
    subnormals' step below ``2**min_exponent``, +-inf beyond ``largest``: x scaled by
    a power of two to the format's last bit, rounded to a whole number, scaled back
    (each step exact in float64)."""
    finite = np.isfinite(values) & (values != 0)
    _, exponent = np.frexp(np.where(finite, values, 1.0))     # |x| = m 2^e, m in [.5, 1)
    step = np.maximum(exponent - 1, min_exponent) - (bits - 1)
    rounded = np.ldexp(np.rint(np.ldexp(np.where(finite, values, 0.0), -step)), step)
    rounded = np.where(np.abs(rounded) > largest, np.copysign(np.inf, values), rounded)
    return np.where(finite, rounded, values)


def ranked_order(scores: np.ndarray, doc_ids: np.ndarray, offsets: np.ndarray, *,
                 ties: TieRule, seed: int, depth: Optional[int]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's rows ranked by score, descending, ties broken by the tie rule
    (``doc_ids`` in docno byte order), cut at ``depth``: (the ranked offsets, the rows
    in ranked order)."""
    if ties == "docno_desc" or ties in GROUP_TIE_RULES:
        tie_keys = -doc_ids
    elif ties == "docno_asc":
        tie_keys = doc_ids
    elif ties == "input_order":
        tie_keys = np.arange(len(scores), dtype=np.int64)
    else:
        tie_keys = _trec.random_tie_keys(seed, positions_in_topic(offsets))
    order = kernels.rank_topics(scores, np.ascontiguousarray(tie_keys, np.int64), offsets)
    topic = topic_of_rows(offsets)
    keep = np.ones(len(order), dtype=bool) if depth is None else \
        positions_in_topic(offsets) < depth
    counts = np.bincount(topic[keep], minlength=len(offsets) - 1)
    return offsets_from_counts(counts), order[keep]


def _check_depth(depth: Any) -> None:
    """``depth`` is None or a whole number from 0 (no document kept, as trec_eval -M 0)
    to MAX_RANK (cumgain.common.limits)."""
    if depth is not None:
        whole_number(depth, "depth", low=0)
