"""The property the fuzzers check, one input at a time (no atheris needed here).

:func:`check_files`: any bytes as a qrels file and a run file, under some policies.
``cumgain.evaluate`` on the files (the native reader, which reads every input itself
and raises the reference reader's error for a bad one) must either raise an
``InputError`` (a ``ValueError`` naming the file and line) or return numbers; and the
pure-Python reference reader (:mod:`cumgain.reference.reading`) on the same files must
do exactly the same: the same error message, or bit-identical per-topic values and
means; and so must the same evaluation against the qrels read once beforehand
(``cumgain.prepare_qrels``), and against the qrels and run loaded first
(``cumgain.trec_io.load_qrels`` / ``load_run``: loaded objects, ranked natively); and
both readers must agree again on the run's lines in reverse order (topics that come
back) and on the run as a seekable binary stream and as a pipe (read once: held by
topic from the start). Anything else (another exception, a crash, a sanitizer report)
is a bug.

:func:`check_dicts`: the same for pytrec_eval-style dicts built from the input (the
C reader's ``add_dict``, and the reference front-end's conversion of what it does not
take, against the reference reader; with the top bit of byte 0, the run dict's topics
ranked in ranges of one topic or more, on three threads). Ids include ``""``, ``é`` and strs with a lone surrogate; values small
ints and floats, NaN, +-inf, ``True``, ``None``, a str, and ints too large for a
float64 (see :func:`dicts`).

:func:`check_files_native` and :func:`check_dicts_native` (the ``files-native`` and
``dicts-native`` targets): the compiled path alone, for volume: each input evaluated
once, on one thread, for four measures, and required to give numbers or an
``InputError``; no reference
reader to agree with, no reading in parts. A few times faster per input than the
differential targets (which also cover the parts and threads), they look for what the
sanitizers see (an out-of-bounds access, undefined behaviour, a crash) and for any
other exception.

Input layout (so that seeds can be written by hand): byte 0 selects the policies
(and with its top bit, that the native reader reads the files in parts of one byte
or more, on three threads, so that any line or run topic may start a part, and
checks the qrels for duplicates in up to three ranges of topics, and feeds the parser
blocks of 16 bytes, so that every line crosses a block and a long one grows the
buffer; without it, blocks of 4 KiB: a whole input), bytes
1-2 the length of the qrels part (little-endian), then the qrels bytes, then the run
bytes.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import math
import os
import tempfile
import warnings
import zlib

import numpy as np

from cgcore import _qrels
from cumgain.io.native import blocks as _native_blocks
from cumgain.io.native import parts as _native_parts
from cumgain.io.trec import byte_stream as _trec_bytes
from cumgain.engine import evaluator
from cumgain.reference import reading as reference_reading
from cumgain.io.native import reader as native_reader
from cumgain.engine.evaluator import evaluate
from cumgain.exceptions import InputError
from cumgain.trec_io import prepare_qrels
from cumgain.trec_io import load_qrels, load_run

MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
            "P.1,5", "recall.5", "ndcg", "ndcg_cut.3", "success.1",
            "nDCG@5(gains=0-1-10-100,discount=tois)", "avg_pos_nCG@3"]
LINEAR = ["num_ret", "P.1,5", "recall.5", "ndcg", "ndcg_cut.3",
          "nDCG@5(gains=0-1-10-100,discount=tois)", "avg_pos_nCG@3"]
NATIVE_MEASURES = ["ndcg_cut.3", "nDCG@5(gains=0-1-10-100,discount=tois)", "recall.5"]
TIES = ("docno_desc", "docno_asc", "input_order", "random", "average")
FOLDER = "/dev/shm" if os.path.isdir("/dev/shm") else None


def split(data: bytes) -> tuple[dict, bytes, bytes]:
    """Policies, qrels bytes and run bytes of one fuzz input."""
    flags = data[0] if data else 0
    size = int.from_bytes(data[1:3], "little") if len(data) >= 3 else 0
    body = data[3:]
    policies = dict(ties=TIES[flags % 5],
                    score_precision="float32" if flags & 8 else "float64",
                    depth=2 if flags & 16 else None,
                    judged_only=bool(flags & 32), seed=7, threads=3 if flags & 128 else 1)
    gzip_run = bool(flags & 64)
    qrels, run = body[:size], body[size:]
    if gzip_run:
        run = gzip.compress(run, mtime=0)
    return policies, qrels, run


def outcome(qrels, run, policies: dict, native_only: bool = False,
            reference: bool = False):
    """("error", message) or ("values", topics, {name: array}, {name: mean});
    ``native_only``: a few measures (the native targets' volume is in the readers);
    ``reference``: read by the reference reader (the oracle), not the native one."""
    if native_only:
        measures = NATIVE_MEASURES + ([] if policies["ties"] == "average" else ["map"])
    else:
        measures = LINEAR if policies["ties"] == "average" else MEASURES
    reader = reference_reading.using_reference_reader() if reference \
        else contextlib.nullcontext()
    try:
        with warnings.catch_warnings(), reader:
            warnings.simplefilter("ignore")
            result = evaluate(qrels, run, measures, **policies)
    except InputError as error:
        return ("error", str(error))
    return ("values", result.topics, result.values, result.means)


def same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a[1] == b[1]
    if a[1] != b[1] or a[2].keys() != b[2].keys():
        return False
    for name in a[2]:
        if not np.array_equal(a[2][name], b[2][name], equal_nan=True):
            return False
        x, y = a[3][name], b[3][name]
        if not (x == y or (math.isnan(x) and math.isnan(y))):
            return False
    return True


@contextlib.contextmanager
def split_anywhere():
    """With threads > 1: files read in parts of any size, run dicts ranked in topic
    ranges of any size, the qrels' duplicate check split at any topic, and measures
    side by side in any batch."""
    limits = _native_parts.PART_BYTES, native_reader.DICT_TOPICS_PER_THREAD, \
        evaluator.PARALLEL_MEASURE_ROWS, _qrels.CHECK_ROWS_PER_THREAD
    _native_parts.PART_BYTES = native_reader.DICT_TOPICS_PER_THREAD = \
        evaluator.PARALLEL_MEASURE_ROWS = _qrels.CHECK_ROWS_PER_THREAD = 1
    try:
        yield
    finally:
        _native_parts.PART_BYTES, native_reader.DICT_TOPICS_PER_THREAD, \
            evaluator.PARALLEL_MEASURE_ROWS, _qrels.CHECK_ROWS_PER_THREAD = limits


@contextlib.contextmanager
def small_reads(tiny: bool):
    """The native reader's blocks of 16 bytes (``tiny``) or 4 KiB, and the reference
    reader's reads of 4 KiB, instead of 1 MiB each. A fuzz input (at most 4 KiB with
    -max_len=4096) still fits one 4 KiB block, and a fresh MiB per read, which costs
    the sanitizer build far more than the parse, is saved."""
    limits = _native_blocks.BLOCK, _trec_bytes._READ
    _native_blocks.BLOCK = 16 if tiny else 4096     # (every block the native reader reads)
    _trec_bytes._READ = 4096
    try:
        yield
    finally:
        _native_blocks.BLOCK, _trec_bytes._READ = limits


def check_files(data: bytes) -> None:
    policies, qrels_bytes, run_bytes = split(data)
    with small_reads(policies["threads"] > 1):
        _check_files(policies, qrels_bytes, run_bytes)


@contextlib.contextmanager
def written(qrels_bytes: bytes, run_bytes: bytes):
    """The two parts as files ``(qrels_path, run_path)`` in a fresh folder."""
    with tempfile.TemporaryDirectory(dir=FOLDER) as folder:
        paths = os.path.join(folder, "qrels"), os.path.join(folder, "run")
        for path, data in zip(paths, (qrels_bytes, run_bytes)):
            with open(path, "wb") as f:
                f.write(data)
        yield paths


def _check_files(policies: dict, qrels_bytes: bytes, run_bytes: bytes) -> None:
    with written(qrels_bytes, run_bytes) as (qrels_path, run_path):
        with split_anywhere():
            native = outcome(qrels_path, run_path, policies)
            try:        # the qrels read once, beforehand, must not change anything
                prepared = outcome(prepare_qrels(qrels_path, threads=policies["threads"]),
                                   run_path, policies)
            except InputError as error:
                prepared = ("error", str(error))
        reference = outcome(qrels_path, run_path, policies, reference=True)
        try:        # loaded first (the reference reader's objects), ranked natively
            loaded = (load_qrels(qrels_path), load_run(run_path))
        except InputError as error:
            from_objects = ("error", str(error))
        else:
            with split_anywhere():
                from_objects = outcome(*loaded, policies)
        with split_anywhere():  # the run's lines in reverse order (topics that come
            reversed_run = _reversed_lines(run_bytes)       # back), and as streams
            for name, run in (("reversed lines", lambda: _file(run_path, reversed_run)),
                              ("a seekable stream", lambda: io.BytesIO(run_bytes)),
                              ("a pipe", lambda: _Pipe(run_bytes))):
                got = outcome(qrels_path, run(), policies)
                expected = outcome(qrels_path, run(), policies, reference=True)
                if not same(got, expected):
                    raise AssertionError(f"native and reference readers differ on the run "
                                         f"as {name}:\n{got}\n{expected}")
    if not same(native, reference):
        raise AssertionError(f"native and reference readers differ:\n{native}\n{reference}")
    if not same(prepared, native):
        raise AssertionError(f"prepared qrels and the qrels file differ:\n{prepared}\n{native}")
    if not same(from_objects, reference):
        raise AssertionError(f"loaded objects and the reference reader differ:\n"
                             f"{from_objects}\n{reference}")


def _reversed_lines(data: bytes) -> bytes:
    """The lines of ``data`` (gunzipped if gzip) in reverse order (a run whose topics
    come back, unless it has one)."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return data
    lines = data.split(b"\n")
    return b"\n".join(lines[::-1])


def _file(beside: str, data: bytes) -> str:
    """``data`` written to a file beside ``beside``: its path."""
    path = beside + ".variant"
    with open(path, "wb") as out:
        out.write(data)
    return path


class _Pipe(io.RawIOBase):
    """A stream that cannot be read again (as a pipe): the compiled reader holds the
    run by topic from the start."""

    def __init__(self, data: bytes):
        self.data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        return self.data.readinto(buffer)


def check_files_native(data: bytes) -> None:
    policies, qrels_bytes, run_bytes = split(data)
    policies["threads"] = 1
    with small_reads(False), written(qrels_bytes, run_bytes) as (qrels_path, run_path):
        outcome(qrels_path, run_path, policies, native_only=True)


HUGE = {0xFE: 10 ** 400, 0xFF: -(2 ** 1024)}     # ints that no float64 holds
SURROGATE = "\udcff"    # a lone surrogate (os.fsdecode's for byte 0xff): no UTF-8 bytes


def _value(byte: int, qrels: bool = False):
    """A dict value from one byte: small ints and floats, ties, and the awkward ones
    (bytes 0xFE and 0xFF: ints too large for a float64); qrels values are the first
    eight (numbers a qrels takes) or the huge ints."""
    if byte in HUGE:
        return HUGE[byte]
    table = [0, 1, 2, 3, -1, 0.5, 1.5, 2.0, float("inf"), float("-inf"), float("nan"),
             True, None, "1", 1e308, -0.0]
    return table[byte % (8 if qrels else len(table))]


def dicts(data: bytes) -> tuple[dict, dict]:
    """Two dicts of dicts from the bytes, three a document: the first byte's top bit
    chooses qrels or run, its low two bits the topic id from a small alphabet (bits 2-6
    all set: with a lone surrogate), the second byte the docno (from 0xFC: with a lone
    surrogate), the third the value (see _value)."""
    qrels: dict = {}
    run: dict = {}
    for i in range(0, len(data) - 2, 3):
        topic, docno, value = data[i] % 4, data[i + 1] % 12, data[i + 2]
        target = qrels if data[i] & 0x80 else run
        key = ["a", "b", "é", ""][topic] + (SURROGATE if data[i] & 0x7C == 0x7C else "")
        name = f"d{docno}" if docno < 11 else ""
        if data[i + 1] >= 0xFC:
            name += SURROGATE
        target.setdefault(key, {})[name] = _value(value, qrels=target is qrels)
    return qrels, run


def check_dicts(data: bytes) -> None:
    policies, _, _ = split(data[:3])
    qrels, run = dicts(data[3:])
    with split_anywhere():
        native = outcome(qrels, run, policies)
    reference = outcome(qrels, run, policies, reference=True)
    if not same(native, reference):
        raise AssertionError(f"dict paths differ:\n{native}\n{reference}")


def check_dicts_native(data: bytes) -> None:
    policies, _, _ = split(data[:3])
    policies["threads"] = 1
    outcome(*dicts(data[3:]), policies, native_only=True)


def pack(flags: int, qrels: bytes, run: bytes) -> bytes:
    """One input in the layout above (how the seed corpus was written)."""
    return bytes([flags]) + len(qrels).to_bytes(2, "little") + qrels + run


def pack_dicts(flags: int, documents: list) -> bytes:
    """One input for the dicts target: ``documents`` as (first, docno, value) bytes
    (see :func:`dicts`)."""
    return bytes([flags, 0, 0]) + bytes(b for document in documents for b in document)


# ---------------------------------------------------------------- the parameter parser

_SPELLING_QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 3}}
_SPELLING_RUN = {"q1": {"a": 0.3, "b": 0.9, "c": 0.5, "x": 0.1}, "q2": {"d": 0.4}}


def check_measure_spelling(data: bytes) -> None:
    """Any text as a measure's spelling: parse_measure gives measures or raises an
    InputError (never a RecursionError, an OverflowError, a ValueError of its own);
    what parses evaluates to numbers or an InputError; and a spelling that parses
    reads back to the same measures from each printed name (a number read one way in
    one spelling and another way in another would differ here)."""
    from cumgain.measures import parse_measure
    spelling = data.decode("utf-8", "replace")
    try:
        measures = parse_measure(spelling)
    except InputError:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            evaluate(_SPELLING_QRELS, _SPELLING_RUN, measures)
    except InputError:
        return
    for measure in measures:
        if measure.spec.trec is not None and measure.name == measure.family \
                or "_" in measure.name and "(" not in measure.name:
            again = parse_measure(measure.name)
            assert [m.family for m in again] == [measure.family], (spelling, measure.name)


# ---------------------------------------------------------------- the writers

WRITER_TARGETS = ("new", "regular", "private", "fifo", "null", "full", "link", "dangling",
                  "folder", "slash", "empty")


def check_writer(data: bytes) -> None:
    """Byte 0 chooses a destination kind (WRITER_TARGETS) and ``overwrite``, the rest
    is what is written through :func:`cumgain.io.atomic.atomic_open`. Whatever the
    destination: an InputError or an OSError naming it (never the temporary file), or
    the data written; afterwards no temporary is left, a link is still the link (its
    target untouched), a device or a FIFO is still one, a replaced regular file holds
    the data and keeps its mode, an untouched one its old content."""
    import stat
    import threading
    from cumgain.io import atomic
    kind = WRITER_TARGETS[(data[0] if data else 0) % len(WRITER_TARGETS)]
    overwrite = bool(data[0] & 0x80) if data else False
    payload = data[1:]
    with tempfile.TemporaryDirectory(dir=FOLDER) as folder:
        path = os.path.join(folder, "out")
        victim = os.path.join(folder, "victim")
        with open(victim, "wb") as out:
            out.write(b"precious")
        reader = None
        if kind in ("regular", "private"):
            with open(path, "wb") as out:
                out.write(b"old")
            os.chmod(path, 0o600 if kind == "private" else 0o644)
        elif kind == "fifo":
            os.mkfifo(path)
            received = []
            reader = threading.Thread(target=lambda: received.append(open(path, "rb").read()))
            reader.start()
        elif kind == "link":
            os.symlink(victim, path)
        elif kind == "dangling":
            os.symlink(os.path.join(folder, "nowhere"), path)
        elif kind == "folder":
            os.mkdir(path)
        target = {"null": "/dev/null", "full": "/dev/full", "slash": path + "/",
                  "empty": ""}.get(kind, path)
        try:
            with atomic.atomic_open(target, "wb", overwrite=overwrite) as out:
                out.write(payload)
            outcome = "written"
        except InputError as error:
            outcome = "refused"
            assert atomic.TEMP_MARK not in str(error), error
        except OSError as error:
            outcome = "failed"
            assert error.filename == target and atomic.TEMP_MARK not in str(error), error
        finally:
            if reader is not None:
                if reader.is_alive():       # (a reader still waiting for a writer: one
                    with contextlib.suppress(OSError):              # that writes nothing)
                        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                reader.join(10)
        names = sorted(os.listdir(folder))
        assert not [n for n in names if atomic.TEMP_MARK in n], names
        with open(victim, "rb") as kept:
            assert kept.read() == b"precious"
        if kind in ("link", "dangling"):
            assert outcome == "refused" and os.path.islink(path)
        if kind == "fifo":
            assert outcome == "written" and stat.S_ISFIFO(os.lstat(path).st_mode)
            assert received == [bytes(payload)]
        if kind in ("null", "full"):
            assert stat.S_ISCHR(os.stat(target).st_mode)
            assert outcome == ("written" if kind == "null" or not payload else "failed")
        if kind in ("folder", "slash", "empty"):
            assert outcome == "refused"
        if kind in ("regular", "private"):
            with open(path, "rb") as result:
                content = result.read()
            mode = stat.S_IMODE(os.stat(path).st_mode)
            assert mode == (0o600 if kind == "private" else 0o644), oct(mode)
            assert (outcome, content) == (("written", bytes(payload)) if overwrite
                                          else ("refused", b"old"))
        if kind == "new":
            with open(path, "rb") as result:
                assert outcome == "written" and result.read() == bytes(payload)
