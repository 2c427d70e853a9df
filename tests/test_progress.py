"""cumgain.common.progress: a bar on stderr only when asked for (True) or on a terminal ("auto"),
with tqdm or without it; and the progress of cumgain.dask, which changes no number."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from cumgain.common import progress
from cumgain.exceptions import InputError


@pytest.fixture(params=["tqdm", "built-in"])
def bar_kind(request, monkeypatch):
    """Each test twice: with tqdm (when installed) and with the built-in bar."""
    if request.param == "tqdm":
        pytest.importorskip("tqdm")
    else:
        monkeypatch.setitem(sys.modules, "tqdm", None)     # import tqdm fails
    return request.param


def _work(steps, enabled):
    with progress.progress_bar(steps, "scoring pairs", enabled) as bar:
        for _ in range(steps):
            bar.update()


def test_a_bar_on_stderr_when_asked_for(capsys, bar_kind):
    _work(5, True)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "scoring pairs" in captured.err and "/5" in captured.err   # (tqdm may skip 5/5)
    assert captured.err.endswith("\r")                     # erased when done


def test_nothing_when_disabled_or_off_a_terminal(capsys, bar_kind):
    _work(5, False)
    _work(5, "auto")                                       # capsys' stderr is no terminal
    assert capsys.readouterr().err == ""
    _work(0, True)                                         # nothing to count
    assert capsys.readouterr().err == ""


def test_auto_on_a_terminal(monkeypatch, terminal, bar_kind):
    monkeypatch.setattr(sys, "stderr", terminal)
    assert progress.shown("auto") and progress.shown(True) and not progress.shown(False)
    _work(3, "auto")
    assert "scoring pairs" in terminal.text and "/3" in terminal.text


def test_no_stderr_at_all(monkeypatch):
    monkeypatch.setattr(sys, "stderr", None)
    assert not progress.shown(True) and not progress.shown("auto")
    _work(3, True)


def test_built_in_bar_draws_one_line_in_place(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress, "REDRAW_SECONDS", 0.0)    # draw every step
    _work(4, True)
    frames = capsys.readouterr().err.split("\r")
    assert frames[0] == ""
    assert frames[1].rstrip() == "scoring pairs [------------------------] 0/4"
    assert frames[3].rstrip() == "scoring pairs [############------------] 2/4"
    assert frames[5].rstrip() == "scoring pairs [########################] 4/4"
    assert frames[6].strip() == "" and frames[7] == ""      # erased
    assert "\n" not in "".join(frames)


@pytest.mark.parametrize("value", [1, 0, "always", None, "AUTO"])
def test_values_are_checked(value):
    with pytest.raises(InputError, match="progress must be False, True or 'auto'"):
        progress.check_progress(value)
    with pytest.raises(InputError):
        progress.progress_bar(3, "x", value)


# ---------------------------------------------------------------- cumgain.dask

@pytest.fixture(scope="module")
def dask_inputs():
    pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import dask.dataframe as dd
    rng = np.random.default_rng(2)
    n_topics, docs = 12, 15
    run = pd.DataFrame({"query_id": [f"q{t:02d}" for t in range(n_topics) for _ in range(docs)],
                        "doc_id": [f"d{i}" for i in range(n_topics * docs)],
                        "score": np.round(rng.random(n_topics * docs), 2)})
    qrels = {f"q{t:02d}": {f"d{i}": int(rng.integers(0, 4))
                           for i in range(t * docs, (t + 1) * docs, 2)} for t in range(n_topics)}
    frame = dd.from_pandas(run.set_index("query_id").sort_index(), npartitions=4)
    return qrels, frame


def _same(a, b):
    assert a.topics == b.topics and a.means == b.means
    for name in a.values:
        assert np.array_equal(a.values[name], b.values[name])


def test_dask_progress_on_a_local_scheduler(capsys, dask_inputs):
    import cumgain.dask as cgd
    qrels, frame = dask_inputs
    measures = ["P_5", "ndcg_cut_10", "map"]
    quiet = cgd.evaluate(qrels, frame, measures).compute(scheduler="sync")
    assert capsys.readouterr().err == ""
    lazy = cgd.evaluate(qrels, frame, measures, progress=True)
    _same(lazy.compute(scheduler="sync"), quiet)
    assert "cumgain.dask: evaluate" in capsys.readouterr().err
    _same(lazy.compute(scheduler="threads", progress=False), quiet)
    _same(cgd.evaluate(qrels, frame, measures, progress="auto").compute(scheduler="sync"),
          quiet)
    assert capsys.readouterr().err == ""                   # not a terminal
    vectors = cgd.average_vectors(qrels, frame, 10, scheduler="sync")
    shown = cgd.average_vectors(qrels, frame, 10, scheduler="sync", progress=True)
    assert "cumgain.dask: average vectors" in capsys.readouterr().err
    assert np.array_equal(vectors.ndcg, shown.ndcg) and np.array_equal(vectors.cg, shown.cg)
    with pytest.raises(InputError, match="progress"):
        cgd.evaluate(qrels, frame, measures, progress="yes")
    with pytest.raises(InputError, match="progress"):
        lazy.compute(progress=2)


def test_dask_progress_on_a_distributed_client(capsys, dask_inputs):
    distributed = pytest.importorskip("distributed")
    import cumgain.dask as cgd
    qrels, frame = dask_inputs
    quiet = cgd.evaluate(qrels, frame, ["P_5", "ndcg"]).compute(scheduler="sync")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                            dashboard_address=None) as client:
        lazy = cgd.evaluate(qrels, frame, ["P_5", "ndcg"], progress=True)
        assert cgd._distributed_client((lazy.partition_results,), {}) is client
        _same(lazy.compute(), quiet)
        err = capsys.readouterr().err
        assert "cumgain.dask: evaluate" in err and "/4" in err    # four partitions
