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
  the name exists).
* With ``overwrite=True`` only a **regular file** is replaced, keeping its permission
  bits. A symbolic link, a device, a FIFO or a socket is never unlinked nor renamed
  over, with or without ``overwrite``: a link to a regular file (or to nothing) is
  refused, saying so; a folder given as a file's destination is refused. A folder
  (a dataset) is replaced only if the caller's ``replaceable`` check accepts it
  (cumgain's datasets: see :mod:`cumgain.scale.manifest`), and never when it is a link,
  the current directory, one of its parents, or holds one of the ``protect`` paths
  (the input being converted).
* A destination that is a **stream** is written into directly, as a shell's ``>``
  would, without ``overwrite`` (there is nothing to replace, and nothing can be
  atomic there): a FIFO, a character device (``/dev/null``, a terminal), or this
  process's standard output or error under any name (``/dev/stdout``,
  ``/proc/self/fd/1``), links to these included (:func:`is_stream_target`). A block
  device is refused.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import sys
import tempfile
from typing import IO, Any, Callable, Iterable, Iterator, Optional, Union

from cumgain.exceptions import InputError, naming

PathLike = Union[str, "os.PathLike[str]"]
TEMP_MARK = ".cumgain-tmp-"
OLD_MARK = ".cumgain-old-"


def is_stream_target(path: PathLike) -> bool:
    """Whether ``path`` is written into directly rather than replaced: it exists (links
    followed) and is a FIFO or a character device, or is this process's standard output
    or error (whatever file that is, as ``/dev/stdout`` names it)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode) \
        or _standard_stream_of(info) is not None


def check_file_target(path: PathLike, overwrite: bool, hint: str = "overwrite=True") -> None:
    """Raise :class:`InputError` unless ``path`` may receive a file cumgain writes: a
    stream target (written into directly), a name that does not exist, or, with
    ``overwrite``, a regular file (replaced). ``hint`` is how the caller asks for
    overwriting."""
    target = os.fspath(path)
    if target == "":
        raise InputError("the output path is empty")
    if os.path.isdir(target) and not os.path.islink(target):
        raise InputError(f"{target} is a folder; give the name of a file to write")
    if target.endswith(("/", os.sep)):
        raise InputError(f"{target} ends with a slash, as a folder's name would; give "
                         "the name of a file to write")
    if is_stream_target(target):
        return
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as error:
        raise OSError(error.errno, error.strerror, target) from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(f"{target} is a symbolic link; cumgain does not write through "
                         "links nor replace them (give the path it points to)")
    if stat.S_ISBLK(info.st_mode):
        raise InputError(f"{target} is a block device; cumgain will not write to it")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{target} is not a regular file; cumgain will not replace it")
    if not overwrite:
        raise InputError(f"{target} exists; pass {hint} to replace it")


def refuse_existing(path: PathLike, overwrite: bool, hint: str = "overwrite=True") -> None:
    """Raise :class:`InputError` if ``path`` exists (a dangling link counts) and
    ``overwrite`` is false (for a folder's destination; a file's is checked by
    :func:`check_file_target`)."""
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
    that exists (a hard link fails on it; where links are not supported, check first).
    With it, only a regular file is replaced, and ``temp`` takes its permission bits."""
    if overwrite:
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            info = None
        if info is not None:
            if not stat.S_ISREG(info.st_mode):     # (it changed since it was checked)
                raise InputError(f"{target} is no longer a regular file; not replaced")
            os.chmod(temp, stat.S_IMODE(info.st_mode))
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


def _standard_stream(target: str) -> Optional[int]:
    """1 or 2 if ``target`` is this process's standard output or error, else None."""
    try:
        return _standard_stream_of(os.stat(target))
    except (OSError, ValueError):
        return None


def _standard_stream_of(info: os.stat_result) -> Optional[int]:
    """1 or 2 if the file of ``info`` is this process's standard output or error."""
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            if os.path.samestat(info, os.fstat(fd)):
                return fd
    return None


def _open_stream(target: str, mode: str, **kwargs: Any) -> IO:
    """A stream target opened for writing as it is (never created nor truncated); this
    process's standard output or error through its own descriptor (a copy of it), so
    that what was written to it before stays and what follows comes after."""
    fd = _standard_stream(target)
    if fd is not None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        return os.fdopen(os.dup(fd), mode, **kwargs)
    return os.fdopen(os.open(target, os.O_WRONLY), mode, **kwargs)


@contextlib.contextmanager
def atomic_path(path: PathLike, *, overwrite: bool = False,
                hint: str = "overwrite=True") -> Iterator[str]:
    """Yield a temporary path beside ``path`` to write; when the block ends, fsync it
    and rename it to ``path``. On any error the temporary is removed and ``path`` is
    untouched. An existing ``path`` is refused unless ``overwrite`` (see the module's
    policies). For a stream target (:func:`is_stream_target`) the temporary is in a
    private temporary folder, and its bytes are written into the stream when the block
    ends."""
    target = os.fspath(path)
    check_file_target(target, overwrite, hint)
    if is_stream_target(target):
        with tempfile.TemporaryDirectory(prefix="cumgain-out-") as folder:
            temp = os.path.join(folder, "output")
            yield temp
            with open(temp, "rb") as data, _open_stream(target, "wb") as out:
                shutil.copyfileobj(data, out)
        return
    with _replacing(target, overwrite) as temp:
        yield temp


@contextlib.contextmanager
def _replacing(target: str, overwrite: bool) -> Iterator[str]:
    """A new temporary beside ``target`` (checked by the caller), fsynced and committed
    onto it when the block ends, removed on any error."""
    temp = _sibling(target, TEMP_MARK)
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # umask applies
    except OSError as error:             # name the file asked for, not the temporary
        raise OSError(error.errno, error.strerror, target) from None
    try:
        yield temp
        with open(temp, "rb+") as written:
            os.fsync(written.fileno())
        try:
            _commit_file(temp, target, overwrite)
        except OSError as error:         # name the file asked for, not the temporary
            raise OSError(error.errno, error.strerror, target) from None
    except BaseException:
        _remove(temp)
        raise
    _fsync_folder(os.path.dirname(os.path.abspath(target)))


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "wb", *, overwrite: bool = False,
                hint: str = "overwrite=True", **kwargs: Any) -> Iterator[IO]:
    """:func:`open` on a temporary beside ``path`` (``mode`` "w" or "wb", with any
    ``open`` keyword), flushed, fsynced and renamed to ``path`` when the block ends; a
    stream target is written into directly (never created, never truncated). A failed
    write (a full disk, ``ulimit -f``) is an OSError naming ``path``."""
    if mode not in ("w", "wb"):
        raise InputError(f"atomic_open writes a new file: mode 'w' or 'wb', got {mode!r}")
    target = os.fspath(path)
    check_file_target(target, overwrite, hint)
    if is_stream_target(target):
        with naming(target), _open_stream(target, mode, **kwargs) as stream:
            yield stream
        return
    with naming(target), _replacing(target, overwrite) as temp, \
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
