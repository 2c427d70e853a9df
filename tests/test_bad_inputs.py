"""The catalogue of bad inputs (docs/reliability.md): one test per class.

Each class either ends in a typed exception (a ``FormatError``, so a ``ValueError``)
that names the file and the line, or is accepted with a documented meaning. Every
case goes through ``cumgain.evaluate`` on files, which takes the native reader
(``cgcore._trec``), and through the reference reader
(:mod:`cumgain.reference.reading`): both must raise the same error, or give the same
numbers.
"""
import gzip
import os
import re
import warnings

import numpy as np
import pytest

from cgcore import _vectors
from cumgain import TopicsWarning, evaluate, trec_io
from cumgain.reference import reading as reference_reading
from cumgain.exceptions import FormatError, InputError
from cumgain.trec_io import DuplicatesDroppedWarning, read_qrels, read_run

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\n"
RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.8 t\nq1 Q0 d3 3 0.7 t\nq2 Q0 d1 1 0.5 t\n"
MEASURES = ["num_ret", "num_rel_ret", "map", "P_1", "ndcg"]


def write(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def files(tmp_path, qrels=QRELS, run=RUN):
    tmp_path.mkdir(exist_ok=True)
    return write(tmp_path / "qrels.txt", qrels), write(tmp_path / "run.txt", run)


def evaluate_quietly(qrels, run, measures=MEASURES, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        return evaluate(qrels, run, measures, **options)


def expect_error(tmp_path, qrels, run, bad_file, line, words, **options):
    """The evaluation fails with a FormatError naming ``bad_file`` and ``line``, the
    same from the native and the reference reader."""
    qrels_path, run_path = files(tmp_path, qrels, run)
    with pytest.raises(FormatError) as error:
        evaluate(qrels_path, run_path, MEASURES, **options)
    with pytest.raises(FormatError) as reference:
        reference_reading.evaluate(qrels_path, run_path, MEASURES, **options)
    assert str(error.value) == str(reference.value)
    path = qrels_path if bad_file == "qrels" else run_path
    assert error.value.path == str(path)
    assert error.value.line_number == line
    assert isinstance(error.value, ValueError)
    assert str(error.value).startswith(f"{path}:{line}:" if line else f"{path}:")
    assert words in str(error.value)


def same_both_ways(qrels_path, run_path, **options):
    """Native and reference readers agree; returns the evaluation."""
    native = evaluate_quietly(qrels_path, run_path, **options)
    with reference_reading.using_reference_reader():
        reference = evaluate_quietly(qrels_path, run_path, **options)
    assert native.topics == reference.topics
    for name in native.values:
        np.testing.assert_array_equal(native.values[name], reference.values[name])
    return native


# ------------------------------------------------------------------ fields

@pytest.mark.parametrize("qrels, run, bad_file, line, words", [
    (QRELS, "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.8\n", "run", 2,
     "expected at least 6 fields (qid iter docno rank score tag), found 5"),
    ("q1 0 d1 2\nq1 0 d2\n", RUN, "qrels", 2, "expected 4 fields (qid iter docno rel), found 3"),
    ("q1 0 d1 2 extra\n", RUN, "qrels", 1, "expected 4 fields (qid iter docno rel), found 5"),
], ids=["run-5-fields", "qrels-3-fields", "qrels-5-fields"])
def test_wrong_field_counts_are_errors(tmp_path, qrels, run, bad_file, line, words):
    expect_error(tmp_path, qrels, run, bad_file, line, words)


def test_run_fields_after_the_tag_are_ignored_as_in_trec_eval(tmp_path):
    qrels_path, run_path = files(tmp_path, run=RUN.replace(" t\n", " t extra words\n"))
    result = same_both_ways(qrels_path, run_path)
    plain = same_both_ways(*files(tmp_path / "plain"))
    assert result.means == plain.means and result.run_tag == "t"


# ------------------------------------------------------------------ numbers

@pytest.mark.parametrize("qrels, run, bad_file, line, words", [
    (QRELS, "q1 Q0 d1 1 high t\n", "run", 1, "score 'high' is not a number"),
    (QRELS, "q1 Q0 d1 1 0x10 t\n", "run", 1, "score '0x10' is not a number"),
    ("q1 0 d1 yes\n", RUN, "qrels", 1, "relevance 'yes' is not a number"),
    (QRELS, "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 nan t\n", "run", 2,
     "score 'nan' is NaN, which leaves the ranking undefined"),
    ("q1 0 d1 NaN\n", RUN, "qrels", 1, "relevance 'NaN' is NaN"),
    ("q1 0 d1 inf\n", RUN, "qrels", 1, "relevance 'inf' is infinite"),
], ids=["run-word", "run-hex", "qrels-word", "run-nan", "qrels-nan", "qrels-inf"])
def test_non_numbers_nan_and_infinite_relevance_are_errors(tmp_path, qrels, run, bad_file,
                                                           line, words):
    expect_error(tmp_path, qrels, run, bad_file, line, words)


def test_infinite_scores_are_ranked_first_and_last(tmp_path):
    run = "q1 Q0 d2 1 -inf t\nq1 Q0 d1 2 inf t\nq1 Q0 d3 3 0 t\n"
    result = same_both_ways(*files(tmp_path, run=run))
    # order d1 (+inf, rel 2), d3 (rel 1), d2 (-inf, rel 0): both relevant on top
    assert result.values["map"][0] == 1.0 and result.values["P_1"][0] == 1.0


# ------------------------------------------------------------------ lines

def test_blank_lines_are_skipped_in_runs(tmp_path):
    result = same_both_ways(*files(tmp_path, run="\n  \n" + RUN.replace("\n", "\n\n", 1)))
    assert result.means["num_ret"] == 4


def test_blank_lines_are_errors_in_qrels_as_in_trec_eval(tmp_path):
    expect_error(tmp_path, "q1 0 d1 2\n\nq1 0 d2 0\n", RUN, "qrels", 2, "blank line")


def test_comment_lines_are_skipped_in_both(tmp_path):
    qrels = "# judged by X\n" + QRELS + "  # indented\n"
    run = "# run made by Y\n" + RUN
    result = same_both_ways(*files(tmp_path, qrels, run))
    expected = same_both_ways(*files(tmp_path / "plain"))
    for name in MEASURES:
        np.testing.assert_array_equal(result.values[name], expected.values[name])


def test_crlf_reads_like_lf(tmp_path):
    crlf = same_both_ways(*files(tmp_path, QRELS.replace("\n", "\r\n"), RUN.replace("\n", "\r\n")))
    lf = same_both_ways(*files(tmp_path / "plain"))
    assert crlf.means == lf.means


@pytest.mark.parametrize("qrels, run, bad_file, line", [
    (QRELS, RUN.replace("\n", "\r"), "run", 1),
    (QRELS.replace("\n", "\r"), RUN, "qrels", 1),
    (QRELS, "q1 Q0 d1 1 0.9 t\n\rq1 Q0 d2 2 0.8 t\n", "run", 2),
    (QRELS, "# a comment\rq1 Q0 d1 1 0.9 t\n", "run", 1),
], ids=["run-cr-only", "qrels-cr-only", "run-lfcr", "comment-then-cr"])
def test_a_carriage_return_inside_a_line_is_an_error(tmp_path, qrels, run, bad_file, line):
    """Old Mac (CR-only) line ends would make the file one line; trec_eval then reads a
    single row and silently ignores the rest. Here it is an error."""
    expect_error(tmp_path, qrels, run, bad_file, line, "carriage return inside the line")


@pytest.mark.parametrize("separator, name", [("\u2028", "U+2028 LINE SEPARATOR"),
                                             ("\u0085", "U+0085 NEXT LINE"),
                                             ("\u2029", "U+2029 PARAGRAPH SEPARATOR")])
@pytest.mark.parametrize("bad_file", ["qrels", "run"])
def test_a_unicode_line_separator_inside_a_line_is_an_error(tmp_path, separator, name,
                                                           bad_file):
    """Two records joined by U+2028 (or NEL, or U+2029) are one line to trec_eval (lines
    end at \\n, fields split on C isspace, which knows none of them): in a run the
    second record would be fields after the tag, silently lost. Refused, naming the
    line and the column, on both paths."""
    if bad_file == "run":
        qrels, run = QRELS, "q1 Q0 d1 1 0.9 t" + separator + "q1 Q0 d2 2 0.8 t\n" + RUN[34:]
        column = len("q1 Q0 d1 1 0.9 t") + 1
    else:
        qrels, run = "q1 0 d1 2" + separator + "q1 0 d2 0\n" + QRELS[20:], RUN
        column = len("q1 0 d1 2") + 1
    expect_error(tmp_path, qrels, run, bad_file, 1, f"{name} at column {column}: only \\n ends a "
                 f"line, so the rest would be read as more fields of this one")


@pytest.mark.parametrize("run, line", [
    (RUN.replace("q1 Q0 d2 2", "q1 Q0 d 2 2"), 2),         # docno "d 2"
    ("q1 Q0 d 1 1 0.9 t\n" + RUN[17:], 1),                  # ... on the first line
], ids=["docno-with-a-space", "on-the-first-line"])
def test_a_docno_with_a_space_is_an_error(tmp_path, run, line):
    """trec_eval splits at whitespace and ignores fields after the tag, so a docno with a
    space in it shifts the columns by one: its rank is read as the score and its score
    as the tag, silently. Fields after a tag that is a number are an error naming the
    line; words after a tag that is not (trec_eval's own test files have them) are
    ignored."""
    expect_error(tmp_path, QRELS, run, "run", line, "is a number and 1 more field(s) follow "
                 "it: the columns of a docno with a space in it, shifted by one")


def _compressed(name: str, data: bytes) -> bytes:
    import bz2
    import io
    import lzma
    import zipfile
    if name == "bzip2":
        return bz2.compress(data)
    if name == "xz":
        return lzma.compress(data)
    if name == "zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("run.txt", data)
        return buffer.getvalue()
    if name == "gzip twice":
        return gzip.compress(gzip.compress(data))
    if name == "bzip2 inside gzip":
        return gzip.compress(bz2.compress(data))
    magic = {"zstd": b"\x28\xb5\x2f\xfd", "7z": b"7z\xbc\xaf\x27\x1c",
             "lz4": b"\x04\x22\x4d\x18", "compress": b"\x1f\x9d\x90"}[name]
    return magic + bytes(range(256))        # (a header is all the readers look at)


@pytest.mark.parametrize("name", ["bzip2", "xz", "zip", "zstd", "7z", "lz4", "compress",
                                  "gzip twice", "bzip2 inside gzip"])
@pytest.mark.parametrize("bad_file", ["qrels", "run"])
def test_a_file_compressed_otherwise_than_with_gzip_says_so(tmp_path, name, bad_file):
    """Told by its magic bytes (at the start, or at the start of a gzip file's content),
    on both paths: not "not valid UTF-8" at line 1."""
    qrels, run = QRELS, RUN
    if bad_file == "qrels":
        qrels = _compressed(name, QRELS.encode())
    else:
        run = _compressed(name, RUN.encode())
    if name == "gzip twice":
        words = "compressed with gzip twice, not supported: gunzip it once first"
    elif name == "bzip2 inside gzip":
        words = "compressed with bzip2 inside gzip, not supported"
    else:
        words = f"compressed with {name}, not supported: decompress it first"
    expect_error(tmp_path, qrels, run, bad_file, 0, words)


def test_a_topic_that_looks_like_a_magic_number_is_a_topic(tmp_path):
    qrels = QRELS.replace("q1", "BZh9")
    run = RUN.replace("q1", "BZh9")
    result = same_both_ways(*files(tmp_path, qrels, run))
    assert result.topics == ("BZh9", "q2")


def test_final_line_without_newline_is_read(tmp_path):
    result = same_both_ways(*files(tmp_path, QRELS.rstrip("\n"), RUN.rstrip("\n")))
    assert result.means["num_ret"] == 4


@pytest.mark.slow
def test_a_line_longer_than_any_buffer(tmp_path, monkeypatch):
    """A 40 MiB docno, under a limit raised to 64 MiB: forty times the native reader's
    1 MiB block, read whole, in linear time (the pieces are joined once)."""
    monkeypatch.setattr(trec_io, "MAX_LINE_BYTES", 64 << 20)
    long_docno = "x" * (40 << 20)
    qrels = QRELS + f"q1 0 {long_docno} 3\n"
    run = f"q1 Q0 {long_docno} 1 1.5 t\n" + RUN
    result = same_both_ways(*files(tmp_path, qrels, run))
    assert result.values["P_1"][0] == 1.0 and result.values["num_rel_ret"][0] == 3


@pytest.mark.parametrize("how", ["constant", "environment"])
@pytest.mark.parametrize("where", ["middle", "last line, no newline"])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("bad_file", ["qrels", "run"])
def test_a_line_longer_than_the_limit_is_an_error_naming_it(tmp_path, monkeypatch, how, where,
                                                            gz, bad_file):
    """The limit (cumgain.trec_io.MAX_LINE_BYTES, else CUMGAIN_MAX_LINE_BYTES, else
    1 MiB) bounds what a line may cost; a line of exactly the limit is read, one byte
    more is an error naming the line, on both paths (the native one steps aside)."""
    if how == "constant":
        monkeypatch.setattr(trec_io, "MAX_LINE_BYTES", 100)
    else:
        monkeypatch.setenv("CUMGAIN_MAX_LINE_BYTES", "100")
    fits = "q1 Q0 " + "x" * 86 + " 9 0.1 t"             # 100 bytes
    too_long = "q1 Q0 " + "y" * 87 + " 9 0.1 t"         # 101 bytes
    if bad_file == "qrels":
        fits, too_long = "q1 0 " + "x" * 93 + " 1", "q1 0 " + "y" * 94 + " 1"
    assert (len(fits), len(too_long)) == (100, 101)
    good = (QRELS if bad_file == "qrels" else RUN) + fits + "\n"
    bad = good + too_long + ("\nq2 Q0 d2 1 0.1 t\n" if bad_file == "run" else "\nq2 0 d2 1\n") \
        if where == "middle" else good + too_long
    line = good.count("\n") + 1

    def data(text):
        return gzip.compress(text.encode()) if gz else text

    qrels, run = (data(bad), RUN) if bad_file == "qrels" else (QRELS, data(bad))
    expect_error(tmp_path, qrels, run, bad_file, line, "line longer than 100 bytes")
    fine = (data(good), RUN) if bad_file == "qrels" else (QRELS, data(good))
    same_both_ways(*files(tmp_path / "fits", *fine))


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("bad_file", ["qrels", "run"])
def test_a_file_of_nul_bytes_is_refused_at_line_1_in_bounded_memory(tmp_path, gz, bad_file):
    """64 MiB of NUL bytes (the gzip case: 256 MiB in a 250 KB bomb) and no newline: the
    NUL error at line 1 once the first line passes the limit, holding a few MiB (the
    native reader once doubled its buffer to the whole file, then the reference reader
    read it all again: 1 GiB took 17.6 s and 3.1 GB)."""
    import tracemalloc
    if gz:
        data = gzip.compress(b"\0" * (256 << 20), compresslevel=1)
    else:
        data = b"\0" * (64 << 20)
    qrels, run = (data, RUN) if bad_file == "qrels" else (QRELS, data)
    tracemalloc.start()
    try:
        expect_error(tmp_path, qrels, run, bad_file, 1, "NUL byte in the line")
        qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
        with pytest.raises(FormatError, match=":1: NUL byte"):
            (read_qrels if bad_file == "qrels" else read_run)(
                qrels_path if bad_file == "qrels" else run_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (16 << 20) + len(data), f"peak {peak / 2 ** 20:.1f} MiB"
    assert peak - len(data) < 16 << 20


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.skipif(_vectors.SANITIZED, reason="under ASan (which reserves terabytes of "
                    "address space for its shadow) RLIMIT_AS cannot be set")
def test_dev_zero_as_a_run_is_refused_at_line_1(tmp_path):
    """/dev/zero never ends: refused at its first line (the reference reader, which
    takes what is not a regular file, once grew to 2.3 GB in 4 s). In a fresh process
    whose address space may grow by 1 GiB only, the command line prints one line."""
    import resource
    import subprocess
    import sys
    qrels_path, _ = files(tmp_path)
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))\n"
            "from cumgain.cli import main\n"
            "sys.exit(main(['evaluate', sys.argv[1], '/dev/zero', '-m', 'map']))\n")
    assert resource.getrlimit(resource.RLIMIT_AS)[0] in (resource.RLIM_INFINITY, -1) \
        or resource.getrlimit(resource.RLIMIT_AS)[0] > 3 << 30
    completed = subprocess.run([sys.executable, "-c", code, str(qrels_path)],
                               capture_output=True, text=True, timeout=120, cwd=tmp_path,
                               env={**os.environ, "MALLOC_ARENA_MAX": "1"})
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert completed.stderr.startswith(
        "cumgain evaluate: error: /dev/zero:1: NUL byte in the line"), completed.stderr[-2000:]
    assert completed.stderr.count("\n") == 1


# ------------------------------------------------------------------ duplicates, empty files

@pytest.mark.parametrize("qrels, run, bad_file, line", [
    (QRELS, RUN + "q2 Q0 d1 2 0.1 t\n", "run", 5),
    (QRELS + "q1 0 d1 0\n", RUN, "qrels", 5),
], ids=["run", "qrels"])
def test_duplicate_documents_are_errors_naming_both_lines(tmp_path, qrels, run, bad_file, line):
    expect_error(tmp_path, qrels, run, bad_file, line, "duplicate docno 'd1'")
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    with pytest.warns(DuplicatesDroppedWarning):
        kept = evaluate_quietly(qrels_path, run_path, duplicates="first")
    assert kept.means["num_ret"] == 4


@pytest.mark.parametrize("qrels, run, bad_file, words", [
    (QRELS, "", "run", "no results (the file has no data lines)"),
    ("", RUN, "qrels", "no judgments (the file has no data lines)"),
    (QRELS, "# only a comment\n\n", "run", "no results"),
    ("# only a comment\n", RUN, "qrels", "no judgments"),
], ids=["run-empty", "qrels-empty", "run-comments-only", "qrels-comments-only"])
def test_files_without_data_lines_are_errors(tmp_path, qrels, run, bad_file, words):
    expect_error(tmp_path, qrels, run, bad_file, 0, words)


# ------------------------------------------------------------------ topics

def test_topics_with_no_or_only_negative_judgments_score_zero_and_count(tmp_path):
    qrels = QRELS + "q3 0 d1 -1\nq3 0 d2 -2\nq4 0 d1 0\n"
    run = RUN + "q3 Q0 d1 1 0.5 t\nq4 Q0 d1 1 0.5 t\n"
    result = same_both_ways(*files(tmp_path, qrels, run))
    assert result.topics == ("q1", "q2", "q3", "q4")
    for name in ("map", "P_1", "ndcg"):
        assert result.values[name][2] == 0 and result.values[name][3] == 0


def test_run_topics_without_judgments_are_reported_not_evaluated(tmp_path):
    qrels_path, run_path = files(tmp_path, run=RUN + "q9 Q0 d1 1 0.5 t\n")
    with pytest.warns(TopicsWarning, match="1 run topics have no judgments"):
        result = evaluate(qrels_path, run_path, MEASURES)
    assert result.run_only_topics == ("q9",) and "q9" not in result.topics


def test_qrels_topics_absent_from_the_run_are_reported_and_skipped_or_zero(tmp_path):
    qrels_path, run_path = files(tmp_path, qrels=QRELS + "q7 0 d1 1\n")
    with pytest.warns(TopicsWarning, match="1 qrels topics are missing from the run"):
        skipped = evaluate(qrels_path, run_path, MEASURES)
    assert skipped.missing_topics == ("q7",) and skipped.topics == ("q1", "q2")
    with pytest.warns(TopicsWarning, match="score 0"):
        zero = evaluate(qrels_path, run_path, MEASURES, topics="qrels")
    assert zero.topics == ("q1", "q2", "q7") and zero.values["map"][2] == 0
    assert zero.means["map"] == pytest.approx(skipped.means["map"] * 2 / 3, rel=1e-15)


def test_interleaved_run_topics_are_accepted(tmp_path):
    lines = RUN.splitlines(keepends=True)
    result = same_both_ways(*files(tmp_path, run="".join([lines[0], lines[3]] + lines[1:3])))
    assert result.means["num_ret"] == 4


# ------------------------------------------------------------------ bytes

@pytest.mark.parametrize("qrels, run, bad_file, line, words", [
    (QRELS, b"q1 Q0 d1 1 0.9 t\nq1 Q0 d\xff2 2 0.8 t\n", "run", 2,
     "not valid UTF-8: byte 0xff at column 8"),
    (b"q1 0 \xc3(1 2\n", RUN, "qrels", 1, "not valid UTF-8: byte 0xc3 at column 6"),
    (QRELS, "q1 Q0 d1 1 0.9 t\nq1 Q0 d\x002 2 0.8 t\n", "run", 2, "NUL byte"),
], ids=["run-0xff", "qrels-bad-sequence", "run-nul"])
def test_non_utf8_and_nul_bytes_are_errors(tmp_path, qrels, run, bad_file, line, words):
    expect_error(tmp_path, qrels, run, bad_file, line, words)


def test_a_truncated_gzip_names_the_last_complete_line(tmp_path):
    data = gzip.compress(RUN.encode() * 2000, mtime=0)
    qrels_path, run_path = files(tmp_path, run=data[: len(data) // 2])
    with pytest.raises(FormatError, match="truncated or corrupt gzip data after line") as error:
        evaluate(qrels_path, run_path, MEASURES, duplicates="first")
    assert error.value.path == str(run_path) and error.value.line_number > 0


def test_a_gzipped_run_reads_like_the_plain_one(tmp_path):
    qrels_path, run_path = files(tmp_path, run=gzip.compress(RUN.encode()))
    plain = same_both_ways(*files(tmp_path / "plain"))
    assert same_both_ways(qrels_path, run_path).means == plain.means


# ------------------------------------------------------------------ a file over 2 GiB

@pytest.mark.skipif(not os.environ.get("CUMGAIN_BIG_TESTS"),
                    reason="writes a 2.3 GB file; set CUMGAIN_BIG_TESTS=1")
def test_a_run_file_over_two_gigabytes(tmp_path):
    """No 32-bit offset anywhere: 2.3 GB, 40,000 topics x 1,000 documents whose
    expected values follow from the construction (d0..d9 relevant, ranked first)."""
    n_topics, depth, padding = 40_000, 1_000, "p" * 32
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    with open(qrels_path, "w") as qrels:
        for t in range(n_topics):
            qrels.write("".join(f"t{t} 0 d{i} 1\n" for i in range(10)))
    ranks = [f"Q0 d{i}{padding} {i + 1} {depth - i} run\n" for i in range(depth)]
    ranks[:10] = [f"Q0 d{i} {i + 1} {depth - i} run\n" for i in range(10)]
    block = "".join(ranks)
    with open(run_path, "w") as run:
        for t in range(n_topics):
            run.write(f"t{t} " + f"t{t} ".join(block.splitlines(keepends=True)))
    assert os.path.getsize(run_path) > 2 ** 31
    result = evaluate(qrels_path, run_path, ["num_ret", "num_rel_ret", "map", "P_10", "P_20"])
    assert result.means["num_ret"] == n_topics * depth
    assert result.means["num_rel_ret"] == n_topics * 10
    assert result.means["map"] == 1.0 and result.means["P_10"] == 1.0
    assert result.means["P_20"] == 0.5


def test_a_duplicate_in_an_interleaved_qrels_topic_the_run_lacks(tmp_path):
    """Found by the fuzzer: topic q2's lines are apart and q2 is not in the run; the
    duplicate must still be found (the native reader once compared q2's docnos with
    q1's rows and accepted the file)."""
    qrels = "q1 0 f1 2\nq2 0 d1 0\nq1 0 d3 1\nq2 0 d1 1\n"
    expect_error(tmp_path, qrels, "q1 Q0 a 1 0.9 t\n", "qrels", 4, "duplicate docno 'd1' in topic 'q2'")


# ------------------------------------------------------------------ trec_eval's other inputs

def test_judgment_groups_follow_the_qrels_rules(tmp_path):
    """qrels_jg files: the qrels file rules; a docno twice in one group is an error
    naming both lines, in two groups it is not."""
    from cumgain.engine.judgment_groups import load_judgment_groups
    good = write(tmp_path / "good", "q1 a d1 1\nq1 b d1 0\n# comment\nq1 a d2 0\n")
    assert load_judgment_groups(good).groups == ("a", "b")
    for text, line, words in (("q1 a d1 1\nq1 a d1 0\n", 2, "lines 1 and 2"),
                              ("q1 a d1\n", 1, "expected 4 fields"),
                              ("q1 a d1 x\n", 1, "is not a number"),
                              ("q1 a d1 1\n\n", 2, "blank line")):
        path = write(tmp_path / "jg", text)
        with pytest.raises(FormatError) as error:
            load_judgment_groups(path)
        assert error.value.line_number == line and words in str(error.value)


@pytest.mark.parametrize("text, line, words", [
    ("1 map 0.5\n", 1, "expected 4 fields"),
    ("1 map 0.5 0.1 x\n", 1, "expected 4 fields"),
    ("1 map high 0.1\n", 1, "mean and stddev must be numbers"),
    ("1 map 0.5 0.1\n\n1 map 0.4 0.1\n", 3, "given twice"),
    (b"1 map 0.5 \xff\n", 1, "not valid UTF-8"),
])
def test_zscores_files(tmp_path, text, line, words):
    from cumgain.analysis.zscores import read_zscores
    path = write(tmp_path / "z", text)
    with pytest.raises(FormatError) as error:
        read_zscores(path)
    assert error.value.line_number == line and words in str(error.value)
    assert read_zscores(write(tmp_path / "ok", "1 map nan inf\n")) != {}


# ------------------------------------------------------------------ numbers beyond their range

@pytest.mark.parametrize("options, fragment", [
    ({"depth": 2 ** 63}, "depth must be an integer >= 0 (at most 2**53 - 1"),
    ({"depth": 2 ** 53}, "depth must be an integer >= 0 (at most 2**53 - 1"),
    ({"threads": 2 ** 31}, "threads must be a positive integer (at most 1024), got 2147483648"),
    ({"threads": 2 ** 63}, "threads must be a positive integer (at most 1024)"),
    ({"collection_size": 2 ** 63}, "collection_size must be an integer >= 0 (at most 2**53"),
    ({"relevance_level": 10 ** 400}, "relevance_level must be a finite number, got inf"),
    ({"relevance_level": 1e400}, "relevance_level must be a finite number, got inf"),
])
def test_numeric_options_beyond_their_range_are_input_errors(tmp_path, options, fragment):
    """depth=2**63 and threads=2**31 raised OverflowError from the C conversion (with
    files), relevance_level=10**400 an OverflowError from float()."""
    qrels_path, run_path = files(tmp_path)
    with pytest.raises(InputError, match=re.escape(fragment)):
        evaluate(qrels_path, run_path, MEASURES, **options)


def test_the_largest_depth_is_no_cut(tmp_path):
    qrels_path, run_path = files(tmp_path)
    assert evaluate_quietly(qrels_path, run_path, depth=2 ** 53 - 1).means == \
        evaluate_quietly(qrels_path, run_path).means


GRADED = ["ndcg", "ndcg_cut.3", "dcg", "ideal_dcg", "ndcg_rel", "Rndcg", "G", "CG@3",
          "DCG@3", "nCG@3", "nDCG@3", "avg_pos_nCG@3", "avg_pos_nDCG@3", "ndcg.1=3"]


@pytest.mark.parametrize("measure", GRADED)
@pytest.mark.parametrize("source", ["dict", "file"])
def test_gains_whose_sum_overflows_are_an_error_naming_measure_and_topic(tmp_path, measure,
                                                                         source):
    """Judgments of 1e308 (finite, so accepted) made ndcg NaN, G NaN, ndcg_rel a silent 0
    and dcg inf: every sum that leaves float64's range is a SumOverflowError naming the
    measure and the topic."""
    from cumgain.exceptions import SumOverflowError
    qrels = "q1 0 d1 1\nq2 0 d1 1e308\nq2 0 d2 1e308\nq2 0 d3 1e308\n"
    run = "q1 Q0 d1 1 0.9 t\nq2 Q0 d1 1 0.9 t\nq2 Q0 d2 2 0.8 t\nq2 Q0 d3 3 0.7 t\n"
    if source == "file":
        qrels, run = files(tmp_path, qrels, run)
    else:
        qrels = {"q1": {"d1": 1}, "q2": {"d1": 1e308, "d2": 1e308, "d3": 1e308}}
        run = {"q1": {"d1": 0.9}, "q2": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}
    with pytest.raises(SumOverflowError, match=r"measure '[^']+', topic 'q2': ") as error:
        evaluate(qrels, run, [measure])
    assert error.value.topic == "q2"
    assert "scale them down" in str(error.value)


def test_a_mean_over_topics_that_overflows_is_an_error(tmp_path):
    from cumgain.exceptions import SumOverflowError
    qrels = {"q1": {"d1": 1e308}, "q2": {"d1": 1e308}}
    run = {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}
    with pytest.raises(SumOverflowError, match="measure 'dcg': the sum of its values over the "
                                               "topics overflows float64"):
        evaluate(qrels, run, ["dcg"])
    assert evaluate(qrels, run, ["ndcg"]).means["ndcg"] == 1.0


def test_gains_near_the_top_of_float64_that_sum_within_it_are_computed():
    """No false alarm: 1e308 + 1e308 / log2(3) is finite (G, whose ideal cost sums the
    gains undiscounted, 2e308, is not)."""
    qrels = {"q1": {"d1": 1e308, "d2": 1e308}}
    run = {"q1": {"d1": 0.9, "d2": 0.8}}
    result = evaluate(qrels, run, ["dcg", "ndcg", "ndcg_rel"])
    assert result.means["dcg"] == 1e308 + 1e308 / np.log2(3)
    assert result.means["ndcg"] == result.means["ndcg_rel"] == 1.0


def test_parameters_whose_formula_overflows_are_an_error(tmp_path):
    from cumgain.exceptions import SumOverflowError
    qrels_path, run_path = files(tmp_path)
    with pytest.raises(SumOverflowError, match="measure 'utility_1e308,-1,0,0', topic 'q1'"):
        evaluate_quietly(qrels_path, run_path, ["utility.1e308,-1,0,0"])


def test_an_exponential_gain_beyond_float64_is_an_input_error(tmp_path):
    """nDCG(dcg='exp-log2') on level 1100 raised OverflowError(34)."""
    qrels_path, run_path = files(tmp_path, "q1 0 d1 1100\n", "q1 Q0 d1 1 0.9 t\n")
    with pytest.raises(InputError, match="the gain of level 1100 is beyond float64"):
        evaluate(qrels_path, run_path, ["nDCG(dcg='exp-log2')@10"])


# ------------------------------------------------------------------ system errors name the file

def _limited_file_size(limit):
    """A child process whose files may grow to ``limit`` bytes (RLIMIT_FSIZE): a write
    beyond fails with EFBIG, ``[Errno 27] File too large`` (Python ignores SIGXFSZ)."""
    import resource

    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE needs a POSIX system")
@pytest.mark.parametrize("code, what", [
    ("import cumgain.datasets as d; d.demo_collection().write_trec({out!r})", "qrels.txt"),
    ("import cumgain.stream as s; s.sort_run_by_topic({run!r}, {out!r} + '/sorted.txt')",
     "sorted.txt"),
])
def test_a_failed_write_names_the_file(tmp_path, code, what):
    """A write beyond the file size limit raised ``[Errno 27] File too large`` without
    the path: a system error names the file it was writing."""
    import subprocess
    import sys
    run_path = write(tmp_path / "run.txt", "".join(
        f"q{t % 7} Q0 d{t} {t} {1 / (t + 1)} tag\n" for t in range(2000)))
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", code.format(out=str(out), run=str(run_path))],
        capture_output=True, text=True, preexec_fn=_limited_file_size(4096), cwd=tmp_path)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("OSError: [Errno 27] File too large: ")
    assert last.endswith(what + "'")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE needs a POSIX system")
@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize("arguments, to_file, where", [
    (["demo", "--no-plot", "--data-dir", "{out}"], False, "{out}/qrels.txt: File too large"),
    (["demo", "--no-plot"], True, "standard output: File too large"),
    (["trec_eval", "-q", "-m", "all_trec", "{qrels}", "{run}"], True,
     "standard output: File too large"),
    (["evaluate", "{qrels}", "{run}", "-m", "P@1", "-m", "P@2", "-m", "map", "-m", "num_ret",
      "-m", "ndcg", "--per-topic", "-f", "json"], True,
     "standard output: File too large"),
])
def test_the_command_line_names_the_file_a_write_failed_on(tmp_path, arguments, to_file,
                                                          where, unbuffered):
    """A write beyond the file size limit printed ``[Errno 27] File too large``; under
    ``python -u`` the output was cut at the limit with exit status 0."""
    import subprocess
    import sys
    qrels_path, run_path = files(tmp_path / "in")
    values = {"out": str(tmp_path / "out"), "qrels": str(qrels_path), "run": str(run_path)}
    environment = dict(os.environ, PYTHONUNBUFFERED=unbuffered)
    with open(tmp_path / "stdout.txt" if to_file else os.devnull, "wb") as stdout:
        result = subprocess.run(
            [sys.executable, "-m", "cumgain"] + [a.format(**values) for a in arguments],
            stdout=stdout, stderr=subprocess.PIPE, text=True, env=environment,
            preexec_fn=_limited_file_size(256), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(where.format(**values))


def test_a_bad_byte_is_shown_once_and_a_binary_line_briefly(tmp_path):
    """Invalid UTF-8 is shown as \\xff (it was shown double-escaped, \\\\xff, beside
    \\x01); a binary file's first line is cut to a few hundred characters (it gave a
    1,000-character error line); a literal backslash stays one."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    bad = tmp_path / "bad.run"
    bad.write_bytes(b"q1 Q0 d\xff\x01 1 1.0 t\n")
    for reader in (evaluate, reference_reading.evaluate):
        with pytest.raises(FormatError) as error:
            reader(qrels, bad, ["map"])
        assert str(error.value).endswith(r"'q1 Q0 d\xff\x01 1 1.0 t'")
    binary = tmp_path / "binary.run"
    binary.write_bytes(bytes(range(256)) * 20)
    with pytest.raises(FormatError) as error:
        evaluate(qrels, binary, ["map"])
    assert len(str(error.value)) < 320
    slash = tmp_path / "slash.run"
    slash.write_bytes(b"q1 Q0 d\\xff 1 x t\n")
    with pytest.raises(FormatError) as error:
        evaluate(qrels, slash, ["map"])
    assert str(error.value).endswith(r"'q1 Q0 d\\xff 1 x t'")


@pytest.mark.parametrize("text", ['{"q1": {"d1": 1.0}}\n', '[{"qid": "q1"}]\n'])
def test_a_json_run_says_what_to_do(tmp_path, text):
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run.json").write_text(text)
    with pytest.raises(FormatError, match=r"this looks like JSON.*json.load the file and "
                                          r"pass the \{qid: \{docid: value\}\} dict"):
        evaluate(tmp_path / "qrels", tmp_path / "run.json", ["map"])
