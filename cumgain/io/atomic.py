"""Atomic outputs: every file and folder cumgain writes is complete or absent.

A file is written under a temporary name in its destination folder
(``.<name>.cumgain-tmp-<random>``), flushed and fsynced, then renamed onto the
destination (:func:`atomic_path`, :func:`atomic_open`). A folder (a Parquet dataset) is
written into a temporary sibling folder and renamed into place when complete
(:func:`atomic_dir`). On any error, including ``KeyboardInterrupt``, the temporary is
removed and the destination is left as it was. Only a hard kill (``SIGKILL``, power
loss) can leave a temporary behind; its name says what it is, and it may be deleted.

Policies, written once here:

* An existing destination is refused (:class:`~cumgain.exceptions.InputError`) unless
  ``overwrite=True``; without it, the destination is never replaced, even if it
  appears while cumgain writes (a file is committed with a hard link, which fails if
  the name exists), and a symbolic link there is never followed.
* With ``overwrite=True`` the destination itself is replaced (a symbolic link by the
  new file, never its target). A folder is replaced only if the caller's
  ``replaceable`` check accepts it (cumgain's datasets: see :mod:`cumgain.scale.manifest`),
  and never when it is the current directory, one of its parents, or holds one of the
  ``protect`` paths (the input being converted).
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from typing import IO, Any, Callable, Iterable, Iterator, Optional, Union

from cumgain.exceptions import InputError

PathLike = Union[str, "os.PathLike[str]"]
TEMP_MARK = ".cumgain-tmp-"
OLD_MARK = ".cumgain-old-"


def refuse_existing(path: PathLike, overwrite: bool, hint: str = "overwrite=True") -> None:
    """Raise :class:`InputError` if ``path`` exists (a dangling link counts) and
    ``overwrite`` is false; ``hint`` is how the caller asks for overwriting."""
    if not overwrite and os.path.lexists(path):
        raise InputError(f"{os.fspath(path)} exists; pass {hint} to replace it")


def _sibling(target: str, mark: str) -> str:
    """A fresh hidden name beside ``target``: ``.<name><mark><random>`` (the name cut
    to 200 characters, so the result stays within the usual 255)."""
    folder, name = os.path.split(os.path.normpath(target))
    return os.path.join(folder, f".{name[:200]}{mark}{secrets.token_hex(4)}")


def _fsync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (POSIX); a no-op where folders cannot be opened."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _remove(path: str) -> None:
    """Remove a temporary file or folder, ignoring one that is already gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _commit_file(temp: str, target: str, overwrite: bool) -> None:
    """Rename ``temp`` onto ``target``; without ``overwrite``, never replace a name
    that exists (a hard link fails on it; where links are not supported, check first)."""
    if overwrite:
        os.replace(temp, target)
        return
    try:
        os.link(temp, target)
    except FileExistsError:
        raise InputError(f"{target} appeared while cumgain was writing it; not replaced") \
            from None
    except OSError:                      # no hard links on this file system
        refuse_existing(target, False)
        os.replace(temp, target)
        return
    os.unlink(temp)


@contextlib.contextmanager
def atomic_path(path: PathLike, *, overwrite: bool = False,
                hint: str = "overwrite=True") -> Iterator[str]:
    """Yield a temporary path beside ``path`` to write; when the block ends, fsync it
    and rename it to ``path``. On any error the temporary is removed and ``path`` is
    untouched. An existing ``path`` is refused unless ``overwrite``."""
    target = os.fspath(path)
    refuse_existing(target, overwrite, hint)
    temp = _sibling(target, TEMP_MARK)
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # umask applies
    except OSError as error:             # name the file asked for, not the temporary
        raise OSError(error.errno, error.strerror, target) from None
    try:
        yield temp
        with open(temp, "rb+") as written:
            os.fsync(written.fileno())
        _commit_file(temp, target, overwrite)
    except BaseException:
        _remove(temp)
        raise
    _fsync_folder(os.path.dirname(os.path.abspath(target)))


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "wb", *, overwrite: bool = False,
                hint: str = "overwrite=True", **kwargs: Any) -> Iterator[IO]:
    """:func:`open` on a temporary beside ``path`` (``mode`` "w" or "wb", with any
    ``open`` keyword), flushed, fsynced and renamed to ``path`` when the block ends."""
    if mode not in ("w", "wb"):
        raise InputError(f"atomic_open writes a new file: mode 'w' or 'wb', got {mode!r}")
    with atomic_path(path, overwrite=overwrite, hint=hint) as temp, \
            open(temp, mode, **kwargs) as stream:
        yield stream


def _contains(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (after resolving links)."""
    folder, path = os.path.realpath(folder), os.path.realpath(path)
    try:
        return os.path.commonpath([folder, path]) == folder
    except ValueError:                   # on different drives (Windows)
        return False


def refuse_unsafe_folder(path: PathLike, protect: Iterable[PathLike] = ()) -> None:
    """Raise :class:`InputError` if replacing the folder ``path`` would remove the
    current directory (or a parent of it) or one of the ``protect`` paths."""
    target = os.fspath(path)
    if _contains(target, os.getcwd()):
        raise InputError(f"{target} is the current directory or one of its parents; "
                         "cumgain will not replace it")
    for kept in protect:
        if _contains(target, os.fspath(kept)):
            raise InputError(f"{target} holds the input {os.fspath(kept)}; "
                             "cumgain will not replace it")


def check_folder(path: PathLike, *, overwrite: bool = False, hint: str = "overwrite=True",
                 replaceable: Optional[Callable[[str], None]] = None,
                 protect: Iterable[PathLike] = ()) -> None:
    """The checks :func:`atomic_dir` makes before it writes ``path``; callers may run
    them earlier, before long work. Raise :class:`InputError` to refuse."""
    target = os.fspath(path)
    refuse_existing(target, overwrite, hint)
    if not os.path.lexists(target):
        return
    refuse_unsafe_folder(target, protect)
    if os.path.islink(target) or not os.path.isdir(target):
        raise InputError(f"{target} is not a folder cumgain wrote; cumgain will not replace it")
    if replaceable is None:
        raise InputError(f"{target} exists and cumgain cannot tell it wrote it; not replaced")
    replaceable(target)


def _commit_folder(temp: str, target: str) -> None:
    """Rename ``temp`` to ``target``; an existing ``target`` (already checked) is first
    moved aside, then removed once the new folder is in place."""
    old = None
    if os.path.lexists(target):
        old = _sibling(target, OLD_MARK)
        os.rename(target, old)
    try:
        os.rename(temp, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    _fsync_folder(os.path.dirname(os.path.abspath(target)))
    if old is not None:
        shutil.rmtree(old)


@contextlib.contextmanager
def atomic_dir(path: PathLike, *, overwrite: bool = False, hint: str = "overwrite=True",
               replaceable: Optional[Callable[[str], None]] = None,
               protect: Iterable[PathLike] = ()) -> Iterator[str]:
    """Yield a new empty folder beside ``path`` to fill; when the block ends, rename it
    to ``path``. On any error it is removed and ``path`` is untouched.

    An existing ``path`` is refused unless ``overwrite``; with it, ``path`` must be a
    real folder (not a link), not the current directory or a parent of it, not hold a
    ``protect`` path, and pass ``replaceable(path)`` (which raises to refuse), checked
    before the work and again just before the rename."""
    target = os.fspath(path)
    protect = list(protect)
    check_folder(target, overwrite=overwrite, hint=hint, replaceable=replaceable,
                 protect=protect)
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    temp = _sibling(target, TEMP_MARK)
    os.mkdir(temp, 0o777)                                                # umask applies
    try:
        yield temp
        _fsync_folder(temp)
        check_folder(target, overwrite=overwrite, hint=hint, replaceable=replaceable,
                     protect=protect)
        _commit_folder(temp, target)
    except BaseException:
        _remove(temp)
        raise
