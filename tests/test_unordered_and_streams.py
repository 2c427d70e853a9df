"""Every input through the native reader: runs whose topics come back (shuffled lines,
concatenated shards, any interleaving), runs and qrels on streams (binary file objects,
gzip streams, standard input), every duplicates policy; against the pure-Python
reference reader (cumgain.reference.reading) on the same input: the same per-topic
values bit for bit, the same warnings, the same errors.
"""
import gzip
import io
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cumgain
from cgcore import _trec
from cumgain import trec_io
from cumgain.io.native import blocks as _native_blocks
from cumgain.io.native import parts as _native_parts
from cumgain.reference import reading as reference_reading
from cumgain.engine.results import TopicsWarning
from cumgain.exceptions import FormatError, InputError

MEASURES = ["num_ret", "num_rel_ret", "map", "P.2,5", "recip_rank", "ndcg", "ndcg_cut.3",
            "Rprec", "bpref", "nDCG@5(gains=exponential,discount=tois)"]
TIES = ["docno_desc", "docno_asc", "input_order", "random", "average"]
AVERAGE_OK = ["num_ret", "num_rel_ret", "P.2,5", "ndcg", "ndcg_cut.3", "Rprec"]


def measures_for(ties):
    return AVERAGE_OK if ties == "average" else MEASURES


def lines_text(lines):
    return "".join(line + "\n" for line in lines)


def evaluate_both(qrels, run, measures, **options):
    """(native, reference) evaluations, or (native error, reference error), with the
    warnings each raised; ``run`` is a callable making a fresh input (a stream can be
    read once)."""
    results = []
    for reading in (cumgain.evaluate, reference_reading.evaluate):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            given = run()
            try:
                value = reading(qrels() if callable(qrels) else qrels, given, measures,
                                **options)
            except (InputError, OSError) as error:
                value = error
            finally:
                if hasattr(given, "close"):     # a stream is the caller's to close
                    given.close()
        results.append((value, [(w.category, str(w.message)) for w in caught
                                if w.category not in (TopicsWarning, ResourceWarning)]))
    return results


def assert_same(both):
    (native, native_warnings), (reference, reference_warnings) = both
    if isinstance(reference, Exception):
        assert type(native) is type(reference), (native, reference)
        assert str(native) == str(reference)
        return
    assert not isinstance(native, Exception), native
    assert native_warnings == reference_warnings
    assert native.topics == reference.topics
    assert native.run_tag == reference.run_tag
    assert native.run_tags_agree == reference.run_tags_agree
    assert (native.run_only_topics, native.missing_topics, native.empty_qrels_topics) == \
        (reference.run_only_topics, reference.missing_topics, reference.empty_qrels_topics)
    for name in reference.values:
        np.testing.assert_array_equal(native.values[name], reference.values[name],
                                      err_msg=name)
        a, b = native.means[name], reference.means[name]
        assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), name


# ---------------------------------------------------------------- runs and interleavings

# (topics of one length that differ in their last byte, of 8 bytes or fewer and more)
topic_ids = st.sampled_from(["1", "2", "10", "q3", "q4", "é", "t" * 8, "t" * 7 + "u",
                             "t" * 9, "t" * 8 + "u"])
docnos = st.sampled_from(["d1", "d2", "d3", "d10", "D1", "abcdefgh1", "abcdefgh2", "x", "é"])
scores = st.sampled_from(["1", "0.5", "2", "1.0", "0.25", "-1", "3e0", "1.0000001"])


@st.composite
def collections(draw, duplicates=False):
    """Qrels lines and run lines (each topic's documents distinct, unless
    ``duplicates``), and an order for the run lines."""
    topics = draw(st.lists(topic_ids, min_size=1, max_size=4, unique=True))
    qrels = []
    for topic in draw(st.lists(st.sampled_from(topics), min_size=1, max_size=4, unique=True)):
        for docno in draw(st.lists(docnos, min_size=1, max_size=5, unique=True)):
            qrels.append(f"{topic} 0 {docno} {draw(st.sampled_from([0, 1, 2, 3, -1]))}")
    run = []
    for topic in topics:
        docs = draw(st.lists(docnos, min_size=1, max_size=8, unique=not duplicates))
        tag = draw(st.sampled_from(["a", "b"]))
        run += [f"{topic} Q0 {d} {r} {draw(scores)} {tag}" for r, d in enumerate(docs)]
    return qrels, run


@st.composite
def orders(draw, n):
    """An order of ``n`` run lines: as written, shuffled, or cut in shards concatenated."""
    kind = draw(st.sampled_from(["written", "shuffled", "shards", "reversed"]))
    if kind == "written":
        return list(range(n))
    if kind == "reversed":
        return list(range(n))[::-1]
    if kind == "shards":
        k = draw(st.integers(2, 4))
        return [i for s in range(k) for i in range(s, n, k)]
    return draw(st.permutations(list(range(n))))


def run_inputs(tmp_path, text):
    """Every way a run's text reaches the readers: a file (plain, gzip), a binary stream
    (BytesIO, a gzip stream, a GzipFile, a file object)."""
    data = text.encode()
    plain, packed = tmp_path / "run.txt", tmp_path / "run.txt.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    return {"path": lambda: plain, "gzip path": lambda: packed,
            "BytesIO": lambda: io.BytesIO(data),
            "gzip stream": lambda: io.BytesIO(gzip.compress(data)),
            "GzipFile": lambda: gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data))),
            "file object": lambda: open(plain, "rb")}


@pytest.mark.slow
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), ties=st.sampled_from(TIES),
       precision=st.sampled_from(["float64", "float32"]), depth=st.sampled_from([None, 2, 5]))
def test_any_order_any_input_kind_gives_the_reference_values(tmp_path, data, ties, precision,
                                                             depth):
    qrels, run = data.draw(collections())
    order = data.draw(orders(len(run)))
    run_text = lines_text([run[i] for i in order])
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text(lines_text(qrels))
    options = dict(ties=ties, score_precision=precision, depth=depth, seed=5)
    for kind, make in run_inputs(tmp_path, run_text).items():
        both = evaluate_both(qrels_path, make, measures_for(ties), **options)
        assert not isinstance(both[0][0], Exception), (kind, both[0][0])
        assert_same(both)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), duplicates=st.sampled_from(["error", "first", "last"]),
       ties=st.sampled_from(["docno_desc", "input_order", "random"]))
def test_repeated_docnos_anywhere_follow_the_policy_as_the_reference(tmp_path, data,
                                                                    duplicates, ties):
    """A docno twice in a topic, its two lines anywhere (other topics between them, in
    another shard): the same error naming both lines, or the same rows kept and the same
    warning."""
    qrels, run = data.draw(collections(duplicates=True))
    order = data.draw(orders(len(run)))
    run_text = lines_text([run[i] for i in order])
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text(lines_text(qrels))
    for kind, make in run_inputs(tmp_path, run_text).items():
        assert_same(evaluate_both(qrels_path, make, MEASURES, duplicates=duplicates,
                                  ties=ties, seed=1))


def test_a_duplicate_across_shards_is_named_by_both_lines(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 2 t\nq2 Q0 b 1 1 t\nq1 Q0 c 2 1 t\nq2 Q0 c 2 0 t\nq1 Q0 a 3 0 t\n")
    with pytest.raises(FormatError) as error:
        cumgain.evaluate(qrels, run, ["map"])
    assert str(error.value) == f"{run}:5: duplicate docno 'a' in topic 'q1': lines 1 and 5"
    with pytest.warns(trec_io.DuplicatesDroppedWarning, match="keeping the last occurrence"):
        kept_last = cumgain.evaluate(qrels, run, ["num_ret", "map"], duplicates="last")
    assert kept_last.values["map"].tolist() == [0.5, 1.0]     # a (rel) now last in q1


def _lines_at(placed: dict, n: int) -> str:
    """A run's text of ``n`` lines: the line at each numbered place (1-based), blank
    lines between."""
    return "".join(placed.get(k, "") + "\n" for k in range(1, n + 1))


@pytest.mark.parametrize("duplicates", ["error", "first", "last"])
def test_lines_far_apart_in_a_held_topic_keep_their_numbers(tmp_path, duplicates):
    """A held record keeps its line as the distance from the topic's record before it:
    2 bytes, or a marker and 8 bytes from 65535 lines on. Lines 65534, 65535 and 65536
    apart (blank lines between), and a docno repeated at the end: the same values,
    warning and error (naming both lines) as the reference reader, on every input."""
    first = 1
    gaps = [65534, 65535, 65536, 1, 70000]
    q1_lines = [first]
    for gap in gaps:
        q1_lines.append(q1_lines[-1] + gap)
    docs = ["a", "b", "c", "d", "e", "a"]           # (the last repeats the first)
    placed = {line: f"q1 Q0 {doc} {k} {6 - k} t" for k, (line, doc)
              in enumerate(zip(q1_lines, docs))}
    placed[2] = "q2 Q0 x 1 1 t"                   # (q1 comes back after q2: held)
    placed[q1_lines[-1] + 2] = "q2 Q0 y 2 0 t"
    text = _lines_at(placed, q1_lines[-1] + 2)
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 c 2\nq1 0 e 1\nq2 0 y 1\n")
    for kind, make in run_inputs(tmp_path, text).items():
        both = evaluate_both(qrels_path, make, MEASURES, duplicates=duplicates,
                             ties="input_order")
        assert_same(both)
        if duplicates == "error":
            assert str(both[0][0]).endswith(
                f"duplicate docno 'a' in topic 'q1': lines 1 and {q1_lines[-1]}"), kind


def test_thousands_of_short_and_long_topics_in_no_order_are_told_apart(tmp_path):
    """Topics of 1 to 8 bytes are found by their bytes as one word (a table that grows
    as topics come), longer ones by their hash: 1,915 topics, many one byte apart or
    a prefix of another ("7", "70", "700", "7000000", "70000000", "700000000"), the
    lines shuffled: the reference's topics and values."""
    rng = np.random.default_rng(11)
    topics = sorted({str(t) for t in rng.integers(0, 10 ** 9, 900)}
                    | {"7" + "0" * k for k in range(9)} | {f"q{t}" for t in range(300)}
                    | {"abcdefg" + c for c in "xyz"} | {"abcdefgh" + c for c in "xyz"}
                    | {f"topic-{t:04d}" for t in range(700)})
    run = [f"{t} Q0 d{d} {d} {rng.integers(0, 9)} r" for t in topics for d in range(3)]
    qrels = [f"{t} 0 d{rng.integers(0, 3)} {rng.integers(0, 3)}" for t in topics]
    (tmp_path / "qrels.txt").write_text(lines_text(qrels))
    (tmp_path / "run.txt").write_text(lines_text([run[i] for i in rng.permutation(len(run))]))
    both = evaluate_both(tmp_path / "qrels.txt", lambda: tmp_path / "run.txt", MEASURES)
    assert_same(both)
    assert sorted(both[0][0].topics) == topics


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("order", ["shuffled", "shards"])
def test_unordered_files_in_parts_give_the_same_values_in_any_number_of_threads(
        tmp_path, monkeypatch, threads, order):
    """A run held by topic and read in parts (parts of a few lines: every part boundary
    inside a topic), ranked in parts by several threads."""
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    monkeypatch.setattr(_trec, "HELD_RECORDS_PER_PART", 7)
    rng = np.random.default_rng(4)
    topics = [f"t{t}" for t in range(30)]
    run = [f"{t} Q0 d{d} {d} {rng.integers(0, 6) / 2} r" for t in topics for d in range(25)]
    qrels = [f"{t} 0 d{d} {rng.integers(0, 3)}" for t in topics for d in range(0, 25, 3)]
    idx = rng.permutation(len(run)) if order == "shuffled" else \
        [i for s in range(4) for i in range(s, len(run), 4)]
    (tmp_path / "qrels.txt").write_text(lines_text(qrels))
    (tmp_path / "run.txt").write_text(lines_text([run[i] for i in idx]))
    for ties in ("docno_desc", "input_order"):
        both = evaluate_both(tmp_path / "qrels.txt", lambda: tmp_path / "run.txt", MEASURES,
                             ties=ties, threads=threads)
        assert_same(both)
    (tmp_path / "sorted.txt").write_text(lines_text(run))     # (docno ties: the order of
    written = cumgain.evaluate(tmp_path / "qrels.txt", tmp_path / "sorted.txt", MEASURES)
    moved = cumgain.evaluate(tmp_path / "qrels.txt", tmp_path / "run.txt", MEASURES,
                             threads=threads)                   # the lines does not matter)
    for name in written.values:
        np.testing.assert_array_equal(moved.values[name], written.values[name])


def _scores(kind: str, n: int, rng) -> list:
    """Scores of one topic as text, of a shape the sort of a topic not in score order
    (buckets of key ranges, a crowded bucket radix sorted) must get right."""
    if kind == "spread":                        # a retrieval model's: about one a bucket
        return [f"{x:.2f}" for x in rng.uniform(5, 25, n)]
    if kind == "few values":                    # long ties: crowded buckets
        return [str(x) for x in rng.integers(0, 4, n)]
    if kind == "outliers":                      # one bucket holds nearly all of them
        return [repr(float(x)) for x in [1e300, -1e300, *rng.normal(0, 1, n - 2)]]
    if kind == "every magnitude":
        signs, powers = rng.choice([-1, 1], n), rng.integers(-1070, 1020, n)
        return [repr(float(x)) for x in signs * 2.0 ** powers]
    if kind == "infinities and zeros":
        return list(rng.choice(["inf", "-inf", "0", "-0.0", "1e-320", "5e-324", "2.5"], n))
    return [f"{x:.17g}" for x in 1.0 + rng.integers(0, 50, n) * 2.0 ** -52]   # next doubles


@pytest.mark.parametrize("kind", ["spread", "few values", "outliers", "every magnitude",
                                  "infinities and zeros", "adjacent"])
@pytest.mark.parametrize("n", [128, 200, 3000])
def test_large_topics_in_no_order_are_ranked_as_the_reference(tmp_path, kind, n):
    """Topics of hundreds and thousands of documents, shuffled (sorted by key ranges)
    and as concatenated shards (merged), under every tie rule: the reference's values,
    bit for bit, and the values of the same lines written in score order."""
    rng = np.random.default_rng(n)
    run, qrels = [], []
    for t in range(3):
        for d, score in enumerate(_scores(kind, n, rng)):
            run.append(f"q{t} Q0 d{d:05d} {d} {score} r")
        qrels += [f"q{t} 0 d{d:05d} {rng.integers(0, 3)}" for d in range(0, n, 3)]
    (tmp_path / "qrels.txt").write_text(lines_text(qrels))
    shuffled = [run[i] for i in rng.permutation(len(run))]
    sharded = [run[i] for s in range(5) for i in range(s, len(run), 5)]
    for ties in ("docno_desc", "docno_asc", "input_order", "random"):
        for lines in (shuffled, sharded):
            (tmp_path / "run.txt").write_text(lines_text(lines))
            assert_same(evaluate_both(tmp_path / "qrels.txt", lambda: tmp_path / "run.txt",
                                      MEASURES, ties=ties, seed=3))
    written = sorted(run, key=lambda line: -float(line.split()[4]))
    (tmp_path / "sorted.txt").write_text(lines_text(written))
    (tmp_path / "run.txt").write_text(lines_text(shuffled))
    in_order = cumgain.evaluate(tmp_path / "qrels.txt", tmp_path / "sorted.txt", MEASURES)
    moved = cumgain.evaluate(tmp_path / "qrels.txt", tmp_path / "run.txt", MEASURES)
    for name in in_order.values:
        np.testing.assert_array_equal(moved.values[name], in_order.values[name])


@pytest.mark.parametrize("shards", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("sizes", ["equal", "unequal"])
def test_concatenated_shards_are_found_early_and_read_as_the_reference(tmp_path, monkeypatch,
                                                                       shards, sizes):
    """Probes at evenly spaced offsets see a topic come back in shards of one size
    (topics_come_back: never for one shard, the topics contiguous); other shards are
    found by the parts as they read (a topic in two parts stops every part at its next
    block). Either way: the reference's values, in one thread or three."""
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 12)
    monkeypatch.setattr(_native_blocks, "BLOCK", 1 << 10)
    rng = np.random.default_rng(shards)
    topics = [f"q{t}" for t in range(40)]
    run, qrels = [], []
    for s in range(shards):
        n_docs = 12 if sizes == "equal" else 4 + 7 * s
        for t in topics:
            run += [f"{t} Q0 s{s}d{d} {d} {rng.integers(1, 9)}.5 r" for d in range(n_docs)]
    qrels = [f"{t} 0 s{s}d{d} {rng.integers(0, 3)}" for t in topics for s in range(shards)
             for d in range(0, 12, 5)]
    (tmp_path / "qrels.txt").write_text(lines_text(qrels))
    (tmp_path / "run.txt").write_text(lines_text(run))
    found = _native_parts.topics_come_back(str(tmp_path / "run.txt"))
    assert found <= (shards > 1)                    # (a topic seen twice: it came back)
    assert found >= (shards > 1 and sizes == "equal" and 48 % shards == 0)
    for threads in (1, 3):
        assert_same(evaluate_both(tmp_path / "qrels.txt", lambda: tmp_path / "run.txt",
                                  MEASURES, threads=threads))


def test_parts_stop_at_their_next_block_once_a_topic_is_found_in_two(tmp_path, monkeypatch):
    """Shards the probes do not catch: a part notes its topics after its first block
    and at its end, and once a topic is in two parts, every part stops at its next
    block (the run is then read held by topic). Parts handed out one at a time here:
    the first part read whole, the second stopped after a block; the values are the
    reference's."""
    from cumgain.io.native import reader
    monkeypatch.setattr(reader, "topics_come_back", lambda path: False)
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 12)
    monkeypatch.setattr(_native_blocks, "BLOCK", 1 << 9)
    real_parts_in_turn = _native_parts.parts_in_turn
    monkeypatch.setattr(_native_parts, "parts_in_turn",
                        lambda parsers, threads, read, join, order=None:
                        real_parts_in_turn(parsers, 1, read, join, order))
    topics = [f"q{t}" for t in range(40)]
    run = [f"{t} Q0 s{s}d{d} {d} {d % 7}.5 r" for s in range(4) for t in topics
           for d in range(12)]
    qrels = [f"{t} 0 s1d3 1" for t in topics]
    (tmp_path / "qrels.txt").write_text(lines_text(qrels))
    (tmp_path / "run.txt").write_text(lines_text(run))
    fed, grouping = [], [False]
    real_read_parts, real_feed_blocks = _native_parts.read_parts, _native_parts.feed_blocks

    def read_parts(*args, **options):
        grouping[0] = options.get("grouping", False)
        return real_read_parts(*args, **options)

    def feed_blocks(parser, blocks, max_line=-1):
        def counted():
            for block in blocks:
                fed.append((grouping[0], len(block)))
                yield block
        return real_feed_blocks(parser, counted(), max_line)

    monkeypatch.setattr(reader, "read_parts", read_parts)
    monkeypatch.setattr(_native_parts, "feed_blocks", feed_blocks)
    assert_same(evaluate_both(tmp_path / "qrels.txt", lambda: tmp_path / "run.txt",
                              MEASURES, threads=2))
    path, size = str(tmp_path / "run.txt"), len(lines_text(run))
    starts = _native_parts.part_starts(path, _native_parts.parts_for(2),
                                        _native_parts.SHORT_PARTS_PER_THREAD * 2, quiet=True)
    first = _native_parts.spread_order(starts, size)[0]
    first_part = (starts + [size])[first + 1] - starts[first]
    streamed = sum(length for held, length in fed if not held) - len(lines_text(qrels))
    assert first_part < streamed <= first_part + (1 << 9)
    assert sum(length for held, length in fed if held) == size


def test_a_probe_that_sees_a_topic_twice_around_another_is_a_topic_that_came_back(tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1 << 10)
    path = tmp_path / "run.txt"
    block = [f"a Q0 d{d} {d} 1 r" for d in range(400)]
    path.write_text(lines_text(block + [f"b Q0 d{d} {d} 1 r" for d in range(400)] + block))
    assert _native_parts.topics_come_back(str(path))
    path.write_text(lines_text(block + [f"b Q0 d{d} {d} 1 r" for d in range(800)]))
    assert not _native_parts.topics_come_back(str(path))
    (tmp_path / "run.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert not _native_parts.topics_come_back(str(tmp_path / "run.gz"))


# ---------------------------------------------------------------- errors, read once

BAD_LINES = ["q1 Q0 d9 1 x t", "q1 Q0 d9 1", "q1 Q0 d9 1 nan t", "q1 Q0 d\x009 1 1 t",
             "q1 Q0 d9 1 1 t\rq1", "q1 Q0 d 9 1 1 2 t", "q1 Q0 d9\u2028 1 1 t"]


@pytest.mark.parametrize("bad", BAD_LINES)
@pytest.mark.parametrize("where", [0, 3, 7])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bad_line_in_an_unordered_run_is_the_reference_error(tmp_path, monkeypatch, bad,
                                                              where, threads):
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    lines = [f"q{1 + i % 3} Q0 d{i} {i} {i % 4} t" for i in range(9)]
    lines.insert(where, bad)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq1 0 d4 2\n")
    for kind, make in run_inputs(tmp_path, lines_text(lines)).items():
        both = evaluate_both(tmp_path / "qrels.txt", make, ["map"], threads=threads)
        assert isinstance(both[1][0], FormatError), (kind, both[1][0])
        assert_same(both)


def test_a_qrels_duplicate_comes_before_any_run_error(tmp_path):
    """The reference reader reads the qrels whole first: their duplicate is the error,
    even where the run has a bad line or a duplicate of its own."""
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\nq1 0 a 0\n")
    for run in ("q1 Q0 a 1 1 t\nq1 Q0 b 1 x t\n", "q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq1 Q0 a 1 1 t\n",
                "q2 Q0 b 1 1 t\n", "q1 Q0 a 1 1 t\nq1 Q0 c 1 1\n"):
        (tmp_path / "run.txt").write_text(run)
        both = evaluate_both(tmp_path / "qrels.txt", lambda: tmp_path / "run.txt", ["map"])
        assert "qrels.txt:3: duplicate docno 'a' in topic 'q1'" in str(both[1][0])
        assert_same(both)


@pytest.mark.parametrize("text", [b"", b"\n" * 1000, b"# only a comment\n" * 50,
                                  b"  \n\t\n# c\n"])
@pytest.mark.parametrize("packed", [False, True])
def test_inputs_without_data_lines_are_the_no_results_error(tmp_path, text, packed):
    data = gzip.compress(text) if packed else text
    (tmp_path / "run").write_bytes(data)
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    for make in (lambda: tmp_path / "run", lambda: io.BytesIO(data)):
        both = evaluate_both(tmp_path / "qrels.txt", make, ["map"])
        assert "no results (the file has no data lines)" in str(both[0][0])
        assert_same(both)


def test_a_gzip_header_crc_that_does_not_match_is_refused_as_gzip_t_refuses_it(tmp_path):
    import struct
    import zlib
    data = b"q1 Q0 d1 1 1.0 t\n"
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    header = b"\x1f\x8b\x08\x02\0\0\0\0\0\xff"          # FHCRC: a header CRC follows
    crc = zlib.crc32(header) & 0xFFFF
    tail = struct.pack("<II", zlib.crc32(data), len(data))
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    good, bad = tmp_path / "good.gz", tmp_path / "bad.gz"
    good.write_bytes(header + struct.pack("<H", crc) + body + tail)
    bad.write_bytes(header + struct.pack("<H", crc ^ 1) + body + tail)
    assert cumgain.evaluate(tmp_path / "qrels.txt", good, ["map"]).means["map"] == 1.0
    both = evaluate_both(tmp_path / "qrels.txt", lambda: bad, ["map"])
    assert "header crc mismatch" in str(both[0][0])
    assert_same(both)


# ---------------------------------------------------------------- standard input

@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("order", ["written", "shuffled"])
def test_a_run_piped_on_standard_input(tmp_path, packed, order):
    """``cat run | ...``: a pipe cannot be read again, so its lines are held by topic
    from the start; the values are the file's."""
    rng = np.random.default_rng(9)
    run = [f"t{t} Q0 d{d} {d} {rng.integers(0, 9)} r" for t in range(40) for d in range(30)]
    if order == "shuffled":
        run = [run[i] for i in rng.permutation(len(run))]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(lines_text(f"t{t} 0 d{d} 1" for t in range(40) for d in range(0, 30, 4)))
    path = tmp_path / "run.txt"
    path.write_text(lines_text(run))
    data = gzip.compress(path.read_bytes()) if packed else path.read_bytes()
    script = ("import sys, json, cumgain; e = cumgain.evaluate(sys.argv[1], '-', "
              "['map', 'ndcg', 'P.5']); print(json.dumps({k: list(map(float, v)) for k, v in "
              "e.values.items()}))")
    # (in tmp_path: from the source tree, "-c" would import its uncompiled cumgain)
    done = subprocess.run([sys.executable, "-c", script, str(qrels)], input=data,
                          capture_output=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    piped = json.loads(done.stdout)
    expected = cumgain.evaluate(qrels, path, ["map", "ndcg", "P.5"])
    assert piped == {k: list(map(float, v)) for k, v in expected.values.items()}


# ---------------------------------------------------------------- loaded tables

@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), duplicates=st.sampled_from(["error", "first", "last"]))
def test_read_run_and_read_qrels_give_the_reference_tables(tmp_path, data, duplicates):
    qrels, run = data.draw(collections(duplicates=True))
    order = data.draw(orders(len(run)))
    qrels_order = data.draw(orders(len(qrels)))
    comments = data.draw(st.booleans())
    run_lines = [run[i] for i in order]
    qrels_lines = [qrels[i] for i in qrels_order]
    if comments:
        run_lines.insert(len(run_lines) // 2, "# a comment")
        qrels_lines.insert(len(qrels_lines) // 2, "# a comment")
    (tmp_path / "run.txt").write_text(lines_text(run_lines))
    (tmp_path / "qrels.txt").write_text(lines_text(qrels_lines))
    for read, reference, name, fields in (
            (trec_io.read_run, reference_reading.read_run, "run.txt",
             ("offsets", "docnos", "scores", "lines")),
            (trec_io.read_qrels, reference_reading.read_qrels, "qrels.txt",
             ("offsets", "docnos", "relevance", "lines"))):
        got = []
        for reader in (read, reference):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    got.append((reader(tmp_path / name, duplicates=duplicates),
                                [str(w.message) for w in caught
                                 if w.category is not ResourceWarning]))
                except FormatError as error:
                    got.append((error, []))
        (a, a_warnings), (b, b_warnings) = got
        if isinstance(b, Exception):
            assert str(a) == str(b)
            continue
        assert a_warnings == b_warnings
        assert a.topics == b.topics and a.source == b.source
        for field in fields:
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
        if name == "run.txt":
            assert (a.tag, a.tags_agree) == (b.tag, b.tags_agree)


def test_read_run_takes_streams_and_standard_input_names(tmp_path):
    data = b"q2 Q0 a 1 1 t\nq1 Q0 b 1 1 t\nq2 Q0 c 2 0.5 t\n"
    stream = trec_io.read_run(io.BytesIO(data))
    assert stream.source == "<stream>" and stream.topics == ("q2", "q1")
    assert stream.docnos.tolist() == ["a", "c", "b"] and stream.lines.tolist() == [1, 3, 2]
    (tmp_path / "run.txt").write_bytes(data)
    with open(tmp_path / "run.txt", "rb") as opened:
        named = trec_io.read_run(opened)
    assert named.source == str(tmp_path / "run.txt")


def test_text_streams_are_refused_with_what_to_give(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    with pytest.raises(InputError, match=r"a text stream; give its bytes"):
        cumgain.evaluate(tmp_path / "qrels.txt", io.StringIO("q1 Q0 a 1 1 t\n"), ["map"])
    with pytest.raises(InputError, match=r"a run must be a TREC run file path, a binary stream"):
        cumgain.evaluate(tmp_path / "qrels.txt", 42, ["map"])


class _Pipe(io.RawIOBase):
    """A stream that cannot be read again, as a pipe."""

    def __init__(self, data: bytes):
        self.data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        return self.data.readinto(buffer)


@pytest.mark.parametrize("room", ["a temporary file", "no temporary file", "a full disk"])
@pytest.mark.parametrize("order", ["written", "shards"])
def test_a_pipe_is_read_as_it_streams_and_again_from_its_copy(tmp_path, monkeypatch, room,
                                                             order):
    """A stream that cannot be read twice is ranked as it streams (its topics
    contiguous: bounded memory) while a copy of what is read is kept: in an anonymous
    temporary file (nothing left in the temporary folder), else in memory; a topic
    that comes back makes it read again, the copy then the rest of the stream."""
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    if room == "no temporary file":
        def refused(*args, **kwargs):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    elif room == "a full disk":
        real = tempfile.TemporaryFile

        class Full:
            def __init__(self, *args, **kwargs):
                self.file, self.written = real(*args, **kwargs), 0

            def write(self, data):
                if self.written > 2000:
                    raise OSError(28, "No space left on device")
                self.written += len(data)
                return self.file.write(data)

            def __getattr__(self, name):
                return getattr(self.file, name)

        monkeypatch.setattr(tempfile, "TemporaryFile", Full)
        monkeypatch.setattr(_native_blocks, "BLOCK", 256)
    rng = np.random.default_rng(3)
    lines = [f"t{t} Q0 d{d} {d} {rng.integers(0, 9)} r" for t in range(20) for d in range(40)]
    if order == "shards":
        lines = [lines[i] for s in range(3) for i in range(s, len(lines), 3)]
    data = lines_text(lines).encode()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(lines_text(f"t{t} 0 d{d} 1" for t in range(20) for d in range(0, 40, 3)))
    (tmp_path / "run.txt").write_bytes(data)
    expected = cumgain.evaluate(qrels, tmp_path / "run.txt", MEASURES)
    for make in (lambda: _Pipe(data), lambda: _Pipe(gzip.compress(data))):
        got = cumgain.evaluate(qrels, make(), MEASURES)
        for name in expected.values:
            np.testing.assert_array_equal(got.values[name], expected.values[name])
    assert list((tmp_path / "tmp").iterdir()) == []


class _SlowPipe(_Pipe):
    """A pipe whose reads after the first ``fast`` bytes are short and slow, and which
    records whether a read is under way and how many were made."""

    def __init__(self, data: bytes, fast: int):
        super().__init__(data)
        self.fast, self.reads, self.reading = fast, 0, False

    def readinto(self, buffer) -> int:
        import time
        self.reading = True
        try:
            self.reads += 1
            if self.data.tell() < self.fast:
                with memoryview(buffer) as view:
                    return self.data.readinto(view[:self.fast - self.data.tell()])
            time.sleep(0.002)
            with memoryview(buffer) as view:
                return self.data.readinto(view[:64])
        finally:
            self.reading = False


@pytest.mark.parametrize("order", ["contiguous", "a topic comes back"])
def test_a_stream_is_not_read_after_its_error_is_raised(tmp_path, monkeypatch, order):
    """The read-ahead thread has stopped reading a stream when the error of a bad line
    is raised: nothing reads the caller's stream behind its back, and a temporary copy
    closed on the way out is not being read (its descriptor's number, reused by the
    next file opened, was read by the helper's read in flight: the next file read empty)."""
    import time
    monkeypatch.setattr(_native_blocks, "BLOCK", 4096)
    good = [f"q{t % 3 if order != 'contiguous' else 0} Q0 d{t} 1 {t} r" for t in range(40)]
    filler = [f"q9 Q0 e{i} 1 1 r" for i in range(3000)]
    data = lines_text(good + ["q1 Q0 bad 1 not-a-score r"] + filler).encode()
    (tmp_path / "qrels.txt").write_text("q0 0 d1 1\n")
    stream = _SlowPipe(data, fast=len(lines_text(good + ["q1 Q0 bad 1 x r"])) + 200)
    with pytest.raises(FormatError, match="not-a-score"):
        cumgain.evaluate(tmp_path / "qrels.txt", stream, ["map"])
    reads = stream.reads
    assert not stream.reading
    time.sleep(0.05)
    assert stream.reads == reads
