"""cumgain.io.atomic: every file and folder cumgain writes is complete or absent.

The writers that use it (the external sort, Parquet datasets, plots, the demo's files)
are tested with their commands; here, the helper's own promises: the destination
appears only when the block ends without error, an error (KeyboardInterrupt too)
leaves the destination as it was and no temporary behind, an existing destination is
replaced only when asked, and a symbolic link there is never followed.
"""
from __future__ import annotations

import os

import pytest

from cumgain.io import atomic
from cumgain.exceptions import InputError


def names(folder) -> list:
    return sorted(p.name for p in folder.iterdir())


def test_a_file_appears_only_when_complete(tmp_path):
    target = tmp_path / "out.txt"
    with atomic.atomic_open(target, "w", encoding="utf-8") as out:
        out.write("half")
        assert not target.exists()
        temp, = [p for p in tmp_path.iterdir()]
        assert temp.name.startswith(".out.txt.cumgain-tmp-")
        out.write(" and whole\n")
    assert target.read_text() == "half and whole\n"
    assert names(tmp_path) == ["out.txt"]


def test_new_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic.atomic_path(tmp_path / "out.bin") as temp:
            with open(temp, "wb") as out:
                out.write(b"x")
        with atomic.atomic_dir(tmp_path / "folder"):
            pass
    finally:
        os.umask(old)
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "folder").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_an_error_leaves_the_destination_as_it_was(tmp_path, error):
    with pytest.raises(type(error)):
        with atomic.atomic_open(tmp_path / "new.txt") as out:
            out.write(b"partial")
            raise error
    (tmp_path / "old.txt").write_bytes(b"old")
    with pytest.raises(type(error)):
        with atomic.atomic_open(tmp_path / "old.txt", overwrite=True) as out:
            out.write(b"partial")
            raise error
    with pytest.raises(type(error)):
        with atomic.atomic_dir(tmp_path / "dir") as folder:
            (tmp_path / folder / "part.0").write_bytes(b"partial")
            raise error
    assert names(tmp_path) == ["old.txt"]
    assert (tmp_path / "old.txt").read_bytes() == b"old"


def test_an_existing_destination_is_replaced_only_when_asked(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("mine")
    with pytest.raises(InputError, match="out.txt exists; pass --overwrite to replace it"):
        with atomic.atomic_open(target, hint="--overwrite"):
            pass
    assert target.read_text() == "mine" and names(tmp_path) == ["out.txt"]
    with atomic.atomic_open(target, "w", overwrite=True) as out:
        out.write("new")
    assert target.read_text() == "new"


def test_a_link_at_the_destination_is_never_followed_nor_replaced(tmp_path):
    victim, link, dangling = tmp_path / "victim", tmp_path / "link", tmp_path / "dangling"
    victim.write_text("precious")
    link.symlink_to(victim)
    dangling.symlink_to(tmp_path / "nowhere")
    for path in (link, dangling):
        for overwrite in (False, True):
            with pytest.raises(InputError, match="is a symbolic link; cumgain does not "
                                                 "write through links nor replace them"):
                with atomic.atomic_open(path, overwrite=overwrite):
                    pass
    assert link.is_symlink() and dangling.is_symlink()
    assert victim.read_text() == "precious" and not (tmp_path / "nowhere").exists()


def test_a_file_that_appears_meanwhile_is_not_replaced(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(InputError, match="appeared while cumgain was writing it"):
        with atomic.atomic_open(target, "w") as out:
            out.write("mine")
            target.write_text("theirs")
    assert target.read_text() == "theirs" and names(tmp_path) == ["out.txt"]


def test_an_error_names_the_file_asked_for(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        with atomic.atomic_open(tmp_path / "nowhere" / "out.txt"):
            pass
    assert caught.value.filename == str(tmp_path / "nowhere" / "out.txt")


def test_a_long_name_gets_a_temporary_within_the_limit(tmp_path):
    target = tmp_path / ("x" * 250)
    with atomic.atomic_open(target) as out:
        out.write(b"ok")
    with atomic.atomic_dir(tmp_path / ("y" * 250)):
        pass
    assert sorted(len(p.name) for p in tmp_path.iterdir()) == [250, 250]


def test_atomic_open_only_writes_new_files(tmp_path):
    with pytest.raises(InputError, match="mode 'w' or 'wb'"):
        with atomic.atomic_open(tmp_path / "x", "a"):
            pass
    assert names(tmp_path) == []


def test_a_folder_appears_only_when_complete(tmp_path):
    target = tmp_path / "data" / "set"              # the parent is made too
    with atomic.atomic_dir(target) as folder:
        assert os.path.basename(folder).startswith(".set.cumgain-tmp-")
        (tmp_path / "data" / os.path.basename(folder) / "part.0").write_text("x")
        assert not target.exists()
    assert names(target) == ["part.0"] and names(tmp_path / "data") == ["set"]


def _accept(folder: str) -> None:
    pass


def _refuse(folder: str) -> None:
    raise InputError(f"{folder} is not ours")


def test_a_folder_is_replaced_only_when_the_check_accepts_it(tmp_path):
    target = tmp_path / "set"
    target.mkdir()
    (target / "old").write_text("old")
    with pytest.raises(InputError, match="set exists; pass overwrite=True"):
        with atomic.atomic_dir(target, replaceable=_accept):
            pass
    for replaceable, message in ((None, "cannot tell it wrote it"), (_refuse, "is not ours")):
        with pytest.raises(InputError, match=message):
            with atomic.atomic_dir(target, overwrite=True, replaceable=replaceable):
                pass
    assert names(tmp_path) == ["set"] and names(target) == ["old"]
    with atomic.atomic_dir(target, overwrite=True, replaceable=_accept) as folder:
        (tmp_path / os.path.basename(folder) / "new").write_text("new")
    assert names(tmp_path) == ["set"] and names(target) == ["new"]


def test_the_check_runs_again_before_the_rename(tmp_path):
    target = tmp_path / "set"
    target.mkdir()
    seen = []

    def replaceable(folder: str) -> None:
        seen.append(folder)
        if len(seen) == 2:
            raise InputError("someone wrote into it meanwhile")

    with pytest.raises(InputError, match="meanwhile"):
        with atomic.atomic_dir(target, overwrite=True, replaceable=replaceable):
            pass
    assert seen == [str(target)] * 2 and names(tmp_path) == ["set"]


def test_a_failed_rename_puts_the_old_folder_back(tmp_path, monkeypatch):
    target = tmp_path / "set"
    target.mkdir()
    (target / "old").write_text("old")
    real, calls = os.rename, []

    def rename(source, destination):
        calls.append(source)
        if len(calls) == 2:                     # the new folder onto the name
            raise OSError(5, "Input/output error", destination)
        real(source, destination)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match="Input/output error"):
        with atomic.atomic_dir(target, overwrite=True, replaceable=_accept):
            pass
    assert names(tmp_path) == ["set"] and names(target) == ["old"]


def test_the_current_folder_and_the_inputs_folder_are_never_replaced(tmp_path, monkeypatch):
    (tmp_path / "work" / "in").mkdir(parents=True)
    (tmp_path / "work" / "in" / "run.txt").write_text("x")
    monkeypatch.chdir(tmp_path / "work")
    for target, message in ((".", "current directory"), ("..", "current directory"),
                            (str(tmp_path / "work"), "current directory"),
                            ("in", "holds the input in/run.txt")):
        with pytest.raises(InputError, match=message):
            with atomic.atomic_dir(target, overwrite=True, replaceable=_accept,
                                   protect=["in/run.txt"]):
                pass
    (tmp_path / "work" / "file").write_text("x")
    with pytest.raises(InputError, match="is not a folder cumgain wrote"):
        with atomic.atomic_dir("file", overwrite=True, replaceable=_accept):
            pass
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["file", "in", "run.txt", "work"]


def test_a_fifo_or_a_character_device_is_written_into_not_replaced(tmp_path):
    """A stream target (a FIFO, /dev/null, a device node made with mknod) is written
    into directly, without overwrite, and stays what it was: never unlinked, never
    renamed over (run as root, `-o /dev/null --overwrite` once replaced the system's
    /dev/null with a regular file)."""
    import stat
    import threading
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with atomic.atomic_open(fifo, "w") as out:
        out.write("through the fifo\n")
    reader.join(10)
    assert received == [b"through the fifo\n"] and stat.S_ISFIFO(fifo.stat().st_mode)
    for overwrite in (False, True):
        with atomic.atomic_open("/dev/null", "wb", overwrite=overwrite) as out:
            out.write(b"gone")
        with atomic.atomic_path("/dev/null", overwrite=overwrite) as temp:
            with open(temp, "wb") as out:
                out.write(b"gone too")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    node = tmp_path / "mynull"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    with atomic.atomic_open(node, "w", overwrite=True) as out:
        out.write("nothing")
    assert stat.S_ISCHR(node.lstat().st_mode)
    assert names(tmp_path) == ["fifo", "mynull"]


def test_standard_output_by_any_name_is_written_after_what_it_holds(tmp_path):
    """`-o /dev/stdout` with standard output redirected to a file: written through the
    process's own descriptor, after what was printed before (not over it), and the
    file is not replaced."""
    import subprocess
    import sys
    out = tmp_path / "out.txt"
    code = ("import sys\nfrom cumgain.io import atomic\nprint('before', flush=True)\n"
            "with atomic.atomic_open('/dev/stdout', 'w') as o:\n    o.write('written\\n')\n"
            "print('after')\n")
    with open(out, "wb") as stdout:
        done = subprocess.run([sys.executable, "-c", code], stdout=stdout, cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "before\nwritten\nafter\n"


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "private.txt"
    target.write_text("old")
    os.chmod(target, 0o600)
    with atomic.atomic_open(target, "w", overwrite=True) as out:
        out.write("new")
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("given, message", [
    ("", "the output path is empty"),
    ("folder", "is a folder; give the name of a file to write"),
    ("missing/", "ends with a slash"),
])
def test_a_destination_that_is_no_file_name_says_so_without_the_temporary(
        tmp_path, monkeypatch, given, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    for overwrite in (False, True):
        with pytest.raises(InputError, match=message) as caught:
            with atomic.atomic_open(given, "w", overwrite=overwrite):
                pass
        assert atomic.TEMP_MARK not in str(caught.value)
    assert names(tmp_path) == ["folder"]
