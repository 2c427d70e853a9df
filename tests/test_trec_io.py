"""Tests of cumgain.trec_io: TREC files, dicts and DataFrames into Qrels / Run.

The oracle for the property tests is ``naive_parse`` below: a line-by-line
reading of the rules in the module docstring, with no batching and no tricks.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gzip
import io
import math
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cumgain import trec_io

from cumgain.io.trec import byte_stream as _trec_bytes

from cumgain.io.trec import lines as _trec_lines
from cumgain.exceptions import FormatError, InputError
from cumgain.trec_io import (
    DuplicatesDroppedWarning,
    Qrels,
    Run,
    load_qrels,
    load_run,
    qrels_from_dataframe,
    qrels_from_dict,
    read_qrels,
    read_run,
    run_from_dataframe,
    run_from_dict,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
REAL = SHARED / "data" / "real"


def write(tmp_path: Path, name: str, content: str | bytes, gz: bool = False) -> Path:
    data = content.encode() if isinstance(content, str) else content
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def columns(data: Qrels | Run) -> dict[str, list]:
    """Every row as (topic, docno, value, line), in stored order, plus the offsets."""
    values = data.relevance if isinstance(data, Qrels) else data.scores
    topic_of_row = np.repeat(np.arange(len(data.topics)), np.diff(data.offsets))
    return {
        "topics": list(data.topics),
        "offsets": data.offsets.tolist(),
        "rows": [(data.topics[t], d, v) for t, d, v in
                 zip(topic_of_row.tolist(), data.docnos.tolist(), values.tolist())],
        "lines": None if data.lines is None else data.lines.tolist(),
        "tag": data.tag if isinstance(data, Run) else None,
    }


def check_error(excinfo, path, line: int, *words: str) -> None:
    """The error is a FormatError and a ValueError naming the file, the line and the words."""
    error = excinfo.value
    assert isinstance(error, FormatError)
    assert isinstance(error, ValueError)
    assert error.line_number == line
    message = str(error)
    assert str(path) in message
    if line:
        assert f"{path}:{line}:" in message
    for word in words:
        assert word in message, (word, message)


# ----------------------------------------------------------------------------- qrels files

QRELS = (
    "1 0 d1 1\n"
    "1 0 d2 0\n"
    "2 0.5 d1 3\n"        # iter 0.5 (TREC-COVID) is ignored
    "1 Q0 d3 -2\n"        # topic 1 again after topic 2: interleaved
    "2 x d9 1.9\n"        # float relevance stays 1.9 (atol would give 1)
    "3\t0 \t d7  2 \n"    # tabs and runs of spaces
)


def test_qrels_plain_groups_topics_stably(tmp_path):
    path = write(tmp_path, "q.txt", QRELS)
    q = read_qrels(path)
    assert q.source == str(path)
    assert q.topics == ("1", "2", "3")
    assert q.offsets.dtype == np.int64 and q.offsets.tolist() == [0, 3, 5, 6]
    assert q.docnos.dtype == object
    assert q.docnos.tolist() == ["d1", "d2", "d3", "d1", "d9", "d7"]
    assert q.relevance.dtype == np.float64
    assert q.relevance.tolist() == [1.0, 0.0, -2.0, 3.0, 1.9, 2.0]
    assert q.lines.dtype == np.int64 and q.lines.tolist() == [1, 2, 4, 3, 5, 6]
    assert q.to_dict() == {"1": {"d1": 1.0, "d2": 0.0, "d3": -2.0},
                           "2": {"d1": 3.0, "d9": 1.9}, "3": {"d7": 2.0}}


def test_qrels_crlf_reads_like_lf(tmp_path):
    lf = read_qrels(write(tmp_path, "lf.txt", QRELS))
    crlf = read_qrels(write(tmp_path, "crlf.txt", QRELS.replace("\n", "\r\n")))
    assert columns(crlf) == columns(lf)


def test_qrels_without_final_newline(tmp_path):
    q = read_qrels(write(tmp_path, "q.txt", QRELS.rstrip("\n")))
    assert columns(q) == columns(read_qrels(write(tmp_path, "q2.txt", QRELS)))


def test_qrels_comments_are_skipped_but_hash_inside_docno_is_data(tmp_path):
    text = ("# a header\n"
            "1 0 msmarco_v2.1_doc_00#1 2\n"
            "   # an indented comment with four fields\n"
            "#1 0 d 1\n"
            "1 0 d#2 1\n")
    q = read_qrels(write(tmp_path, "q.txt", text))
    assert q.topics == ("1",)
    assert q.docnos.tolist() == ["msmarco_v2.1_doc_00#1", "d#2"]
    assert q.lines.tolist() == [2, 5]


def test_qrels_gzip_is_detected_by_magic_bytes_not_name(tmp_path):
    plain = read_qrels(write(tmp_path, "q.txt", QRELS))
    zipped = read_qrels(write(tmp_path, "q.txt.unusual", QRELS, gz=True))
    named_gz = read_qrels(write(tmp_path, "plain.gz", QRELS))  # not gzip inside
    assert columns(zipped) == columns(plain) == columns(named_gz)


def test_gzip_multiple_members_and_zero_padding(tmp_path):
    data = gzip.compress(QRELS[:30].encode()) + gzip.compress(QRELS[30:].encode()) + b"\0" * 9
    q = read_qrels(write(tmp_path, "q.gz", data))
    assert columns(q) == columns(read_qrels(write(tmp_path, "q.txt", QRELS)))


def test_utf8_byte_order_mark_is_dropped(tmp_path):
    q = read_qrels(write(tmp_path, "q.txt", b"\xef\xbb\xbf" + QRELS.encode()))
    assert q.topics == ("1", "2", "3")


def test_non_ascii_ids_are_decoded(tmp_path):
    q = read_qrels(write(tmp_path, "q.txt", "t\u00e9 0 d\u00f6c\u00a0x 1\n"))
    # U+00A0 is not ASCII whitespace, so it stays inside the docno (as in trec_eval)
    assert q.topics == ("t\u00e9",) and q.docnos.tolist() == ["d\u00f6c\u00a0x"]


# ----------------------------------------------------------------------------- run files

RUN = (
    "1 Q0 a 1 1.5 first\n"
    "\n"                                   # blank lines are skipped in runs
    "2 Q0 b 1 -3e-2 tagB extra fields\n"   # extra fields ignored
    "   \t\n"
    "1 Q0 c x 2.25E+1 tagC\n"              # the rank column is not even validated
    "# comment\n"
    "1 Q0 d 9 inf tagD\n"
    "2 Q0 e 2 -Infinity tagE\n"
    "1 Q0 f 3 .5 last\n"
)


def test_run_plain(tmp_path):
    path = write(tmp_path, "r.txt", RUN)
    r = read_run(path)
    assert r.source == str(path)
    assert r.tag == "last"
    assert r.topics == ("1", "2")
    assert r.offsets.tolist() == [0, 4, 6]
    assert r.docnos.tolist() == ["a", "c", "d", "f", "b", "e"]
    assert r.scores.dtype == np.float64
    assert r.scores.tolist() == [1.5, 22.5, math.inf, 0.5, -0.03, -math.inf]
    assert r.lines.tolist() == [1, 5, 7, 9, 3, 8]


def test_run_tag_comes_from_last_data_line(tmp_path):
    r = read_run(write(tmp_path, "r.txt", "1 Q0 a 1 1 one\n1 Q0 b 2 0 two\n\n# x\n"))
    assert r.tag == "two"


@pytest.mark.parametrize("batch", [1 << 23, 40])
def test_run_tag_of_uniform_lines_across_batches(tmp_path, batch):
    text = "".join(f"1 Q0 d{i} {i} {-i} tag{i}\n" for i in range(20))
    r = read_with_small_blocks(read_run, write(tmp_path, "r.txt", text), batch, 16)
    assert r.tag == "tag19" and len(r.docnos) == 20


def test_run_gzip_and_crlf(tmp_path):
    plain = read_run(write(tmp_path, "r.txt", RUN))
    zipped = read_run(write(tmp_path, "r.bin", RUN.replace("\n", "\r\n"), gz=True))
    assert columns(zipped) == columns(plain)
    assert zipped.tag == "last"


def test_run_from_stdin(tmp_path, monkeypatch):
    class Stdin:
        buffer = io.BytesIO(gzip.compress(RUN.encode()))

    monkeypatch.setattr(sys, "stdin", Stdin)
    r = read_run("-")
    assert r.source == "<stdin>"
    assert columns(r) == columns(read_run(write(tmp_path, "r.txt", RUN)))


def test_uniform_and_ragged_lines_give_the_same_columns(tmp_path):
    # all lines with 6 fields take the slicing path; one 7-field line the general path
    uniform = "".join(f"{q} Q0 d{i} {i} {i / 7!r} t\n" for q in (3, 1) for i in range(5))
    a = read_run(write(tmp_path, "a.txt", uniform))
    b = read_run(write(tmp_path, "b.txt", uniform + "1 Q0 z 0 0 u extra\n"))
    assert a.topics == b.topics == ("3", "1")
    assert columns(b)["rows"] == columns(a)["rows"] + [("1", "z", 0.0)]
    assert columns(b)["lines"] == columns(a)["lines"] + [11]
    assert (a.tag, b.tag) == ("t", "u")


@pytest.mark.parametrize("line, words", [
    ("1 Q0 doc 7 3 12.5 run", "the tag '12.5' is a number and 1 more field(s) follow it"),
    ("1 Q0 a b 7 3 12.5 run", "the tag '3' is a number and 2 more field(s) follow it"),
    ("1 Q0 a 7 3 -inf x y", "the tag '-inf' is a number and 2 more field(s) follow it"),
])
@pytest.mark.parametrize("batch", [1 << 23, 16])
def test_fields_after_a_tag_that_is_a_number_are_an_error(tmp_path, line, words, batch):
    """A docno with a space in it shifts the columns by one: its rank is read as the
    score and its score as the tag, with fields after it. Words after a tag that is not
    a number are ignored (trec_eval's results.trunc has them); so is a tag that is a
    number with nothing after it."""
    path = write(tmp_path, "r.txt", "1 Q0 a 1 1 t\n1 Q0 b 2 1 t more words\n" + line + "\n")
    with pytest.raises(FormatError) as excinfo:
        read_with_small_blocks(read_run, path, batch, 8)
    check_error(excinfo, path, 3, words)
    with pytest.raises(FormatError) as in_blocks:
        list(trec_io.iter_run_blocks(path, block_bytes=8))
    assert str(in_blocks.value) == str(excinfo.value)
    fine = read_run(write(tmp_path, "f.txt", "1 Q0 a 1 1 7\n1 Q0 b 2 1 nan x\n1 Q0 c 2 1 t 5\n"))
    assert fine.docnos.tolist() == ["a", "b", "c"] and fine.tag == "t"


@functools.lru_cache(maxsize=None)
def libc_strtod():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.strtod.restype = ctypes.c_double
    libc.strtod.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    return libc.strtod


def c_strtod(text: str) -> float:
    """The C library's strtod: the function trec_eval's atof calls."""
    return libc_strtod()(text.encode(), None)


@pytest.mark.parametrize("text", ["0.1", "1e-320", "4.9e-324", "1e400", "-0", "123456789.123456789",
                                  "2.2250738585072011e-308", "9007199254740993", "1E+7", "5."])
def test_scores_match_c_strtod(tmp_path, text):
    r = read_run(write(tmp_path, "r.txt", f"1 Q0 d 1 {text} t\n"))
    value = r.scores[0]
    expected = c_strtod(text)
    assert value == expected and math.copysign(1, value) == math.copysign(1, expected)


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"\A[+-]?([0-9]{1,25}(\.[0-9]{0,25})?|\.[0-9]{1,25})([eE][+-]?[0-9]{1,3})?\Z"))
def test_number_grammar_matches_c_strtod_bit_for_bit(text):
    values = trec_io._parse_numbers([text.encode()], np.array([1]), text.encode(), 1, "x",
                                    trec_io._RUN)
    expected = c_strtod(text)
    assert values[0] == expected and math.copysign(1, values[0]) == math.copysign(1, expected)


# ----------------------------------------------------------------------------- the oracle

def is_number(text: str) -> bool:
    """The grammar of scores, but NaN (see test_number_grammar_matches_c_strtod_bit_for_bit)."""
    try:
        return "_" not in text and not math.isnan(float(text))
    except ValueError:
        return False


def naive_parse(data: bytes, kind: str, duplicates: str = "error"):
    """trec_io's rules, line by line: returns the same shape as ``columns()``."""
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    physical = text.split("\n")
    if text.endswith("\n"):
        physical.pop()
    rows, order, seen, tag = [], {}, set(), None
    for number, line in enumerate(physical, 1):
        fields = line.replace("\t", " ").replace("\r", " ").replace("\v", " ") \
                     .replace("\f", " ").split(" ")
        fields = [f for f in fields if f]
        if not fields:
            assert kind == "run", "blank line in qrels"
            continue
        if fields[0].startswith("#"):
            continue
        if kind == "qrels":
            assert len(fields) == 4
            topic, docno, value = fields[0], fields[2], float(fields[3])
        else:
            assert len(fields) >= 6
            assert len(fields) == 6 or not is_number(fields[5]), "a shifted docno"
            topic, docno, value, tag = fields[0], fields[2], float(fields[4]), fields[5]
        if (topic, docno) in seen:
            assert duplicates == "first"
            continue
        seen.add((topic, docno))
        order.setdefault(topic, len(order))
        rows.append((order[topic], number, topic, docno, value))
    rows.sort(key=lambda row: row[0])       # stable: input order within a topic
    counts = [0] * len(order)
    for row in rows:
        counts[row[0]] += 1
    offsets = [0]
    for count in counts:
        offsets.append(offsets[-1] + count)
    return {"topics": list(order), "offsets": offsets,
            "rows": [(t, d, v) for _, _, t, d, v in rows], "lines": [n for _, n, *_ in rows],
            "tag": tag}


# "\r" ends a field only at the end of a line: a CR followed by more fields is an error
# (test_bad_inputs.py), so that CR-only line ends cannot turn a file into one row.
SEPARATORS = st.sampled_from([" ", "  ", "\t", " \t ", "\v", "\f", " \v\f"])
IDS = st.text(alphabet="abcXYZ019#._-\u00e9", min_size=1, max_size=4).filter(
    lambda s: not s.startswith("#"))
NUMBERS = st.one_of(
    st.integers(-5, 5).map(str),
    st.floats(allow_nan=False, allow_infinity=True, width=64).map(repr),
    st.sampled_from(["1e-3", "-.5", "5.", "+2", "1E+2", "-inf", "INF", "0.30000000000000004"]),
)


@st.composite
def trec_files(draw, kind: str):
    n_topics = draw(st.integers(1, 4))
    topics = draw(st.lists(IDS, min_size=n_topics, max_size=n_topics, unique=True))
    pairs = draw(st.lists(st.tuples(st.sampled_from(topics), IDS), min_size=1, max_size=40))
    lines = []
    for topic, docno in pairs:
        value = draw(NUMBERS) if kind == "run" else draw(NUMBERS.filter(lambda s: "inf" not in
                                                                        s.lower()))
        if kind == "qrels":
            fields = [topic, draw(st.sampled_from(["0", "Q0", "0.5"])), docno, value]
        else:
            fields = [topic, "Q0", docno, draw(st.sampled_from(["1", "x", "-4"])), value,
                      draw(st.sampled_from(["tag", "r#1", "t3"]))]
            fields += draw(st.lists(st.sampled_from(["extra", "9"]), max_size=2))
        lead = draw(st.sampled_from(["", " ", "\t"]))
        sep = [draw(SEPARATORS) for _ in fields]
        lines.append(lead + "".join(f + s for f, s in zip(fields, sep)).rstrip(" ")
                     if draw(st.booleans()) else lead + " ".join(fields))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["# comment", "#", "  # indented 1 2 3"])))
        if kind == "run" and draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "  ", "\t\r"])))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + draw(st.sampled_from([end, ""]))
    return text.encode("utf-8")


def read_with_small_blocks(reader, path, batch, chunk, **kw):
    old = _trec_bytes._BATCH, _trec_bytes._READ
    _trec_bytes._BATCH, _trec_bytes._READ = batch, chunk
    try:
        return reader(path, **kw)
    finally:
        _trec_bytes._BATCH, _trec_bytes._READ = old


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["qrels", "run"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_files_match_the_naive_parser(tmp_path_factory, kind, data):
    content = data.draw(trec_files(kind))
    gz = data.draw(st.booleans())
    batch = data.draw(st.sampled_from([1, 7, 64, 1 << 23]))
    chunk = data.draw(st.sampled_from([1, 5, 1 << 20]))
    path = write(tmp_path_factory.mktemp("p"), "f", content, gz=gz)
    reader = read_qrels if kind == "qrels" else read_run
    expected_first = naive_parse(content, kind, duplicates="first")
    n_expected = len(expected_first["rows"])
    n_lines = sum(1 for line in content.decode().split("\n")
                  if line.split() and not line.split()[0].startswith("#"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = read_with_small_blocks(reader, path, batch, chunk, duplicates="first")
    assert columns(got) == expected_first
    assert bool(caught) == (n_lines != n_expected)
    if n_lines == n_expected:
        assert columns(read_with_small_blocks(reader, path, batch, chunk)) == expected_first
    else:
        with pytest.raises(FormatError, match="duplicate"):
            read_with_small_blocks(reader, path, batch, chunk)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::cumgain.trec_io.DuplicatesDroppedWarning")
@pytest.mark.parametrize("kind", ["qrels", "run"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_line_past_the_limit_is_refused_wherever_the_reads_and_batches_cut(
        tmp_path_factory, kind, data):
    """With any limit, read size and batch size: a file whose lines all fit reads as
    without a limit; otherwise the first line longer than the limit is the error (its
    line number), unless a line before it has an error of its own."""
    content = data.draw(trec_files(kind))
    gz = data.draw(st.booleans())
    batch = data.draw(st.sampled_from([1, 7, 64, 1 << 23]))
    chunk = data.draw(st.sampled_from([1, 5, 33, 1 << 20]))
    lines = content.split(b"\n")
    limit = data.draw(st.integers(1, max(map(len, lines)) + 2))
    path = write(tmp_path_factory.mktemp("p"), "f", content, gz=gz)
    reader = read_qrels if kind == "qrels" else read_run
    too_long = [i for i, line in enumerate(lines) if len(line) > limit]
    if not too_long:
        assert columns(read_with_small_blocks(reader, path, batch, chunk, duplicates="first",
                                              max_line_bytes=limit)) == \
            columns(read_with_small_blocks(reader, path, batch, chunk, duplicates="first"))
        return
    with pytest.raises(FormatError) as excinfo:
        read_with_small_blocks(reader, path, batch, chunk, duplicates="first",
                               max_line_bytes=limit)
    before = b"".join(line + b"\n" for line in lines[:too_long[0]])
    try:                # the lines before the long one, on their own
        reader(write(tmp_path_factory.mktemp("b"), "f", before), duplicates="first")
    except FormatError as error:
        if "no judgments" not in str(error) and "no results" not in str(error):
            assert str(excinfo.value) == str(error)
            return
    check_error(excinfo, path, too_long[0] + 1, f"line longer than {limit:,} bytes")
    assert excinfo.value.text == _trec_lines._shown(lines[too_long[0]][:limit])


@pytest.mark.parametrize("prefix, words", [
    (b"1 Q0 d\xff" + b"x" * 30, "not valid UTF-8: byte 0xff at column 7"),
    (b"1 Q0 \xe2\x82" + b"x" * 30, "not valid UTF-8: byte 0xe2 at column 6"),
    (b"1 Q0 d" + b"x" * 30 + b"\xe2\x82", "line longer than 32 bytes"),  # cut at the limit
    (b"1 Q0 d\0" + b"x" * 30, "NUL byte in the line"),
    (b"1 Q0 d\r 1" + b"x" * 30, "carriage return inside the line"),
    (b"1 Q0 d 1 1.0 t" + b"x" * 30, "line longer than 32 bytes"),
], ids=["bad-utf8", "bad-utf8-sequence", "a-sequence-cut-at-the-limit", "nul", "cr", "length"])
def test_a_line_past_the_limit_is_named_by_what_is_wrong_in_its_first_bytes(tmp_path, prefix,
                                                                           words):
    """Within its first ``limit`` bytes, what the checks of a short line find comes
    first (UTF-8, then NUL, then a carriage return); else its length."""
    path = write(tmp_path, "run", b"1 Q0 a 1 1 t\n" + prefix + b"y" * 1000 + b"\n")
    with pytest.raises(FormatError) as excinfo:
        read_run(path, max_line_bytes=32)
    check_error(excinfo, path, 2, words)


def test_the_line_limit_comes_from_the_argument_the_constant_or_the_environment(
        tmp_path, monkeypatch):
    monkeypatch.delenv("CUMGAIN_MAX_LINE_BYTES", raising=False)
    assert trec_io.max_line_bytes() == trec_io.DEFAULT_MAX_LINE_BYTES == 1 << 20
    monkeypatch.setenv("CUMGAIN_MAX_LINE_BYTES", "5000")
    assert trec_io.max_line_bytes() == 5000
    monkeypatch.setattr(trec_io, "MAX_LINE_BYTES", 300)
    assert trec_io.max_line_bytes() == 300 and trec_io.max_line_bytes(7) == 7
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(InputError, match="max_line_bytes must be a positive integer"):
            trec_io.max_line_bytes(bad)
    monkeypatch.setattr(trec_io, "MAX_LINE_BYTES", None)
    for bad in ("0", "x", "-5", "1e6"):
        monkeypatch.setenv("CUMGAIN_MAX_LINE_BYTES", bad)
        with pytest.raises(InputError, match="CUMGAIN_MAX_LINE_BYTES must be a positive"):
            trec_io.max_line_bytes()
    monkeypatch.delenv("CUMGAIN_MAX_LINE_BYTES")
    path = write(tmp_path, "run", "1 Q0 a 1 1 t\n1 Q0 " + "b" * 40 + " 2 0.5 t\n")
    assert len(read_run(path).docnos) == 2
    for read in (lambda: read_run(path, max_line_bytes=40),
                 lambda: list(trec_io.iter_run_blocks(path, max_line_bytes=40))):
        with pytest.raises(FormatError) as excinfo:
            read()
        check_error(excinfo, path, 2, "line longer than 40 bytes")


# ----------------------------------------------------------------------------- bad files

@pytest.mark.parametrize("text, line, words", [
    ("1 0 d1 1\n1 0 d2\n", 2, ["expected 4 fields", "found 3"]),
    ("1 0 d1 1\n1 0 d2 1 extra\n", 2, ["expected 4 fields", "found 5"]),
    ("1 0 d1 abc\n", 1, ["relevance 'abc' is not a number"]),
    ("1 0 d1 1\n1 0 d2 0x10\n", 2, ["'0x10' is not a number"]),
    ("1 0 d1 1_0\n", 1, ["'1_0' is not a number"]),
    ("# c\n1 0 d1 nan\n", 2, ["NaN"]),
    ("1 0 d1 -inf\n", 1, ["infinite"]),
    ("1 0 d1 1\n\n1 0 d2 1\n", 2, ["blank line"]),
    ("1 0 d1 1\n  \t \n", 2, ["blank line"]),
    ("1 0 d1 1\r\n\r\n1 0 d2 1\r\n", 2, ["blank line"]),
    ("1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n1 0 d1 2\n", 4, ["duplicate docno 'd1' in topic '1'",
                                                      "lines 1 and 4"]),
])
def test_bad_qrels(tmp_path, text, line, words):
    path = write(tmp_path, "bad_qrels.txt", text)
    with pytest.raises(FormatError) as excinfo:
        read_qrels(path)
    check_error(excinfo, path, line, *words)


@pytest.mark.parametrize("text, line, words", [
    ("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0\n", 2, ["expected at least 6 fields", "found 5"]),
    ("1 Q0 d1 1 2.0 t\n\n1 Q0 d2 2\n", 3, ["found 4"]),
    ("1 Q0 d1 1 high t\n", 1, ["score 'high' is not a number"]),
    ("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0. t\n", 2, ["'1.0.' is not a number"]),
    ("1 Q0 d1 1 NaN t\n", 1, ["NaN", "ranking undefined"]),
    ("1 Q0 d1 1 -nan t\n", 1, ["NaN"]),
    ("1 Q0 d1 1 2 t\n2 Q0 d1 1 2 t\n1 Q0 d1 2 1 t\n", 3, ["duplicate docno 'd1' in topic '1'",
                                                          "lines 1 and 3"]),
])
def test_bad_runs(tmp_path, text, line, words):
    path = write(tmp_path, "bad_run.txt", text)
    with pytest.raises(FormatError) as excinfo:
        read_run(path)
    check_error(excinfo, path, line, *words)


@pytest.mark.parametrize("reader, text, line, words", [
    (read_qrels, b"1 0 a 1\n1 0 b x\n1 0 c\n\n", 2, "'x' is not a number"),
    (read_qrels, b"1 0 a 1\n1 0 b 1 1\n1 0 c 1\n\n", 2, "found 5"),
    (read_qrels, b"1 0 a nan\n1 0 b 1\n1 0 \xff 1\n", 1, "NaN"),
    (read_run, b"1 Q0 a 1 1 t\n1 Q0 b 1 nan t\n1 Q0 c 1 \0 t\n", 2, "NaN"),
    (read_run, b"1 Q0 a 1 1 t\n1 Q0 a 1 1 t\n1 Q0 c 1 t\n", 3, "found 5"),
])
def test_the_first_bad_line_is_reported(tmp_path, reader, text, line, words):
    path = write(tmp_path, "order.txt", text)
    with pytest.raises(FormatError) as excinfo:
        reader(path)
    check_error(excinfo, path, line, words)
    assert excinfo.value.__context__ is None       # no "during handling of" noise


@pytest.mark.parametrize("reader, text, words", [
    (read_qrels, "", "no judgments"),
    (read_qrels, "# only a comment\n", "no judgments"),
    (read_run, "", "no results"),
    (read_run, "\n\n  \n# c\n", "no results"),
])
@pytest.mark.parametrize("gz", [False, True])
def test_empty_files(tmp_path, reader, text, words, gz):
    path = write(tmp_path, "empty.txt", text, gz=gz)
    with pytest.raises(FormatError) as excinfo:
        reader(path)
    check_error(excinfo, path, 0, words)


@pytest.mark.parametrize("reader", [read_qrels, read_run])
def test_non_utf8_bytes_name_the_line(tmp_path, reader):
    good = b"1 Q0 d 1\n" if reader is read_qrels else b"1 Q0 d 1 2 t\n"
    path = write(tmp_path, "latin1.txt", good + b"# caf\xe9\n" + good.replace(b"d", b"e"))
    with pytest.raises(FormatError) as excinfo:
        reader(path)
    check_error(excinfo, path, 2, "not valid UTF-8", "0xe9")


def test_non_utf8_in_a_later_block(tmp_path):
    lines = b"".join(b"1 0 d%d 1\n" % i for i in range(50))
    path = write(tmp_path, "late.txt", lines + b"1 0 \xff\xfe 1\n", gz=True)
    with pytest.raises(FormatError) as excinfo:
        read_with_small_blocks(read_qrels, path, 64, 16)
    check_error(excinfo, path, 51, "not valid UTF-8")


def test_nul_byte(tmp_path):
    path = write(tmp_path, "nul.txt", b"1 0 d1 1\n1 0 d\x002 1\n")
    with pytest.raises(FormatError) as excinfo:
        read_qrels(path)
    check_error(excinfo, path, 2, "NUL")


def big_run(n: int) -> bytes:
    return b"".join(b"%d Q0 doc%07d %d %.6f tag\n" % (i // 1000, i, i % 1000, 1 / (i + 1))
                    for i in range(n))


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_gzip_names_the_last_line_read(tmp_path, cut):
    data = gzip.compress(big_run(20000))
    truncated = data[:int(len(data) * cut)]
    readable = zlib.decompressobj(31).decompress(truncated)
    last = readable.count(b"\n")
    assert 0 < last < 20000
    path = write(tmp_path, "cut.gz", truncated)
    with pytest.raises(FormatError) as excinfo:
        read_with_small_blocks(read_run, path, 4096, 1024)
    check_error(excinfo, path, last, "truncated or corrupt gzip", f"after line {last}")


def test_truncated_gzip_header(tmp_path):
    path = write(tmp_path, "header.gz", gzip.compress(b"1 Q0 d 1 2 t\n")[:5])
    with pytest.raises(FormatError) as excinfo:
        read_run(path)
    check_error(excinfo, path, 0, "truncated or corrupt gzip", "before the first complete line")


def test_gzip_with_a_bad_crc(tmp_path):
    data = bytearray(gzip.compress(QRELS.encode()))
    data[-8] ^= 0xFF                                # the CRC32 in the trailer
    path = write(tmp_path, "crc.gz", bytes(data))
    with pytest.raises(FormatError) as excinfo:
        read_qrels(path)
    check_error(excinfo, path, 6, "corrupt gzip", "after line 6")


def test_gzip_with_corrupt_data(tmp_path):
    data = bytearray(gzip.compress(big_run(3000)))
    data[len(data) // 2: len(data) // 2 + 40] = b"\xff" * 40
    decoder, readable = zlib.decompressobj(31), []
    for i in range(len(data)):                      # what a byte-wise reader gets out
        try:
            readable.append(decoder.decompress(bytes(data[i:i + 1])))
        except zlib.error:
            break
    last = b"".join(readable).count(b"\n")
    assert 0 < last < 3000
    path = write(tmp_path, "corrupt.gz", bytes(data))
    with pytest.raises(FormatError) as excinfo:
        read_run(path)
    check_error(excinfo, path, last, "corrupt gzip", f"after line {last}")


def test_garbage_after_gzip_member(tmp_path):
    path = write(tmp_path, "tail.gz", gzip.compress(QRELS.encode()) + b"garbage")
    with pytest.raises(FormatError) as excinfo:
        read_qrels(path)
    check_error(excinfo, path, 6, "corrupt gzip")


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        read_qrels(tmp_path / "nope.txt")
    with pytest.raises(OSError):
        read_run(str(tmp_path / "nope.txt"))


def test_bad_arguments(tmp_path):
    path = write(tmp_path, "q.txt", QRELS)
    with pytest.raises(InputError, match="duplicates must be one of"):
        read_qrels(path, duplicates="latest")
    with pytest.raises(InputError, match="str or os.PathLike"):
        read_run(12)


# ----------------------------------------------------------------------------- duplicates="first"

def test_duplicates_first_keeps_first_and_warns(tmp_path):
    text = "1 0 d1 1\n2 0 d1 1\n1 0 d1 3\n1 0 d2 0\n1 0 d2 2\n1 0 d1 2\n"
    path = write(tmp_path, "dup.txt", text)
    with pytest.warns(DuplicatesDroppedWarning) as record:
        q = read_qrels(path, duplicates="first")
    assert q.to_dict() == {"1": {"d1": 1.0, "d2": 0.0}, "2": {"d1": 1.0}}
    assert q.lines.tolist() == [1, 4, 2]
    message = str(record[0].message)
    assert "dropped 3 duplicate" in message
    assert "duplicate docno 'd1' in topic '1': lines 1 and 3" in message
    assert record[0].filename == __file__           # points at the caller, not at trec_io


def test_duplicates_first_in_a_run_keeps_the_first_score(tmp_path):
    path = write(tmp_path, "dup.txt", "q Q0 a 1 5 t\nq Q0 a 2 9 t\nq Q0 b 3 1 t\n")
    with pytest.warns(DuplicatesDroppedWarning, match="dropped 1 duplicate"):
        r = load_run(path, duplicates="first")
    assert r.docnos.tolist() == ["a", "b"] and r.scores.tolist() == [5.0, 1.0]


# ----------------------------------------------------------------------------- dicts

def test_qrels_from_dict():
    q = qrels_from_dict({"1": {"d1": 2, "d2": -1.5}, 7: {}, "3": {5: np.int8(1), "x": np.float32(0.5)}})
    assert q.topics == ("1", "7", "3")
    assert q.offsets.tolist() == [0, 2, 2, 4]
    assert q.docnos.tolist() == ["d1", "d2", "5", "x"]
    assert q.relevance.dtype == np.float64 and q.relevance.tolist() == [2.0, -1.5, 1.0, 0.5]
    assert q.source == "<dict>" and q.lines is None


def test_run_from_dict():
    r = run_from_dict({"q": {"a": 1, "b": float("inf"), "c": -2.5}}, source="mine")
    assert r.topics == ("q",) and r.tag == "" and r.source == "mine" and r.lines is None
    assert r.scores.tolist() == [1.0, math.inf, -2.5]


def test_empty_dict_gives_no_topics():
    assert qrels_from_dict({}).topics == () and run_from_dict({}).offsets.tolist() == [0]


@pytest.mark.parametrize("value, words", [
    (True, "bool"), (np.bool_(False), "bool"), ("1", "str"), (None, "NoneType"),
    (float("nan"), "NaN"), (np.float64("nan"), "NaN"), (10 ** 400, "float64"),
])
@pytest.mark.parametrize("builder", [qrels_from_dict, run_from_dict])
def test_bad_dict_values(builder, value, words):
    with pytest.raises(InputError) as excinfo:
        builder({"q1": {"ok": 1, "bad": value}})
    message = str(excinfo.value)
    assert isinstance(excinfo.value, ValueError)
    assert "'q1'" in message and "'bad'" in message and words in message


def test_infinite_relevance_in_dict_is_rejected_but_infinite_score_is_not():
    with pytest.raises(InputError, match="infinite"):
        qrels_from_dict({"q": {"d": float("-inf")}})
    assert run_from_dict({"q": {"d": float("-inf")}}).scores.tolist() == [-math.inf]


def test_dict_ids_that_collide_after_str():
    with pytest.raises(InputError, match="both '1'"):
        qrels_from_dict({1: {"d": 1}, "1": {"e": 1}})
    with pytest.raises(InputError, match="docids 5 and '5'"):
        run_from_dict({"q": {5: 1.0, "5": 2.0}})


def test_dict_of_wrong_shape():
    with pytest.raises(InputError, match="mapping"):
        qrels_from_dict([("q", {"d": 1})])
    with pytest.raises(InputError, match="topic 'q' must map docids"):
        run_from_dict({"q": [("d", 1.0)]})


# ----------------------------------------------------------------------------- DataFrames

pd = pytest.importorskip("pandas")


def test_qrels_from_dataframe():
    df = pd.DataFrame({"query_id": [1, 2, 1], "doc_id": ["a", "b", "c"],
                       "relevance": [1, 2, -1], "other": ["x", "y", "z"]})
    q = qrels_from_dataframe(df)
    assert q.topics == ("1", "2") and q.offsets.tolist() == [0, 2, 3]
    assert q.docnos.tolist() == ["a", "c", "b"] and q.relevance.tolist() == [1.0, -1.0, 2.0]
    assert q.source == "<DataFrame>" and q.lines is None


def test_run_from_dataframe_with_nullable_and_object_columns():
    df = pd.DataFrame({"query_id": pd.array(["q1", "q1"], dtype="string"),
                       "doc_id": [10, 11], "score": pd.array([3, 4], dtype="Int64")})
    r = run_from_dataframe(df)
    assert r.topics == ("q1",) and r.docnos.tolist() == ["10", "11"]
    assert r.scores.tolist() == [3.0, 4.0] and r.tag == ""
    mixed = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": pd.Series([2.5], dtype=object)})
    assert run_from_dataframe(mixed).scores.tolist() == [2.5]


def test_dataframe_missing_columns_are_listed():
    with pytest.raises(InputError) as excinfo:
        qrels_from_dataframe(pd.DataFrame({"query_id": [1], "document": ["a"], "grade": [1]}))
    assert "['doc_id', 'relevance']" in str(excinfo.value)
    assert isinstance(excinfo.value, ValueError)


@pytest.mark.parametrize("frame, words", [
    ({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]},
     ["row 1", "'b'", "NaN"]),
    ({"query_id": ["q", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     ["query_id is missing at row 1"]),
    ({"query_id": ["q"], "doc_id": ["a"], "score": [True]}, ["boolean"]),
    ({"query_id": ["q"], "doc_id": ["a"], "score": ["1.0"]}, ["row 0", "str"]),
])
def test_bad_dataframes(frame, words):
    with pytest.raises(InputError) as excinfo:
        run_from_dataframe(pd.DataFrame(frame))
    for word in words:
        assert word in str(excinfo.value)


def test_dataframe_infinite_relevance():
    with pytest.raises(InputError, match="infinite"):
        qrels_from_dataframe(pd.DataFrame({"query_id": [1], "doc_id": ["a"], "relevance": [np.inf]}))


def test_dataframe_duplicates_policy():
    df = pd.DataFrame({"query_id": ["q", "r", "q"], "doc_id": ["a", "a", "a"], "score": [1, 2, 3]})
    with pytest.raises(InputError) as excinfo:
        run_from_dataframe(df)
    assert "duplicate doc_id 'a' in query_id 'q': rows 0 and 2" in str(excinfo.value)
    with pytest.warns(DuplicatesDroppedWarning, match="dropped 1"):
        r = run_from_dataframe(df, duplicates="first")
    assert r.to_dict() == {"q": {"a": 1.0}, "r": {"a": 2.0}}


def test_pandas_is_not_imported_by_the_module(tmp_path):
    code = "import sys, cumgain.trec_io; assert 'pandas' not in sys.modules, 'pandas imported'"
    # run from tmp_path so that the installed package is imported, not the source tree
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


# ----------------------------------------------------------------------------- dispatch

def test_load_dispatch(tmp_path):
    path = write(tmp_path, "q.txt", QRELS)
    q = read_qrels(path)
    assert load_qrels(q) is q
    assert columns(load_qrels(path)) == columns(q) == columns(load_qrels(str(path)))
    assert load_qrels({"1": {"d": 1}}).topics == ("1",)
    df = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [1]})
    assert load_qrels(df).source == "<DataFrame>"
    r = run_from_dict({"1": {"d": 1}})
    assert load_run(r) is r
    assert load_run(pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1]})).topics == ("1",)
    with pytest.raises(InputError, match="got a Run"):
        load_qrels(r)
    with pytest.raises(InputError, match="got Qrels"):
        load_run(q)
    with pytest.raises(InputError, match="list"):
        load_run([("1", "d", 1.0)])
    with pytest.raises(InputError, match="duplicates"):
        load_run(r, duplicates="all")


# ----------------------------------------------------------------------------- real data

@pytest.mark.skipif(not (REAL / "qrels" / "qrels.dl19-passage.txt").exists(),
                    reason="../shared/data/real is absent")
def test_real_dl19_qrels_and_run():
    # topic, line and grade counts from ../shared/data/real/README.md
    q = read_qrels(REAL / "qrels" / "qrels.dl19-passage.txt")
    assert len(q.topics) == 43 and len(q.docnos) == 9260 and q.lines[-1] <= 9260
    grades, counts = np.unique(q.relevance, return_counts=True)
    assert dict(zip(grades.tolist(), counts.tolist())) == {0: 5158, 1: 1601, 2: 1804, 3: 697}
    r = read_run(REAL / "runs" / "run.msmarco-v1-passage.bm25-default.dl19.txt")
    assert len(r.topics) == 43 and len(r.docnos) == 43000 and r.tag == "Anserini"
    assert np.diff(r.offsets).tolist() == [1000] * 43
    assert set(r.topics) == set(q.topics)


@pytest.mark.skipif(not (REAL / "qrels" / "qrels.covid-complete.txt").exists(),
                    reason="../shared/data/real is absent")
@pytest.mark.parametrize("name, topics, lines, grades", [
    ("qrels.covid-complete.txt", 50, 69318, {-1: 2, 0: 42652, 1: 11055, 2: 15609}),
    ("qrels.web.201-250.txt", 50, 14474, {-2: 234, 0: 10090, 1: 3044, 2: 920, 3: 179, 4: 7}),
])
def test_real_qrels_with_negative_grades_and_fractional_iter(name, topics, lines, grades):
    q = read_qrels(REAL / "qrels" / name)
    assert len(q.topics) == topics and len(q.docnos) == lines
    values, counts = np.unique(q.relevance, return_counts=True)
    assert dict(zip(values.tolist(), counts.tolist())) == grades


@pytest.mark.skipif(not (REAL / "runs" / "robust03" / "input.NLPR03vb10.gz").exists(),
                    reason="../shared/data/real is absent")
def test_real_gzipped_robust03_run():
    r = read_run(REAL / "runs" / "robust03" / "input.NLPR03vb10.gz")
    assert len(r.topics) == 100 and len(r.docnos) == 1004 and r.tag == "NLPR03vb10"
