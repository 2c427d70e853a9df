"""cgcore: the compiled kernels behind cumgain.

C loops over typed memoryviews with the GIL released. The kernels know
nothing of files or measure names; ``cumgain`` validates inputs and composes
them. Every kernel has a pure-Python twin with the same signature in
``cumgain.reference``, used as the test oracle.
"""
from cgcore._vectors import (
    DISCOUNT_NONE,
    DISCOUNT_NOTE,
    DISCOUNT_RANK,
    DISCOUNT_TOIS,
    DISCOUNT_TREC_EVAL,
    SumOverflow,
    average_position,
    average_vector,
    cg_vectors,
    dcg_at,
    dcg_vectors,
    discount_divisors,
    ideal_dcg_at,
    ideal_gain_vectors,
    ndcg_at,
    ndcg_at_cutoffs,
    normalise,
)

__all__ = [
    "DISCOUNT_NONE",
    "DISCOUNT_NOTE",
    "DISCOUNT_RANK",
    "DISCOUNT_TOIS",
    "DISCOUNT_TREC_EVAL",
    "SumOverflow",
    "average_position",
    "average_vector",
    "cg_vectors",
    "dcg_at",
    "dcg_vectors",
    "discount_divisors",
    "ideal_dcg_at",
    "ideal_gain_vectors",
    "ndcg_at",
    "ndcg_at_cutoffs",
    "normalise",
]
