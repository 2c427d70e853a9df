"""Type stubs for the compiled cumulated-gain vector kernels."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

DISCOUNT_NONE: int
DISCOUNT_RANK: int
DISCOUNT_TOIS: int
DISCOUNT_NOTE: int
DISCOUNT_TREC_EVAL: int

class SumOverflow(ArithmeticError):
    topic: int | None
    rank: int
    of: str
    def __init__(self, topic: int | None, rank: int, of: str) -> None: ...

def discount_divisors(rule: int, base: float, depth: int) -> Float64Array: ...
def cg_vectors(
    gains: Float64Array, offsets: Int64Array, depth: int, out: Float64Array | None = ...
) -> Float64Array: ...
def dcg_vectors(
    gains: Float64Array,
    offsets: Int64Array,
    divisors: Float64Array,
    depth: int,
    out: Float64Array | None = ...,
) -> Float64Array: ...
def ideal_gain_vectors(
    judged: Float64Array, offsets: Int64Array, depth: int, out: Float64Array | None = ...
) -> Float64Array: ...
def normalise(
    values: Float64Array, ideal: Float64Array, zero_ideal: float, out: Float64Array | None = ...
) -> Float64Array: ...
def average_vector(
    vectors: Float64Array, ignore_nan: bool = ..., out: Float64Array | None = ...
) -> Float64Array: ...
def average_position(
    vectors: Float64Array, k: int, out: Float64Array | None = ...
) -> Float64Array: ...
def dcg_at(
    gains: Float64Array,
    offsets: Int64Array,
    divisors: Float64Array,
    k: int,
    out: Float64Array | None = ...,
) -> Float64Array: ...
def ideal_dcg_at(
    judged: Float64Array,
    offsets: Int64Array,
    divisors: Float64Array,
    k: int,
    out: Float64Array | None = ...,
) -> Float64Array: ...
def ndcg_at(
    gains: Float64Array,
    offsets: Int64Array,
    judged: Float64Array,
    judged_offsets: Int64Array,
    divisors: Float64Array,
    k: int,
    zero_ideal: float,
    out: Float64Array | None = ...,
) -> Float64Array: ...
def ndcg_at_cutoffs(
    gains: Float64Array,
    offsets: Int64Array,
    judged: Float64Array,
    judged_offsets: Int64Array,
    divisors: Float64Array,
    ks: Int64Array,
    zero_ideal: float,
    out: Float64Array | None = ...,
) -> Float64Array: ...
BOUNDS_CHECKED: bool
SANITIZED: bool
