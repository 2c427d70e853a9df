"""Optional dependencies, imported only when first used, and the one error they raise.

The extras of pyproject.toml: ``plot`` (matplotlib), ``pandas`` (pandas), ``arrow``
(pyarrow), ``dask``
(dask[dataframe], distributed, pyarrow, pandas).
"""
from __future__ import annotations

import importlib
from types import ModuleType

from cumgain.exceptions import MissingDependencyError


#: What each extra of pyproject.toml installs, as a pip command line's arguments (cumgain
#: itself installs from its source tree: ``pip install ".[extra]"`` there).
EXTRA_PACKAGES = {"plot": "matplotlib", "pandas": "pandas", "arrow": "pyarrow",
                  "dask": '"dask[dataframe]" distributed pyarrow pandas', "progress": "tqdm",
                  "ir_measures": "ir-measures"}


def install_hint(extra: str) -> str:
    """The one command that installs an extra's packages into the current environment."""
    return f'pip install {EXTRA_PACKAGES.get(extra, extra)} (cumgain\'s "{extra}" extra)'


def require(module: str, *, extra: str, for_what: str) -> ModuleType:
    """``import module``, or a :class:`~cumgain.exceptions.MissingDependencyError` that
    says what needs it and how to install it, as one line::

        Evaluation.to_dataframe() needs pandas, but pandas is not installed:
        pip install pandas (cumgain's "pandas" extra)
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = module.split(".")[0]
        why = "is not installed" if isinstance(error, ModuleNotFoundError) \
            else f"cannot be imported ({error})"
        raise MissingDependencyError(
            f"{for_what} needs {package}, but {package} {why}: {install_hint(extra)}",
            name=module, extra=extra) from error
