"""The numeric limits of cumgain's arguments, written once.

* **Whole numbers** that count ranks or documents (``k``, ``depth``, a measure's
  cut-off, ``collection_size``) go up to :data:`MAX_RANK` = 2**53 - 1, the largest
  whole number below which every integer is exact as a float64 (P@k divides by k as
  one); beyond it they are refused with an :class:`~cumgain.exceptions.InputError`,
  never an ``OverflowError`` from a C conversion.
* **Threads**: 1 to :data:`MAX_THREADS`.
* **Memory**: a request whose result must be held whole (the topics x depth matrices
  of the vector API, an array of discount divisors) is refused up front when it needs
  more than the memory available (:func:`available_memory`), with its size in the
  message. Scalars at a cut-off k never need memory for k, only for the longest list.
* **Real numbers** given as Python ints too large for a float64 are refused, not
  turned into ``OverflowError``.
"""
from __future__ import annotations

import math
import os
from numbers import Real
from typing import Any, Optional

import numpy as np

from cumgain.exceptions import InputError

MAX_RANK = 2 ** 53 - 1      # the largest k, depth, cut-off or collection size
MAX_THREADS = 1024          # the most threads one evaluation may use


def whole_number(value: Any, name: str, *, low: int = 1, high: int = MAX_RANK) -> int:
    """``value`` as an int, if it is an integer (not a bool) from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= high:
        kind = "a positive integer" if low == 1 else f"an integer >= {low}"
        limit = "2**53 - 1 = " if high == MAX_RANK else ""
        shown = repr(value) if not isinstance(value, int) or abs(value) < 10 ** 30 \
            else f"a {len(str(abs(value)))}-digit number"
        raise InputError(f"{name} must be {kind} (at most {limit}{high}), got {shown}")
    return int(value)


def real_number(value: Any, name: str, what: str = "a finite number") -> float:
    """``value`` as a finite float, if it is a real number (not a bool); a Python int
    beyond float64's range is refused like an infinite float."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.number)) \
            or isinstance(value, (complex, np.complexfloating)):
        raise InputError(f"{name} must be {what}, got {value!r}")
    try:
        number = float(value)
    except OverflowError:       # an int beyond float64
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number):
        raise InputError(f"{name} must be {what}, got {number}")
    return number


def format_bytes(size: float) -> str:
    """``size`` bytes in the largest binary unit that keeps it >= 1 (``16.0 GiB``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def available_memory() -> Optional[int]:
    """The bytes of memory a new allocation can count on: the least of what the machine
    has (Linux's ``MemAvailable``: free memory plus what the kernel can reclaim; else
    the physical memory), what this process may still map under ``RLIMIT_AS`` (``ulimit
    -v``), and what its control group may still use (``memory.max`` less
    ``memory.current``; cgroup v1's ``limit_in_bytes`` less ``usage_in_bytes``). None
    when none of them is known (nothing is refused)."""
    known = [n for n in (_machine_memory(), _address_space_left(), _cgroup_memory_left())
             if n is not None]
    return max(0, min(known)) if known else None


def _machine_memory() -> Optional[int]:
    try:
        with open("/proc/meminfo", "rb") as meminfo:
            for line in meminfo:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


UNLIMITED = 1 << 60     # a limit this large (cgroup v1's "no limit" is 2**63 - 4096) is none


def _address_space_left() -> Optional[int]:
    """RLIMIT_AS (soft) less this process's address space, or None without a limit."""
    try:
        import resource
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit == resource.RLIM_INFINITY or limit >= UNLIMITED:
            return None
        with open("/proc/self/statm", "rb") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, IndexError, AttributeError):
        return None
    return limit - mapped


def _read_number(path: str) -> Optional[int]:
    try:
        with open(path, "rb") as file:
            text = file.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None       # ("max": no limit)


def _cgroup_memory_left() -> Optional[int]:
    """The control group's memory limit less its usage (cgroup v2, else v1), or None."""
    for limit_file, usage_file in (
            ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
             "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit = _read_number(limit_file)
        if limit is not None and limit < UNLIMITED:
            usage = _read_number(usage_file)
            return limit - (usage or 0)
    return None


def check_memory(n_bytes: int, what: str, hint: str = "") -> None:
    """Refuse a request for ``n_bytes`` held at once when more than the available
    memory; ``what`` describes it (``"ndcg: 1 topic x depth 2147483648 ..."``)."""
    available = available_memory()
    if available is not None and n_bytes > available:
        raise InputError(f"{what} needs {format_bytes(n_bytes)}, more than the "
                         f"{format_bytes(available)} of memory available{hint}")
