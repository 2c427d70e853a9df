"""Type stubs for the C/W/L measure kernels (cwl_eval's user models)."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

MODEL_RBP: int
MODEL_INSQ: int
MODEL_INST: int
MODEL_BPM: int
MODEL_SDCG: int
MODEL_NERR8: int
MODEL_NERR9: int
MODEL_NERR10: int
MODEL_NERR11: int
DEPTH: int

def expected_utility(
    gains: Float64Array, offsets: Int64Array, model: int, parameter: float, cutoff: int,
    limit: int, pad: float, depth: int = ...
) -> Float64Array: ...
def geometric_utility(
    gains: Float64Array, offsets: Int64Array, p: float, limit: int
) -> Float64Array: ...
