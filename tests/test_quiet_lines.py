"""Blank and comment lines read 64 bytes at a time (cg_quiet_lines in cgcore/_scan.h,
through the test hook cgcore._lines.quiet_lines), the one-pass block check
(cg_text_kind), and the part starts a run's reader places among them
(cumgain.io.native.blocks, QUIET_BYTES): against a model of the parsers' line rule and
against the reference reader, which reads line by line.
"""
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cumgain
from cgcore import _lines, _trec
from cumgain import trec_io
from cumgain.engine.results import TopicsWarning
from cumgain.exceptions import FormatError
from cumgain.io.native import parts as _native_parts
from cumgain.reference import reading as reference_reading

# ------------------------------------------------------------ the scanner and its model

_PIECES = st.one_of(
    st.just(b"\n"),
    st.integers(0, 150).map(lambda n: b"#" + b"c" * n + b"\n"),     # comment lines
    st.sampled_from([b"1 Q0 d 1 2 t\n", b" # indented\n", b"x\n", b"\r\n", b"#\r\n",
                     b"# \xc3\xa9\n", b"#", b"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"]))


def _line_starts(text: bytes) -> list:
    return [0] + [i + 1 for i, byte in enumerate(text) if byte == 10]


def _quiet(line: bytes, comments: bool, max_line: int) -> bool:
    """The parsers' rule for a line (without its newline) that needs no check."""
    return line == b"" or (comments and line.startswith(b"#") and len(line) <= max_line)


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=30), st.booleans(),
       st.sampled_from([0, 63, 64, 70, 100, 4096]))
def test_quiet_lines_skips_only_quiet_lines_and_stops_where_the_model_says(pieces, comments,
                                                                           max_line):
    """What the scanner takes is whole quiet lines, counted right; where no comment line
    comes near the limit (or past it), it takes them up to the start of the line holding
    the first byte of the 64 bytes where a line is not quiet (or where fewer than 64 are
    left)."""
    text = b"".join(pieces)
    taken, lines = _lines.quiet_lines(text, comments, max_line)
    if not _trec.SIMD or max_line < 64:         # (the line loop reads everything)
        assert (taken, lines) == (0, 0)
        return
    assert taken == 0 or text[taken - 1] == 10
    assert lines == text[:taken].count(b"\n")
    assert all(_quiet(line, comments, max_line) for line in text[:taken].split(b"\n")[:-1])
    starts = _line_starts(text)
    ends = [text.find(b"\n", start) for start in starts]
    if any(comments and text[start:start + 1] == b"#"
           and (end < 0 or end - start > max_line - 64) for start, end in zip(starts, ends)):
        return                                  # a comment line near or past the limit
    first_loud = next((start for start, end in zip(starts, ends)
                       if end < 0 or not _quiet(text[start:end], comments, max_line)),
                      len(text))
    stop = min(first_loud // 64 * 64, len(text) // 64 * 64)
    assert taken == max(start for start in starts if start <= stop)


@pytest.mark.parametrize("text, kind", [(b"", 2), (b"1 Q0 d 1 2 t\n" * 9, 2),
                                        (b"a\rb" + b"x" * 40, 1), (b"x" * 40 + b"\r", 1),
                                        (b"x" * 40 + b"\x00", 0), (b"\xc3\xa9" + b"x" * 40, 0),
                                        (b"x" * 5000 + b"\r" + b"\x80", 0)])
def test_the_block_check_is_one_pass_over_ascii_nul_and_carriage_returns(text, kind):
    assert _lines.text_kind(text) == kind
    assert (kind >= 1) == _lines.ascii_no_nul(text)


# ---------------------------------------------------------- files against the reference

def _both(qrels, run, **options):
    """(native, reference): each an evaluation or the error raised."""
    results = []
    for evaluate in (cumgain.evaluate, reference_reading.evaluate):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TopicsWarning)
            try:
                results.append(evaluate(qrels, run, ["map", "num_ret", "P.5"], **options))
            except Exception as error:     # noqa: BLE001 (compared below)
                results.append(error)
    return results


def _assert_same(native, reference):
    if isinstance(reference, Exception):
        assert type(native) is type(reference) and str(native) == str(reference)
        return
    assert not isinstance(native, Exception), native
    assert native.topics == reference.topics
    for name in reference.values:
        np.testing.assert_array_equal(native.values[name], reference.values[name])


_RUN_PIECES = st.one_of(
    st.integers(0, 90).map(lambda n: ("quiet", b"#" + b"c" * n + b"\n")),
    st.integers(1, 40).map(lambda n: ("quiet", b"\n" * n)),
    st.sampled_from([("quiet", b"#\r\n"), ("quiet", b"# \xc3\xa9\n"), ("quiet", b"  # c\n")]),
    st.integers(0, 3).map(lambda topic: ("data", topic)))


@settings(max_examples=150, deadline=None)
@given(st.lists(_RUN_PIECES, min_size=1, max_size=40), st.sampled_from([1, 2]))
def test_runs_with_blank_and_comment_lines_anywhere_read_as_the_reference(
        tmp_path_factory, pieces, threads):
    """Data lines between stretches of comment lines around the line limit (80 bytes
    here), blank lines, indented comments, comments with a carriage return or UTF-8:
    the same values, or the same error, with the same line number, as the reference."""
    folder = tmp_path_factory.mktemp("quiet")
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_text("0 0 d1 1\n1 0 d2 1\n2 0 d3 1\n")
    lines, rank = [], 0
    for kind, piece in pieces:
        if kind == "data":
            rank += 1
            piece = b"%d Q0 d%d %d %d.5 t\n" % (piece, rank, rank, 100 - rank)
        lines.append(piece)
    run.write_bytes(b"".join(lines))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trec_io, "MAX_LINE_BYTES", 80)
        native, reference = _both(str(qrels), str(run), threads=threads)
    _assert_same(native, reference)


# ------------------------------------------------------------------ part starts among them

def _write(path, chunks):
    with open(path, "wb") as out:
        for chunk in chunks:
            out.write(chunk)


def test_a_file_of_comments_is_cut_into_parts_at_line_starts(tmp_path, monkeypatch):
    """A run's parts may start among blank and comment lines (QUIET_BYTES of them): a
    file with no data lines is read in parts, each from a line start; the qrels' and
    the search without ``quiet`` find no start there."""
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 16)
    path = tmp_path / "run"
    _write(path, [b"# a comment line of some length\n" * 40_000, b"\n" * 100_000])
    text = path.read_bytes()
    starts = _native_parts.part_starts(str(path), 8, quiet=True)
    assert len(starts) == 8 and starts == sorted(set(starts))
    assert all(start == 0 or text[start - 1] == 10 for start in starts)
    assert _native_parts.part_starts(str(path), 8) == [0]


@pytest.mark.parametrize("where", ["in a topic", "between topics"])
def test_a_long_stretch_of_comments_in_a_topic_is_read_as_the_reference(tmp_path, monkeypatch,
                                                                        where):
    """A part that starts among comment lines in the middle of a topic (the topic goes
    on after them) is found in two parts, and the run read again held by topic: the
    values are the reference reader's, in one thread or two; so is the line named by
    an error after the stretch."""
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 16)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"{t} 0 d{d} {d % 3}\n"
                             for t in range(4) for d in range(0, 90, 7)))
    before = b"".join(b"%d Q0 d%d %d %d t\n" % (t, d, d, 100 - d)
                      for t in range(2) for d in range(60))
    after_topic = 1 if where == "in a topic" else 2
    after = b"".join(b"%d Q0 d%d %d %d t\n" % (t, d, d, 100 - d)
                     for t in range(after_topic, 4) for d in range(60, 90))
    stretch = b"# a comment between the lines of a topic\n" * 20_000
    _write(run, [before, stretch, after])
    assert len(_native_parts.part_starts(str(run), 8, quiet=True)) > 2
    for threads in (1, 2):
        _assert_same(*_both(str(qrels), str(run), threads=threads))
    _write(run, [before, stretch, after, b"3 Q0 d99 1 x t\n"])
    native, reference = _both(str(qrels), str(run), threads=2)
    _assert_same(native, reference)
    n_lines = (before + stretch + after).count(b"\n") + 1
    assert isinstance(native, FormatError) and re.search(rf"run:{n_lines}:", str(native))


def test_a_file_of_comments_and_blank_lines_in_parts_is_the_no_data_error(tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 16)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 d1 1\n")
    _write(run, [b"# only comments\n" * 50_000, b"\n" * 300_000, b"#\n" * 10])
    for threads in (1, 2):
        native, reference = _both(str(qrels), str(run), threads=threads)
        _assert_same(native, reference)
        assert isinstance(native, FormatError) and "no data lines" in str(native)


def test_a_file_of_blank_lines_is_probed_once_for_topics_that_come_back(tmp_path,
                                                                        monkeypatch):
    """topics_come_back gives up at the first probe that meets a long stretch without
    data lines (48 probes reading 2 MiB each made such a file 40x slower to refuse)."""
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 16)
    path = tmp_path / "run"
    _write(path, [b"\n" * 3_000_000])
    probes = []
    real_probe = _native_parts._probe

    def probe(raw, x, quiet=False):
        probes.append(x)
        return real_probe(raw, x, quiet)

    monkeypatch.setattr(_native_parts, "_probe", probe)
    assert not _native_parts.topics_come_back(str(path))
    assert len(probes) == 1
