"""Type stubs for the compiled ranking and measure kernels."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

def rank_topics(scores: Float64Array, tie_keys: Int64Array, offsets: Int64Array) -> Int64Array: ...
def relevant_in_top(
    relevant: Float64Array, offsets: Int64Array, cutoffs: Int64Array
) -> Float64Array: ...
def average_precision(
    relevant: Float64Array, offsets: Int64Array, num_relevant: Float64Array, cutoff: int
) -> Float64Array: ...
def reciprocal_rank(relevant: Float64Array, offsets: Int64Array, cutoff: int) -> Float64Array: ...
def trec_ndcg_rel_and_rndcg(
    gains: Float64Array, offsets: Int64Array, ideal: Float64Array, ideal_offsets: Int64Array
) -> tuple[Float64Array, Float64Array]: ...
