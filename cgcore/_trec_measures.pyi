"""Type stubs for trec_eval's rank-wise measure kernels."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]
Int8Array = npt.NDArray[np.int8]

ROUND_NEAREST: int
ROUND_UP_FROM_TENTH: int

def interpolated_precision(
    relevant: Float64Array, offsets: Int64Array, num_relevant: Float64Array,
    points: Float64Array, rounding: int
) -> tuple[Float64Array, Float64Array]: ...
def precision_at_r_multiples(
    relevant: Float64Array, offsets: Int64Array, num_relevant: Float64Array,
    points: Float64Array
) -> Float64Array: ...
def binary_preference(
    status: Int8Array, offsets: Int64Array, num_relevant: Float64Array,
    num_nonrelevant: Float64Array
) -> Float64Array: ...
def inferred_average_precision(
    status: Int8Array, offsets: Int64Array, num_relevant: Float64Array
) -> Float64Array: ...
def binary_gain(
    relevant: Float64Array, offsets: Int64Array, num_relevant: Float64Array
) -> Float64Array: ...
def geometric_sums(
    weights: Float64Array, offsets: Int64Array, p: float
) -> tuple[Float64Array, Float64Array]: ...
def cost_gain(
    gains: Float64Array, offsets: Int64Array, ideal: Float64Array, ideal_offsets: Int64Array
) -> Float64Array: ...
