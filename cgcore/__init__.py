"""cgcore: the compiled kernels behind cumgain.

C loops over typed memoryviews with the GIL released. The kernels know
nothing of files or measure names; ``cumgain`` validates inputs and composes
them. Every kernel has a pure-Python twin with the same signature in
``cumgain.reference.kernels``, used as the test oracle.
"""
import os as _os

if not any(name.startswith("_vectors.") and not name.endswith((".pyx", ".pyi", ".c"))
           for name in _os.listdir(_os.path.dirname(__file__))) and _os.path.exists(
        _os.path.join(_os.path.dirname(__file__), "..", "setup.py")):
    raise ImportError(
        f"cgcore is imported from the source tree ({_os.path.dirname(_os.path.dirname(__file__))}), "
        "whose extensions are not built: run `pip install -e .` there, or `pip install .` "
        "and import cumgain from another folder")

from cgcore._vectors import (  # noqa: E402
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
