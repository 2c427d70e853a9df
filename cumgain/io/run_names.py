"""How runs given as files are named, everywhere (every subcommand, and the Python API's
functions that take a list of run files).

A run is named by its **run tag** (the last field of a TREC run line) where all its
lines agree on it; else (tags that differ, or a run that is not a file with tags) by
its **file name**. Names are then made unique: runs whose names collide are named by
their file names instead, then by their paths as given, then numbered (``name#2``).
Standard input (``-``) is named ``<stdin>``.

>>> run_names(["a/bm25.run", "b/bm25.run"], ["BM25", "BM25"])
['a/bm25.run', 'b/bm25.run']
>>> run_names(["x.run", "y.run", "z.txt"], ["BM25", "", "QL"])
['BM25', 'y.run', 'QL']
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Any, Sequence

STDIN = "<stdin>"


def file_name(path: Any) -> str:
    """The run's file name (``<stdin>`` for ``-``; a non-path: its type's name)."""
    if isinstance(path, (str, os.PathLike)):
        text = os.fspath(path)
        if isinstance(text, str):
            return STDIN if text == "-" else os.path.basename(text) or text
    return type(path).__name__


def given_path(path: Any) -> str:
    if isinstance(path, (str, os.PathLike)):
        text = os.fspath(path)
        if isinstance(text, str):
            return STDIN if text == "-" else text
    return type(path).__name__


def run_tag(result: Any) -> str:
    """The run tag of an evaluation or ranking when all its lines agree on it, else ""."""
    if isinstance(result, str):
        return result
    if not getattr(result, "run_tags_agree", True):
        return ""
    return getattr(result, "run_tag", "") or ""


def run_names(paths: Sequence[Any], results: Sequence[Any]) -> list[str]:
    """One unique name per run (see the module docstring): ``results`` are the runs'
    evaluations or rankings (their ``run_tag`` and ``run_tags_agree``), or their tags."""
    names = [run_tag(result) or file_name(path) for path, result in zip(paths, results)]
    for fallback in (file_name, given_path):
        counts = Counter(names)
        names = [fallback(path) if counts[name] > 1 else name
                 for name, path in zip(names, paths)]
    seen: Counter[str] = Counter()
    unique = []
    for name in names:
        seen[name] += 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique
