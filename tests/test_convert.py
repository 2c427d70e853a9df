"""cumgain.convert streams a run file into the dataset write_parquet makes from the whole
file: the same rows, files and layout, read back by pyarrow and evaluated by Dask."""
from __future__ import annotations

import gzip
import warnings

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask.dataframe")

from cumgain import convert, stream                      # noqa: E402
from cumgain.dask import write_parquet                   # noqa: E402
from cumgain.exceptions import FormatError               # noqa: E402
from cumgain.trec_io import DuplicatesDroppedWarning, load_run   # noqa: E402


def _contiguous_run(path, n_topics=37, seed=5):
    """Topics contiguous but not in id order, sizes 1-60, tied scores, a comment."""
    rng = np.random.default_rng(seed)
    topics = [str(t) for t in rng.permutation(np.arange(n_topics) * 7 + 3)]
    lines = ["# a comment\n"]
    for topic in topics:
        for i in range(int(rng.integers(1, 60))):
            lines.append(f"{topic} Q0 d{rng.integers(0, 10_000)}x{i} {i} "
                         f"{float(rng.integers(0, 5)) / 2!r} tag\n")
    path.write_text("".join(lines))
    return path


def _files(folder):
    return sorted((p for p in folder.iterdir() if p.suffix == ".parquet"),
                  key=lambda p: int(p.name.split(".")[1]))


def _frames(folder):
    return [pq.read_table(p).to_pandas() for p in _files(folder)]


@pytest.mark.slow
@pytest.mark.parametrize("by_topic", [False, True])
@pytest.mark.parametrize("rows_per_file", [1, 50, 10_000])
def test_streamed_equals_the_whole_file_path(tmp_path, by_topic, rows_per_file):
    run = _contiguous_run(tmp_path / "run.txt")
    done = convert.convert_run(run, tmp_path / "streamed", partition_by_topic=by_topic,
                               rows_per_file=rows_per_file)
    assert done.streamed
    files = write_parquet(load_run(str(run)), tmp_path / "whole", partition_by_topic=by_topic,
                          rows_per_file=rows_per_file)
    streamed, whole = _frames(tmp_path / "streamed"), _frames(tmp_path / "whole")
    import pandas as pd
    assert pd.concat(streamed).equals(pd.concat(whole))          # every row, in order
    assert done.rows == sum(map(len, whole)) and done.topics == 37
    if not by_topic:                       # exactly rows_per_file rows per file
        assert done.files == files and [len(f) for f in streamed] == [len(f) for f in whole]
    else:                                  # whole topics per file, ids sorted across files
        ids = [list(dict.fromkeys(frame.index)) for frame in streamed]
        flat = [topic for topics in ids for topic in topics]
        assert flat == sorted(flat, key=str.encode) and len(flat) == len(set(flat))
        assert all(len(frame) >= rows_per_file for frame in streamed[:-1])


@pytest.mark.parametrize("by_topic", [False, True])
def test_files_are_lz4_with_dictionaries_for_repeating_columns_only(tmp_path, by_topic):
    """Every Parquet writer of cumgain (streamed, whole file, write_parquet of a run and
    of qrels) writes LZ4, query ids, scores and levels dictionary-encoded and doc ids
    plain (convert.PARQUET_OPTIONS: they decode faster so)."""
    from cumgain.trec_io import load_qrels
    run = _contiguous_run(tmp_path / "run.txt")
    convert.convert_run(run, tmp_path / "streamed", partition_by_topic=by_topic)
    interleaved = tmp_path / "interleaved.txt"   # the first topic resumes: the whole file
    first_topic = run.read_text().splitlines()[1].split()[0]
    interleaved.write_text(run.read_text() + f"{first_topic} Q0 again 0 1.0 tag\n")
    assert not convert.convert_run(interleaved, tmp_path / "whole").streamed
    write_parquet(load_run(str(run)), tmp_path / "written", partition_by_topic=by_topic)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    write_parquet(load_qrels(str(qrels)), tmp_path / "qrels", partition_by_topic=by_topic)
    for folder in ("streamed", "whole", "written", "qrels"):
        metadata = pq.ParquetFile(_files(tmp_path / folder)[0]).metadata.row_group(0)
        chunks = {metadata.column(i).path_in_schema: metadata.column(i)
                  for i in range(metadata.num_columns)}
        assert {chunk.compression for chunk in chunks.values()} == {"LZ4"}, folder
        for name, chunk in chunks.items():
            assert ("RLE_DICTIONARY" in chunk.encodings) == (name != "doc_id"), (folder, name)


def test_gzip_and_the_dataset_evaluates_like_the_text_file(tmp_path):
    import cumgain
    import cumgain.dask as cdask
    run = _contiguous_run(tmp_path / "run.txt")
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    qrels = tmp_path / "qrels"
    rows = [line.split() for line in run.read_text().splitlines()[1:]]
    qrels.write_text("".join(f"{r[0]} 0 {r[2]} {i % 3}\n" for i, r in enumerate(rows[::3])))
    done = convert.convert_run(packed, tmp_path / "out", partition_by_topic=True,
                               rows_per_file=100)
    assert done.streamed and done.source == str(packed)
    measures = ["ndcg_cut.10", "map", "P.5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = cumgain.evaluate(str(qrels), str(run), measures)
        got = cdask.evaluate(str(qrels), str(tmp_path / "out"), measures).compute(
            scheduler="sync")
        assert cdask.read_run(str(tmp_path / "out")).known_divisions
    for name in want.means:
        assert got.means[name] == want.means[name]


def test_topics_that_resume_take_the_whole_file_path(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3 t\nq2 Q0 b 1 2 t\nq1 Q0 c 2 1 t\n")
    done = convert.convert_run(run, tmp_path / "out", rows_per_file=2)
    assert not done.streamed and done.rows == 3
    frame = pq.read_table(tmp_path / "out").to_pandas()
    assert frame["doc_id"].tolist() == ["a", "c", "b"]        # as write_parquet orders them
    with pytest.raises(stream.TopicsNotContiguous):
        list(stream._TopicReader(str(run)))


def test_duplicates_are_named_by_file_and_line_or_dropped(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3 t\nq2 Q0 b 1 2 t\nq2 Q0 c 2 1 t\nq2 Q0 b 3 0 t\n")
    with pytest.raises(FormatError) as error:
        convert.convert_run(run, tmp_path / "out", partition_by_topic=True)
    assert str(error.value).startswith(f"{run}:4: duplicate docno 'b' in topic 'q2': "
                                       "lines 2 and 4")
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]      # nothing left
    with pytest.warns(DuplicatesDroppedWarning):
        done = convert.convert_run(run, tmp_path / "out", duplicates="first")
    assert done.rows == 3
    assert pq.read_table(tmp_path / "out").to_pydict()["score"] == [3.0, 2.0, 1.0]


def test_bad_arguments(tmp_path):
    run = _contiguous_run(tmp_path / "run.txt")
    for kwargs in ({"rows_per_file": 0}, {"rows_per_file": True}, {"duplicates": "latest"}):
        with pytest.raises(ValueError):
            convert.convert_run(run, tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()
