"""The manifest of a Parquet dataset cumgain writes, and the check its readers make.

A dataset (``cumgain convert``, :func:`cumgain.dask.write_parquet`) is written into a
temporary sibling folder (:func:`cumgain.io.atomic.atomic_dir`) that holds the marker
``_cumgain_in_progress`` from the start; when every part is written, the manifest
``_cumgain_manifest.json`` is written, the marker removed and the folder renamed into
place. The manifest is JSON::

    {"format": "cumgain-parquet-dataset", "version": 1, "written_by": "cumgain 0.1.0",
     "rows": 2000000, "partitioned_by_topic": true,
     "files": [{"name": "part.0.parquet", "bytes": 8123456, "rows": 200000}, ...]}

The rule readers apply (:func:`check_dataset`) to the folder of a Parquet path (the
folder itself, or the folder holding a file or a glob):

* it holds ``_cumgain_in_progress``: an unfinished cumgain dataset, refused;
* it holds ``_cumgain_manifest.json``: a cumgain dataset, read only if the manifest
  is whole and the folder holds exactly its files, each of the listed size (a
  missing, extra or resized file is refused, by name);
* it holds neither: someone else's dataset (pandas, pyarrow, Dask, Spark), read as it
  is. cumgain never leaves such a folder behind: its datasets appear under their name
  only when complete.

Both names start with ``_``, which Parquet readers (pyarrow, Dask) skip. Each refusal
is an :class:`~cumgain.exceptions.InputError` that names the folder and what is wrong.
"""
from __future__ import annotations

import glob
import json
import os
from typing import Any, Mapping, Optional

from cumgain.common.version import __version__
from cumgain.exceptions import InputError

MANIFEST = "_cumgain_manifest.json"
IN_PROGRESS = "_cumgain_in_progress"
FORMAT = "cumgain-parquet-dataset"
VERSION = 1


def start(folder: str) -> None:
    """Mark ``folder`` as an unfinished cumgain dataset (first thing written in it)."""
    with open(os.path.join(folder, IN_PROGRESS), "w", encoding="utf-8") as marker:
        marker.write("cumgain is writing this dataset; if no cumgain process is, the "
                     "write was interrupted and this folder can be deleted\n")


def finish(folder: str, rows_by_file: Optional[Mapping[str, int]] = None,
           **info: Any) -> dict[str, Any]:
    """Write the manifest of every file in ``folder`` (with its rows from
    ``rows_by_file``, if given, and ``info``), fsynced, then remove the in-progress
    marker; return it."""
    from cumgain.io.atomic import atomic_open

    names = sorted(name for name in os.listdir(folder) if name not in (MANIFEST, IN_PROGRESS))
    files = []
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "rb") as written:
            os.fsync(written.fileno())
        entry = {"name": name, "bytes": os.path.getsize(path)}
        if rows_by_file is not None and name in rows_by_file:
            entry["rows"] = int(rows_by_file[name])
        files.append(entry)
    manifest = {"format": FORMAT, "version": VERSION, "written_by": f"cumgain {__version__}",
                **info, "files": files}
    with atomic_open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as out:
        json.dump(manifest, out, indent=1)
        out.write("\n")
    os.unlink(os.path.join(folder, IN_PROGRESS))
    return manifest


def _well_formed(manifest: Any) -> bool:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return False
    files = manifest.get("files")
    return isinstance(files, list) and all(
        isinstance(entry, dict) and isinstance(entry.get("name"), str)
        and type(entry.get("bytes")) is int for entry in files)


def read(folder: str) -> dict[str, Any]:
    """The manifest of ``folder``, checked for shape; :class:`InputError` if it is not whole."""
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, encoding="utf-8") as stream:
            manifest = json.load(stream)
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: the manifest of a cumgain dataset is damaged or "
                         f"incomplete ({error}); write the dataset again") from None
    if not _well_formed(manifest):
        raise InputError(f"{path}: not a cumgain dataset manifest (format {FORMAT!r} "
                         "with a list of files, names and sizes); write the dataset again")
    return manifest


def _differences(folder: str, manifest: dict[str, Any]) -> list[str]:
    """What does not match the manifest: missing, extra and resized files."""
    listed = {entry["name"]: entry["bytes"] for entry in manifest["files"]}
    present = set(os.listdir(folder)) - {MANIFEST}
    problems = [f"missing {name}" for name in sorted(set(listed) - present)]
    problems += [f"extra {name}" for name in sorted(present - set(listed))]
    for name in sorted(set(listed) & present):
        size = os.path.getsize(os.path.join(folder, name))
        if size != listed[name]:
            problems.append(f"{name} has {size:,} bytes, the manifest says {listed[name]:,}")
    return problems


def dataset_folder(path: Any) -> Optional[str]:
    """The local folder a Parquet path reads from: the folder itself, or the folder
    of a file or a glob; None for a URL or a path without such a folder."""
    text = os.fsdecode(os.fspath(path))
    if "://" in text:
        return None
    if os.path.isdir(text):
        return text
    folder = os.path.dirname(text) or "."
    if glob.has_magic(folder) or not os.path.isdir(folder):
        return None
    return folder


def check_dataset(path: Any) -> Optional[dict[str, Any]]:
    """Refuse an unfinished or altered cumgain dataset (:class:`InputError`); return
    its manifest, or None for a folder cumgain did not write (read as it is)."""
    folder = dataset_folder(path)
    if folder is None:
        return None
    if os.path.lexists(os.path.join(folder, IN_PROGRESS)):
        raise InputError(f"{folder}: an unfinished cumgain dataset (it holds {IN_PROGRESS}: "
                         "the write was interrupted or is still running); write it again")
    if not os.path.lexists(os.path.join(folder, MANIFEST)):
        return None
    manifest = read(folder)
    problems = _differences(folder, manifest)
    if problems:
        raise InputError(f"{folder}: the cumgain dataset does not match its manifest "
                         f"{MANIFEST} ({'; '.join(problems)}); write it again")
    return manifest


def check_replaceable(folder: str) -> None:
    """Refuse (:class:`InputError`) to replace a folder unless every entry in it is a
    file its cumgain manifest lists, or the manifest itself."""
    if not os.path.lexists(os.path.join(folder, MANIFEST)):
        raise InputError(f"{folder} holds files cumgain did not write (no {MANIFEST}); "
                         "cumgain replaces only a dataset it wrote: choose another folder "
                         "or remove it yourself")
    manifest = read(folder)
    listed = {entry["name"] for entry in manifest["files"]}
    foreign = sorted(set(os.listdir(folder)) - listed - {MANIFEST})
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3
                                          else "")
        raise InputError(f"{folder} holds files cumgain did not write ({shown}); not "
                         "replaced: choose another folder or remove them yourself")
