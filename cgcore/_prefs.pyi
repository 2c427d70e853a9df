"""Type stubs for the compiled preference-measure kernel (trec_eval's prefs_* measures)."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

MEASURES: tuple[str, ...]
COUNTS: tuple[str, ...]
ERROR_EC_LEVELS: int
ERROR_ZERO_AND_NONZERO: int
ERROR_CYCLE: int
ERROR_TOO_LARGE: int
ERROR_MEMORY: int
MAX_ARRAY_CELLS: int

def preference_measures(
    offsets: Int64Array,
    groups: Int64Array,
    subgroups: Int64Array,
    docs: Int64Array,
    levels: Float64Array,
    retrieved_at: Int64Array,
) -> tuple[Float64Array, Int64Array]: ...
