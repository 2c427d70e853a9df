"""Drop-in replacements for other libraries' evaluation APIs.

Each submodule mirrors one library's functions, signatures and results, so that
``import cumgain.compat.sklearn as metrics`` (for instance) works in existing code.
"""
import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cumgain.compat import ir_measures, pytrec_eval, sklearn  # noqa: F401

#: The drop-ins, each imported on first access as an attribute (PEP 562).
SUBMODULES = ("ir_measures", "pytrec_eval", "sklearn")


def __getattr__(name: str) -> ModuleType:
    if name in SUBMODULES:
        return importlib.import_module(f"cumgain.compat.{name}")
    raise AttributeError(f"module 'cumgain.compat' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(SUBMODULES))
