"""Type stubs for the conversions of results into Python objects."""
import numpy as np
import numpy.typing as npt

def topic_dicts(
    topics: tuple[str, ...], names: tuple[str, ...], values: npt.NDArray[np.float64]
) -> dict[str, dict[str, float]]: ...
