"""Type stubs for the kernels of exact expectations over the orders within tie groups."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

def expected_average_precision(relevant: Float64Array, scores: Float64Array,
                               offsets: Int64Array, num_relevant: Float64Array,
                               cutoff: int) -> Float64Array: ...
def expected_reciprocal_rank(relevant: Float64Array, scores: Float64Array,
                             offsets: Int64Array, cutoff: int) -> Float64Array: ...
def expected_success(relevant: Float64Array, scores: Float64Array, offsets: Int64Array,
                     cutoffs: Int64Array) -> Float64Array: ...
def expected_binary_preference(status: npt.NDArray[np.int8], scores: Float64Array,
                               offsets: Int64Array, num_relevant: Float64Array,
                               num_nonrelevant: Float64Array) -> Float64Array: ...
def group_means(values: Float64Array, scores: Float64Array,
                offsets: Int64Array) -> Float64Array: ...
def order_within_groups(levels: Float64Array, judged: npt.NDArray[np.uint8],
                        scores: Float64Array, offsets: Int64Array, best: bool) -> Int64Array: ...
