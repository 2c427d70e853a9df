"""Type stubs for the Arrow string columns the native reader takes."""
from typing import Optional

import numpy as np
import numpy.typing as npt

class TextColumn:
    def __init__(self, offsets: Optional[npt.NDArray[np.int32 | np.int64]],
                 data: Optional[npt.NDArray[np.uint8]],
                 indices: Optional[npt.NDArray[np.int32]] = ...,
                 views: Optional[npt.NDArray[np.uint8]] = ...,
                 addresses: Optional[npt.NDArray[np.uintp]] = ...,
                 sizes: Optional[npt.NDArray[np.int64]] = ..., owner: object = ...) -> None: ...
    @staticmethod
    def of_strs(strs: npt.NDArray[np.object_]) -> "TextColumn": ...
    @property
    def valid(self) -> bool: ...
    @property
    def n_rows(self) -> int: ...

def group_rows(topics: TextColumn) -> Optional[tuple[npt.NDArray[np.int64],
                                                     Optional[npt.NDArray[np.int64]]]]: ...


def _set_allocation_limit(n: int) -> int: ...
