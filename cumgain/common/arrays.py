"""Arrays from other libraries, as numpy reads them: a torch tensor (or any array with
``detach``) is detached first (cumgain computes no gradient, and numpy refuses a tensor
that requires one), and half-precision scores (``bfloat16``, ``float16``, which numpy
cannot take from torch) are widened to float32, which holds each of their values
exactly (no copy to more than that; float64 comes later where a kernel needs it).
Anything else is returned as it is."""
from __future__ import annotations

from typing import Any

HALF_PRECISION = ("bfloat16", "float16")


def plain(x: Any) -> Any:
    """``x`` in a form numpy converts (see the module docstring)."""
    if not type(x).__module__.startswith("torch"):
        return x
    if getattr(x, "requires_grad", False):
        x = x.detach()
    if str(getattr(x, "dtype", "")).rsplit(".", 1)[-1] in HALF_PRECISION:
        x = x.float()
    if getattr(getattr(x, "device", None), "type", "cpu") != "cpu":
        x = x.cpu()
    return x
