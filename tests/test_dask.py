"""cumgain.dask: the same per-topic values and means as cumgain.evaluate, on Dask.

The reference is always the single-machine engine, :func:`cumgain.evaluate`, on the same
rows; equality is exact (``np.array_equal`` on per-topic values, ``==`` on means) since
partitioned evaluation is claimed bit-identical. The averaged vectors are checked
against the vector API on rankings built independently here (pandas sort), within the
summation-order bound the module documents. The LocalCluster test at the end (marked
``slow``) runs 2 worker processes on 2 million rows.
"""
from __future__ import annotations

import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

import cumgain
import cumgain.dask as cgd
from cumgain.scale import dask_judgments as dask_qrels
from cumgain.scale import dask_vectors
from cumgain import curves, stream
from cumgain.exceptions import InputError
from cumgain.trec_io import DuplicatesDroppedWarning, load_run

GOLDEN = Path(__file__).resolve().parent / "golden"
UNIT_ROUNDOFF = 2.0 ** -53

TREC_MEASURES = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "recip_rank", "P.5,10", "recall.10", "success.1,5", "ndcg", "ndcg_cut.5,10",
                 "ndcg_rel", "Rndcg", "dcg", "ideal_dcg", "map_cut.10", "ndcg.1=3,2=9,3=27"]
JK_MEASURES = ["CG@10", "DCG@10(discount=tois, base=10, gains=0-1-10-100)",
               "nCG@20(gains=0-1-2-3)", "nDCG(discount=note, gains=exponential)@15",
               "nDCG@10(discount=rank)", "avg_pos_nCG@20(gains=0-1-10-100)",
               "avg_pos_nDCG@20(gains={0:0,1:1,2:10,3:100}, base=3, discount=tois)",
               "nDCG(judged_only=True)@10", "P(rel=2)@5"]
LINEAR_MEASURES = ["num_ret", "num_rel_ret", "P_5", "recall_10", "Rprec", "ndcg_cut_10",
                   "nDCG@10(discount=tois, gains=0-1-10-100)", "CG@5", "avg_pos_nDCG@10"]


def collection(n_topics: int = 40, docs: int = 60, seed: int = 7):
    """A run and qrels as pandas frames: scores with many ties (one decimal, and pairs
    equal as float32 only), levels -1..3, two run-only topics, two qrels-only topics."""
    rng = np.random.default_rng(seed)
    topic = np.repeat(np.arange(n_topics), docs)
    doc = rng.permutation(10 * n_topics * docs)[:n_topics * docs] % (5 * docs)
    doc = np.array([f"d{d}" for d in doc])
    keep = ~pd.DataFrame({"t": topic, "d": doc}).duplicated().to_numpy()
    topic, doc = topic[keep], doc[keep]
    score = np.round(rng.normal(5, 1, size=len(topic)), 1)
    score[::17] = 5.0 + 1e-9 * rng.integers(1, 3, size=len(score[::17]))   # ties in float32
    run = pd.DataFrame({"query_id": [f"q{t}" for t in topic], "doc_id": doc, "score": score})
    judged = rng.random(len(topic)) < 0.4
    levels = rng.choice([-1, 0, 1, 2, 3], size=judged.sum(), p=[.05, .45, .25, .15, .10])
    qrels = pd.DataFrame({"query_id": run.query_id[judged].to_numpy(),
                          "doc_id": run.doc_id[judged].to_numpy(), "relevance": levels})
    extra = pd.DataFrame({"query_id": ["q900", "q900", "q901"], "doc_id": ["x1", "x2", "x3"],
                          "relevance": [2, 0, 1]})      # qrels-only topics
    qrels = qrels[~qrels.query_id.isin(["q0", "q1"])]   # q0, q1: run-only topics
    qrels = pd.concat([qrels, extra], ignore_index=True)
    return run.sample(frac=1, random_state=seed).reset_index(drop=True), qrels


RUN, QRELS = collection()


def as_dask(run: pd.DataFrame, npartitions: int = 4) -> dd.DataFrame:
    return dd.from_pandas(run, npartitions=npartitions, sort=False)


def dask_result(measures, run=None, qrels=None, **policies) -> cumgain.Evaluation:
    """cumgain.dask on the run split into 4 partitions (shuffled), computed in-process."""
    run = RUN if run is None else run
    qrels = QRELS if qrels is None else qrels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cgd.ShuffleWarning)
        lazy = cgd.evaluate(qrels, as_dask(run), measures, warn=False, **policies)
    return lazy.compute(scheduler="sync")


def evaluate_both(measures, run=None, qrels=None, **policies):
    """(cumgain.dask result, cumgain.evaluate result) on the same rows."""
    reference = cumgain.evaluate(QRELS if qrels is None else qrels, RUN if run is None else run,
                                 measures, warn=False, **policies)
    return dask_result(measures, run, qrels, **policies), reference


def assert_identical(result: cumgain.Evaluation, reference: cumgain.Evaluation) -> None:
    assert result.topics == reference.topics
    assert [m.name for m in result.measures] == [m.name for m in reference.measures]
    for name, expected in reference.values.items():
        assert np.array_equal(result.values[name], expected), name
        assert result.means[name] == reference.means[name], name
    assert result.run_only_topics == reference.run_only_topics
    assert result.missing_topics == reference.missing_topics
    assert result.empty_qrels_topics == reference.empty_qrels_topics
    drawn = {"seed"} if reference.policies["ties"] != "random" else set()  # unused, random
    assert {k: v for k, v in result.policies.items() if k not in drawn} == \
        {k: v for k, v in reference.policies.items() if k not in drawn}


# ---------------------------------------------------------------- the module itself

def test_dask_import_is_the_dask_package():
    """``import dask.dataframe`` inside cumgain/dask.py is the real package."""
    assert cgd.dask is sys.modules["dask"]
    assert cgd.dd is sys.modules["dask.dataframe"]
    assert "site-packages" in cgd.dd.__file__ or "dist-packages" in cgd.dd.__file__


def test_import_cumgain_does_not_import_dask(tmp_path):
    import subprocess
    code = "import sys, cumgain; print('dask' in sys.modules, 'pandas' in sys.modules)"
    # cwd: not the checkout, whose cgcore/ has no compiled modules in a fresh clone
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------- policies and measures

@pytest.mark.parametrize("policies", [
    {},
    {"ties": "docno_asc"},
    {"ties": "input_order"},
    {"ties": "random", "seed": 12345},
    {"score_precision": "float32"},
    {"depth": 7},
    {"judged_only": True},
    {"depth": 9, "judged_only": True, "ties": "input_order"},
    {"relevance_level": 2},
    {"topics": "qrels"},
    {"topics": "qrels", "relevance_level": 3, "score_precision": "float32"},
], ids=str)
def test_policies_bit_identical(policies):
    result, reference = evaluate_both(["map", "gm_map", "ndcg_cut_10", "P_5", "recip_rank",
                                       "num_rel", "nDCG@10(discount=tois, gains=0-1-10-100)"],
                                      **policies)
    assert_identical(result, reference)


def test_average_ties_bit_identical():
    result, reference = evaluate_both(LINEAR_MEASURES, ties="average")
    assert_identical(result, reference)


def test_trec_eval_measures_bit_identical():
    result, reference = evaluate_both(TREC_MEASURES)
    assert len(result.measures) == 22
    assert_identical(result, reference)


def test_text_and_judged_measures_bit_identical():
    """relstring (text per topic) and the measures that tell unjudged documents apart;
    runid is empty (a Parquet run has no tag)."""
    measures = ["relstring", "runid", "bpref", "infAP", "iprec_at_recall", "unj", "rbp_resid"]
    result, reference = evaluate_both(measures, topics="qrels")
    assert result.values["relstring"].tolist() == reference.values["relstring"].tolist()
    assert result.means["runid"] == "" and result.means["relstring"] is None
    for name in reference.values:
        if name not in ("relstring", "runid"):
            assert np.array_equal(result.values[name], reference.values[name]), name
            assert result.means[name] == reference.means[name], name


def test_jk_measures_with_gains_bit_identical():
    result, reference = evaluate_both(JK_MEASURES, ties="random", seed=3)
    assert_identical(result, reference)


def test_random_ties_without_seed_use_one_seed_for_every_partition():
    """seed=None draws one seed; the result records it, and the engine given that seed
    reproduces every per-topic value (a seed per partition would not)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = cgd.evaluate(QRELS, as_dask(RUN, 8), ["ndcg_cut_5", "P_5"],
                              ties="random").compute(scheduler="sync")
    reference = cumgain.evaluate(QRELS, RUN, ["ndcg_cut_5", "P_5"], ties="random",
                                 seed=result.policies["seed"], warn=False)
    assert_identical(result, reference)


def test_input_order_survives_the_shuffle():
    """Every score equal: ties="input_order" ranks by the rows' input order, which the
    shuffle must keep (hand check: the first judged relevant row of a topic)."""
    run = pd.DataFrame({"query_id": ["a", "b"] * 6, "doc_id": [f"d{i // 2}" for i in range(12)],
                        "score": 1.0})
    qrels = {"a": {"d3": 1}, "b": {"d0": 1}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cgd.ShuffleWarning)
        result = cgd.evaluate(qrels, as_dask(run, 3), ["recip_rank"],
                              ties="input_order").compute(scheduler="sync")
    assert result.per_topic() == {"a": {"recip_rank": 1 / 4}, "b": {"recip_rank": 1.0}}


# ---------------------------------------------------------------- topics

def test_run_only_and_missing_topics_are_reported_and_warned():
    with pytest.warns(cumgain.TopicsWarning) as caught:
        result = cgd.evaluate(QRELS, as_dask(RUN), ["map"],
                              partitioned_by_topic=False).compute(scheduler="sync")
    with pytest.warns(cumgain.TopicsWarning) as expected:
        reference = cumgain.evaluate(QRELS, RUN, ["map"])
    assert result.run_only_topics == ("q0", "q1")
    assert result.missing_topics == ("q900", "q901")
    assert [str(w.message) for w in caught if w.category is cumgain.TopicsWarning] == \
        [str(w.message) for w in expected]
    assert_identical(result, reference)


def test_topics_qrels_scores_missing_topics_as_the_engine_does():
    result, reference = evaluate_both(["map", "num_rel", "gm_map", "num_q"], topics="qrels")
    row = result.per_topic()["q900"]
    assert row == {"map": 0.0, "num_rel": 1.0, "gm_map": math.log(1e-5), "num_q": 1.0}
    assert result.means["num_q"] == len(set(RUN.query_id) - {"q0", "q1"}) + 2
    assert_identical(result, reference)


def test_topics_strict():
    with pytest.raises(InputError, match=r"topics differ: 2 in the run only \['q0', 'q1'\]"):
        evaluate_both(["map"], topics="strict")
    same = RUN[~RUN.query_id.isin(["q0", "q1"])]
    qrels = QRELS[~QRELS.query_id.isin(["q900", "q901"])]
    result, reference = evaluate_both(["map", "P_5"], run=same, qrels=qrels, topics="strict")
    assert_identical(result, reference)


def test_qrels_topics_without_judgments_are_reported():
    qrels = {"q2": {"d1": 1}, "q3": {}}
    result, reference = evaluate_both(["P_5"], qrels=qrels)
    assert result.empty_qrels_topics == ("q3",) == reference.empty_qrels_topics
    assert "q3" in result.run_only_topics
    assert_identical(result, reference)


# ---------------------------------------------------------------- qrels and run forms

@pytest.mark.parametrize("form", ["pandas", "dask", "dict", "trec_file", "indexed"])
def test_qrels_forms(form, tmp_path):
    if form == "pandas":
        qrels = QRELS
    elif form == "dask":
        qrels = dd.from_pandas(QRELS, npartitions=3)
    elif form == "dict":
        qrels = cumgain.trec_io.qrels_from_dataframe(QRELS).to_dict()
    elif form == "indexed":
        qrels = QRELS.set_index("query_id")
    else:
        qrels = tmp_path / "qrels.txt"
        qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False)))
    result = dask_result(["map", "ndcg_cut_10"], qrels=qrels)
    reference = cumgain.evaluate(QRELS, RUN, ["map", "ndcg_cut_10"], warn=False)
    assert_identical(result, reference)


def test_integer_ids_are_read_as_str_like_the_evaluator():
    run = RUN.assign(query_id=RUN.query_id.str[1:].astype(int))
    qrels = QRELS.assign(query_id=QRELS.query_id.str[1:].astype(int))
    result, reference = evaluate_both(["map", "P_5"], run=run, qrels=qrels)
    assert "900" in result.missing_topics
    assert_identical(result, reference)


def test_query_id_index_with_divisions_is_not_shuffled():
    indexed = dd.from_pandas(RUN.set_index("query_id").sort_index(kind="stable"),
                             npartitions=5)
    assert indexed.known_divisions
    with warnings.catch_warnings():
        warnings.simplefilter("error", cgd.ShuffleWarning)
        lazy = cgd.evaluate(QRELS, indexed, ["map", "P_5"], ties="input_order", warn=False)
    assert lazy.shuffled is False
    reference = cumgain.evaluate(QRELS, RUN.sort_values("query_id", kind="stable"),
                                 ["map", "P_5"], ties="input_order", warn=False)
    assert_identical(lazy.compute(scheduler="sync"), reference)


def test_unpartitioned_run_is_shuffled_with_a_warning():
    with pytest.warns(cgd.ShuffleWarning, match="shuffled on query_id"):
        lazy = cgd.evaluate(QRELS, as_dask(RUN), ["map"], warn=False)
    assert lazy.shuffled is True
    with warnings.catch_warnings():       # asked for: no warning
        warnings.simplefilter("error", cgd.ShuffleWarning)
        lazy = cgd.evaluate(QRELS, as_dask(RUN), ["map"], warn=False, partitioned_by_topic=False)
    assert lazy.shuffled is True


def test_partitioned_by_topic_true_is_checked():
    """A topic split over partitions although the caller said it is not: an error."""
    run = RUN.sort_values("query_id", kind="stable").reset_index(drop=True)
    lazy = cgd.evaluate(QRELS, dd.from_pandas(run, npartitions=7, sort=False), ["map"],
                        partitioned_by_topic=True, warn=False)
    assert lazy.shuffled is False
    with pytest.raises(InputError, match="rows in several partitions"):
        lazy.compute(scheduler="sync")
    with pytest.raises(InputError, match="rows in several partitions"):
        lazy.per_topic.compute(scheduler="sync")


def test_partitioned_by_topic_true_on_whole_topics():
    run = RUN.sort_values("query_id", kind="stable")
    parts = [group for _, group in run.groupby(run.query_id.str.len())]   # whole topics each
    frame = dd.concat([dd.from_pandas(part, npartitions=1, sort=False) for part in parts])
    lazy = cgd.evaluate(QRELS, frame, ["map", "P_5"], partitioned_by_topic=True, warn=False)
    reference = cumgain.evaluate(QRELS, run, ["map", "P_5"], warn=False)
    assert_identical(lazy.compute(scheduler="sync"), reference)


def test_per_topic_is_a_lazy_dask_frame():
    lazy = cgd.evaluate(QRELS, as_dask(RUN), ["map", "P_5"], topics="qrels",
                        partitioned_by_topic=False, warn=False)
    frame = lazy.per_topic
    assert isinstance(frame, dd.DataFrame)
    computed = frame.compute(scheduler="sync").sort_index()
    reference = cumgain.evaluate(QRELS, RUN, ["map", "P_5"], topics="qrels", warn=False)
    assert tuple(computed.index) == reference.topics
    assert list(computed.columns) == ["map", "P_5"]
    for name in ("map", "P_5"):
        assert np.array_equal(computed[name].to_numpy(), reference.values[name])


def test_per_topic_checks_strict():
    lazy = cgd.evaluate(QRELS, as_dask(RUN), ["map"], topics="strict",
                        partitioned_by_topic=False)
    with pytest.raises(InputError, match="topics differ"):
        lazy.per_topic.compute(scheduler="sync")


# ---------------------------------------------------------------- duplicates

def test_duplicate_run_row_is_an_error_naming_topic_and_doc():
    run = pd.concat([RUN, RUN.iloc[[5]].assign(score=0.5)], ignore_index=True)
    topic, doc = RUN.query_id[5], RUN.doc_id[5]
    lazy = cgd.evaluate(QRELS, as_dask(run), ["map"], partitioned_by_topic=False, warn=False)
    with pytest.raises(InputError, match=f"duplicate doc_id '{doc}' in query_id '{topic}'"):
        lazy.compute(scheduler="sync")


@pytest.mark.parametrize("duplicates", ["first", "last"])
@pytest.mark.parametrize("ties", ["docno_desc", "input_order"])
def test_duplicates_first_or_last_keeps_that_row_and_warns(duplicates, ties):
    # row 5 three times (its repeats scored high, then low), row 9 twice: "first" and
    # "last" keep different scores, and under input order different places
    run = pd.concat([RUN, RUN.iloc[[5, 9]].assign(score=100.0), RUN.iloc[[5]].assign(score=-1.0)],
                    ignore_index=True)
    measures = ["map", "ndcg_cut_10", "recip_rank"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cgd.ShuffleWarning)
        lazy = cgd.evaluate(QRELS, as_dask(run, 5), measures, duplicates=duplicates,
                            ties=ties, warn=False)
    with pytest.warns(DuplicatesDroppedWarning,
                      match=f"dropped 3 duplicate .* keeping the {duplicates} occurrence"):
        result = lazy.compute(scheduler="sync")
    with pytest.warns(DuplicatesDroppedWarning):
        reference = cumgain.evaluate(QRELS, run, measures, duplicates=duplicates, ties=ties,
                                     warn=False)
    assert_identical(result, reference)
    with pytest.warns(DuplicatesDroppedWarning):
        other = cumgain.evaluate(QRELS, run, measures, ties=ties, warn=False,
                                 duplicates="last" if duplicates == "first" else "first")
    assert any(not np.array_equal(result.values[name], other.values[name])
               for name in result.values)         # the two policies differ on this run


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("frame, message", [
    (RUN.drop(columns="score"), r"missing column\(s\) \['score'\]"),
    (RUN.rename(columns={"doc_id": "docno"}), r"missing column\(s\) \['doc_id'\]"),
    (RUN.assign(score=RUN.score > 5), "'score' must have a real numeric dtype, got bool"),
    (RUN.assign(score=RUN.score.astype(str)), "'score' must have a real numeric dtype"),
])
def test_bad_run_columns_raise_at_once(frame, message):
    with pytest.raises(InputError, match=message):
        cgd.evaluate(QRELS, as_dask(frame), ["map"])


@pytest.mark.parametrize("column, value, message", [
    ("score", np.nan, "score is NaN or missing"),
    ("query_id", None, "query_id is missing at row"),
    ("doc_id", None, "doc_id is missing at row"),
])
def test_missing_values_raise_when_computed(column, value, message):
    run = RUN.copy()
    run[column] = run[column].astype(object if column != "score" else float)
    run.loc[11, column] = value
    lazy = cgd.evaluate(QRELS, as_dask(run), ["map"], partitioned_by_topic=False)
    with pytest.raises(InputError, match=message):
        lazy.compute(scheduler="sync")


@pytest.mark.parametrize("run, message", [
    (RUN, "pandas DataFrame: evaluate it with cumgain.evaluate"),
    (42, "must be a Dask DataFrame or a path to Parquet files, got int"),
    (str(GOLDEN / "tiny.run"), "is not Parquet"),
])
def test_bad_run_type(run, message):
    with pytest.raises(InputError, match=message):
        cgd.evaluate(QRELS, run, ["map"])


@pytest.mark.parametrize("arguments, message", [
    ({"measures": ["nDCG@"]}, "no cut-off after '@'"),
    ({"ties": "bogus"}, "ties must be one of"),
    ({"ties": "average", "measures": ["map"]}, "not defined under ties='average'"),
    ({"depth": -1}, "depth must be an integer >= 0"),
    ({"duplicates": "latest"}, "duplicates must be one of"),
    ({"partitioned_by_topic": "yes"}, "partitioned_by_topic must be None, True or False"),
])
def test_bad_arguments_raise_the_engines_errors_at_once(arguments, message):
    measures = arguments.pop("measures", ["P_5"])
    with pytest.raises(InputError, match=message):
        cgd.evaluate(QRELS, as_dask(RUN), measures, **arguments)


def test_bad_qrels_raise():
    with pytest.raises(InputError, match=r"missing column\(s\) \['relevance'\]"):
        cgd.evaluate(QRELS.drop(columns="relevance"), as_dask(RUN), ["map"],
                     partitioned_by_topic=True)


# ---------------------------------------------------------------- Parquet

@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("trec") / "run.txt"
    lines = [f"{q} Q0 {d} {i} {s!r} tag\n"
             for i, (q, d, s) in enumerate(RUN.itertuples(index=False))]
    path.write_text("".join(lines))
    return path


def test_topic_partitioned_parquet_is_read_without_shuffle(run_file, tmp_path):
    pytest.importorskip("pyarrow")
    files = cgd.write_parquet(load_run(run_file), tmp_path / "run.parquet",
                              partition_by_topic=True, rows_per_file=300)
    assert files == len(list((tmp_path / "run.parquet").glob("part.*.parquet"))) > 3
    frame = cgd.read_run(tmp_path / "run.parquet")
    assert frame.known_divisions and frame.index.name == "query_id"
    seen = set()
    for part in sorted((tmp_path / "run.parquet").glob("part.*.parquet")):
        topics = set(pd.read_parquet(part).index)
        assert not topics & seen            # no topic spans two files
        seen |= topics
    with warnings.catch_warnings():
        warnings.simplefilter("error", cgd.ShuffleWarning)
        lazy = cgd.evaluate(QRELS, tmp_path / "run.parquet", TREC_MEASURES,
                            ties="input_order", warn=False)
    assert lazy.shuffled is False
    reference = cumgain.evaluate(QRELS, str(run_file), TREC_MEASURES, ties="input_order",
                                 warn=False)          # the native file path
    result = lazy.compute(scheduler="sync")
    result.run_tag = reference.run_tag                # Parquet keeps no run tag
    assert_identical(result, reference)


@pytest.mark.slow
@pytest.mark.parametrize("ties", ["docno_desc", "input_order", "random", "average"])
def test_cumgains_topic_partitioned_dataset_is_read_file_by_file_into_arrow(
        run_file, tmp_path, monkeypatch, ties):
    """A dataset cumgain wrote partitioned by topic: a task per file, read by pyarrow
    and ranked from its Arrow buffers; Dask's Parquet reader and pandas frames are not
    used, and the numbers are the TREC file's."""
    pytest.importorskip("pyarrow")
    cgd.write_parquet(load_run(run_file), tmp_path / "run.parquet", partition_by_topic=True,
                      rows_per_file=300)
    read = []
    real = cgd._evaluate_file
    monkeypatch.setattr(cgd, "_evaluate_file",
                        lambda path, *rest: read.append(path) or real(path, *rest))
    monkeypatch.setattr(cgd.dd, "read_parquet", None)     # not Dask's reader
    monkeypatch.setattr(cgd, "_evaluate_partition", None)  # not pandas partitions
    measures = LINEAR_MEASURES if ties == "average" else TREC_MEASURES
    lazy = cgd.evaluate(QRELS, tmp_path / "run.parquet", measures, ties=ties, seed=5,
                        warn=False)
    assert lazy.shuffled is False
    result = lazy.compute(scheduler="sync")
    files = sorted((tmp_path / "run.parquet").glob("part.*.parquet"))
    assert sorted(read) == sorted(map(str, files)) and len(files) > 3
    reference = cumgain.evaluate(QRELS, str(run_file), measures, ties=ties, seed=5,
                                 warn=False)
    result.run_tag = reference.run_tag
    assert_identical(result, reference)
    # compute() runs a task per file and nothing else: the judgments and the setup are
    # one task each, shared (a setup passed as it is was rebuilt by a task per file)
    graph = {}
    for task in lazy.partition_tasks:
        graph.update(dict(task.__dask_graph__()))
    assert len(lazy.partition_tasks) == len(files) and len(graph) == len(files) + 2
    shown = lazy.compute(scheduler="sync", progress=True)
    shown.run_tag = reference.run_tag
    assert_identical(shown, reference)
    per_topic = lazy.per_topic.compute(scheduler="sync").sort_index()
    assert list(per_topic.index) == sorted(reference.topics)


def test_qrels_parquet_read_by_pyarrow_on_the_client(run_file, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    cgd.write_parquet(load_run(run_file), tmp_path / "run.parquet", partition_by_topic=True,
                      rows_per_file=300)
    from cumgain.trec_io import load_qrels
    cgd.write_parquet(load_qrels(QRELS), tmp_path / "qrels.parquet", rows_per_file=200)
    monkeypatch.setattr(cgd.dd, "read_parquet", None)
    result = cgd.evaluate(tmp_path / "qrels.parquet", tmp_path / "run.parquet",
                          TREC_MEASURES, warn=False).compute(scheduler="sync")
    reference = cumgain.evaluate(QRELS, str(run_file), TREC_MEASURES, warn=False)
    result.run_tag = reference.run_tag
    assert_identical(result, reference)


def _dataset_by_hand(folder: Path, parts: list) -> Path:
    """A run dataset with cumgain's manifest (partitioned by topic) around files
    written here, so that one can hold what cumgain would never write."""
    from cumgain.scale import manifest
    folder.mkdir()
    manifest.start(str(folder))
    for i, frame in enumerate(parts):
        frame.to_parquet(folder / f"part.{i}.parquet", index=False)
    manifest.finish(str(folder), {f"part.{i}.parquet": len(frame)
                                  for i, frame in enumerate(parts)},
                    kind="run", rows=sum(map(len, parts)), partitioned_by_topic=True)
    return folder


@pytest.mark.parametrize("column, value, message", [
    ("score", np.nan, r"part\.1\.parquet: row 1 \(query_id 'q2', doc_id 'b'\): score is NaN"),
    ("doc_id", None, r"part\.1\.parquet: doc_id is missing at row 1"),
])
def test_a_bad_row_in_a_dataset_file_names_the_file_and_row(tmp_path, column, value, message):
    pytest.importorskip("pyarrow")
    good = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    bad = pd.DataFrame({"query_id": ["q2", "q2"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    bad[column] = bad[column].astype(object)
    bad.loc[1, column] = value
    folder = _dataset_by_hand(tmp_path / "run", [good, bad])
    lazy = cgd.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, folder, ["map"], warn=False)
    with pytest.raises(InputError, match=message):
        lazy.compute(scheduler="sync")


def test_a_dataset_file_pyarrow_cannot_read_names_the_file(tmp_path):
    pytest.importorskip("pyarrow")
    good = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [2.0]})
    folder = _dataset_by_hand(tmp_path / "run", [good, good.assign(query_id="q2")])
    data = (folder / "part.1.parquet").read_bytes()
    (folder / "part.1.parquet").write_bytes(data[:4] + b"\0" * (len(data) - 8) + data[-4:])
    lazy = cgd.evaluate({"q1": {"a": 1}}, folder, ["map"], warn=False)
    with pytest.raises(InputError, match=r"part\.1\.parquet: "):
        lazy.compute(scheduler="sync")


def test_the_dataset_path_is_not_taken_when_it_must_not_be(run_file, tmp_path, monkeypatch):
    """partitioned_by_topic=False (shuffle), duplicates="first" and a dataset written
    in file order go through Dask's reader, with the same numbers."""
    pytest.importorskip("pyarrow")
    cgd.write_parquet(load_run(run_file), tmp_path / "by-topic", partition_by_topic=True,
                      rows_per_file=300)
    monkeypatch.setattr(cgd, "_evaluate_file", None)
    reference = cumgain.evaluate(QRELS, str(run_file), TREC_MEASURES, warn=False)
    for options in ({"partitioned_by_topic": False}, {"duplicates": "first"}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cgd.ShuffleWarning)
            result = cgd.evaluate(QRELS, tmp_path / "by-topic", TREC_MEASURES, warn=False,
                                  **options).compute(scheduler="sync")
        result.run_tag = reference.run_tag
        assert_identical(result, reference)


def test_parquet_in_file_order_is_shuffled(run_file, tmp_path):
    pytest.importorskip("pyarrow")
    cgd.write_parquet(load_run(run_file), tmp_path / "flat", rows_per_file=500)
    with pytest.warns(cgd.ShuffleWarning):
        lazy = cgd.evaluate(QRELS, str(tmp_path / "flat" / "*.parquet"), JK_MEASURES,
                            ties="random", seed=99, warn=False)
    reference = cumgain.evaluate(QRELS, str(run_file), JK_MEASURES, ties="random", seed=99,
                                 warn=False)
    result = lazy.compute(scheduler="sync")
    result.run_tag = reference.run_tag
    assert_identical(result, reference)


def test_write_parquet_refuses_to_overwrite(run_file, tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "out").mkdir()
    with pytest.raises(InputError, match="exists; pass overwrite=True"):
        cgd.write_parquet(load_run(run_file), tmp_path / "out")
    with pytest.raises(InputError, match="expected a Run or Qrels"):
        cgd.write_parquet(RUN, tmp_path / "other")
    with pytest.raises(InputError, match="rows_per_file must be a positive integer"):
        cgd.write_parquet(load_run(run_file), tmp_path / "other", rows_per_file=0)


# ---------------------------------------------------------------- complete or absent

MANIFEST, IN_PROGRESS = "_cumgain_manifest.json", "_cumgain_in_progress"


def write_dataset(run_file, folder, **options):
    return cgd.write_parquet(load_run(run_file), folder, partition_by_topic=True,
                             rows_per_file=300, **options)


def test_write_parquet_writes_a_manifest_last(run_file, tmp_path):
    pytest.importorskip("pyarrow")
    import json
    files = write_dataset(run_file, tmp_path / "run.parquet")
    names = sorted(p.name for p in (tmp_path / "run.parquet").iterdir())
    parts = [f"part.{i}.parquet" for i in range(files)]
    assert names == sorted(parts + [MANIFEST])
    manifest = json.loads((tmp_path / "run.parquet" / MANIFEST).read_text())
    assert manifest["format"] == "cumgain-parquet-dataset" and manifest["version"] == 1
    assert manifest["rows"] == len(RUN) and manifest["partitioned_by_topic"] is True
    assert sorted(entry["name"] for entry in manifest["files"]) == sorted(parts)
    for entry in manifest["files"]:
        path = tmp_path / "run.parquet" / entry["name"]
        assert entry["bytes"] == path.stat().st_size
        assert entry["rows"] == len(pd.read_parquet(path))
    assert sum(entry["rows"] for entry in manifest["files"]) == len(RUN)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.parquet"]


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_an_interrupted_write_parquet_leaves_nothing(run_file, tmp_path, monkeypatch, error):
    """The writer fails after two part files (a full disk, or Ctrl-C), under dask's
    threaded scheduler: the target does not exist and no temporary is left; with
    overwrite=True the old dataset is kept as it was."""
    pq = pytest.importorskip("pyarrow.parquet")
    write_dataset(run_file, tmp_path / "old")
    before = {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()}
    real, written = pq.write_table, []

    def write_table(*args, **kwargs):
        if len(written) == 2:
            raise error
        written.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", write_table)
    for target, overwrite in ((tmp_path / "new", False), (tmp_path / "old", True)):
        written.clear()
        with dask.config.set(scheduler="threads"), pytest.raises(type(error)):
            write_dataset(run_file, target, overwrite=overwrite)
        assert len(written) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()} == before


def tamper(folder: Path, how: str) -> str:
    """Damage a cumgain dataset; return what the error must say."""
    parts = sorted(folder.glob("part.*.parquet"))
    if how == "missing":
        parts[-1].unlink()
        return f"missing {parts[-1].name}"
    if how == "extra":
        (folder / "part.99.parquet").write_bytes(parts[0].read_bytes())
        return "extra part.99.parquet"
    if how == "resized":
        size = parts[1].stat().st_size
        parts[1].write_bytes(parts[1].read_bytes()[:size // 2])
        return f"{parts[1].name} has {size // 2:,} bytes, the manifest says {size:,}"
    if how == "unfinished":
        (folder / IN_PROGRESS).write_text("")
        return "an unfinished cumgain dataset"
    (folder / MANIFEST).write_text((folder / MANIFEST).read_text()[:40])   # cut short
    return "the manifest of a cumgain dataset is damaged or incomplete"


@pytest.mark.parametrize("how", ["missing", "extra", "resized", "unfinished", "cut short"])
@pytest.mark.filterwarnings("ignore::cumgain.dask.ShuffleWarning")
def test_readers_refuse_a_dataset_that_does_not_match_its_manifest(run_file, tmp_path, how):
    pytest.importorskip("pyarrow")
    folder = tmp_path / "run.parquet"
    write_dataset(run_file, folder)
    message = tamper(folder, how)
    runs = [folder, str(folder), str(folder / "*.parquet"), folder / "part.0.parquet"]
    for run in runs:
        with pytest.raises(InputError, match=re.escape(message)) as caught:
            cgd.evaluate(QRELS, run, ["map"], warn=False)
        assert str(folder) in str(caught.value)
    with pytest.raises(InputError, match=re.escape(message)):
        cgd.read_run(folder)
    with pytest.raises(InputError, match=re.escape(message)):
        cgd.average_vectors(QRELS, folder, 5)
    with pytest.raises(InputError, match=re.escape(message)):
        cgd.evaluate(folder, as_dask(RUN), ["map"], warn=False)        # as qrels


def test_datasets_written_by_others_are_read_as_they_are(tmp_path):
    """A Parquet folder from pandas (no manifest) evaluates as before; so does one that
    lost a file: cumgain cannot know, and does not claim to."""
    pytest.importorskip("pyarrow")
    for i, rows in enumerate(np.array_split(np.arange(len(RUN)), 3)):
        RUN.iloc[rows].to_parquet(tmp_path / f"chunk-{i}.parquet", index=False)
    with pytest.warns(cgd.ShuffleWarning):
        lazy = cgd.evaluate(QRELS, tmp_path, LINEAR_MEASURES, warn=False)
    assert_identical(lazy.compute(scheduler="sync"),
                     cumgain.evaluate(QRELS, RUN, LINEAR_MEASURES, warn=False))


def test_write_parquet_overwrites_only_its_own_dataset(run_file, tmp_path):
    pytest.importorskip("pyarrow")
    write_dataset(run_file, tmp_path / "ours")
    write_dataset(run_file, tmp_path / "ours", overwrite=True)
    assert cgd.read_run(tmp_path / "ours").npartitions > 3
    (tmp_path / "theirs").mkdir()
    RUN.to_parquet(tmp_path / "theirs" / "data.parquet")
    with pytest.raises(InputError, match="holds files cumgain did not write"):
        write_dataset(run_file, tmp_path / "theirs", overwrite=True)
    assert [p.name for p in (tmp_path / "theirs").iterdir()] == ["data.parquet"]
    with pytest.raises(InputError, match="holds the input"):
        cgd.write_parquet(load_run(run_file), run_file.parent, overwrite=True)
    assert run_file.exists()


# ---------------------------------------------------------------- averaged vectors

def ranked_levels(run: pd.DataFrame, qrels: pd.DataFrame, topics: list) -> list:
    """Each topic's judged levels in trec_eval's order (score descending, then docno
    descending), built with pandas alone."""
    merged = run.merge(qrels, on=["query_id", "doc_id"], how="left")
    merged["relevance"] = merged.relevance.fillna(0.0)
    merged = merged.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    groups = dict(tuple(merged.groupby("query_id")))
    return [groups[t].relevance.to_numpy(dtype=float) if t in groups else np.zeros(0)
            for t in topics]


def summation_bound(matrix: np.ndarray) -> np.ndarray:
    """|avg_1 - avg_2| <= 2 n u mean|x| for two summation orders of n terms."""
    return 2 * matrix.shape[0] * UNIT_ROUNDOFF * np.nanmean(np.abs(matrix), axis=0)


@pytest.mark.parametrize("gains, discount, base, topics", [
    ("0-1-10-100", "tois", 2.0, "both"),
    (None, "trec_eval", 2.0, "both"),
    ({0: 0, 1: 1, 2: 3, 3: 7}, "tois", 10.0, "qrels"),
])
def test_average_vectors_match_the_vector_api(gains, discount, base, topics):
    depth = 25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        averaged = cgd.average_vectors(QRELS, as_dask(RUN, 5), depth, gains=gains,
                                       discount=discount, base=base, topics=topics,
                                       scheduler="sync")
        chosen = cumgain.evaluate(QRELS, RUN, ["num_q"], topics=topics).topics
    assert averaged.shuffled and averaged.n_topics == len(chosen)
    mapping = "identity" if gains is None else gains
    ranked = cumgain.map_gains(ranked_levels(RUN, QRELS, list(chosen)), mapping)
    judged_levels = [QRELS.relevance[QRELS.query_id == t].to_numpy(dtype=float) for t in chosen]
    judged = cumgain.map_gains(judged_levels, mapping)
    ideal = cumgain.ideal_gains(judged, depth)
    expected = {
        "cg": cumgain.cg(ranked, depth),
        "dcg": cumgain.dcg(ranked, depth, discount=discount, base=base),
        "ideal_cg": cumgain.cg(ideal, depth),
        "ideal_dcg": cumgain.dcg(ideal, depth, discount=discount, base=base),
        "ncg": cumgain.ncg(ranked, judged, depth),
        "ndcg": cumgain.ndcg(ranked, judged, depth, discount=discount, base=base),
    }
    for name, vectors in expected.items():
        difference = np.abs(getattr(averaged, name) - cumgain.avg_vect(vectors))
        assert (difference <= summation_bound(vectors)).all(), name
    assert (averaged.ndcg_counts == len(chosen)).all()
    order = averaged.average_then_normalise("ndcg")
    assert np.array_equal(order, cumgain.norm_vect(averaged.dcg, averaged.ideal_dcg))


@pytest.mark.parametrize("measure, field", [("CG", "cg"), ("DCG", "dcg"), ("nCG", "ncg"),
                                            ("nDCG", "ndcg")])
@pytest.mark.parametrize("zero_ideal", [0.0, float("nan")])
def test_average_vectors_match_the_single_machine_curves(measure, field, zero_ideal):
    """cumgain.curves.compute averages the same per-topic vectors on one machine
    (normalise_then_average for nCG/nDCG): equal within the summation bound, and the
    ideal curves of CG and DCG too."""
    depth, gains, base = 30, "0-1-10-100", 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        averaged = cgd.average_vectors(QRELS, as_dask(RUN, 5), depth, gains=gains, base=base,
                                       zero_ideal=zero_ideal, topics="qrels", scheduler="sync")
        single = curves.compute(QRELS, {"run": RUN}, measure, depth=depth, gains=gains,
                                base=base, order="normalise_then_average",
                                zero_ideal=zero_ideal, per_topic=True, topics="qrels")
    assert averaged.n_topics == len(single.topics)
    bound = summation_bound(single.per_topic["run"])
    assert (np.abs(getattr(averaged, field) - single.runs["run"]) <= bound).all()
    if measure in ("CG", "DCG"):
        ideal = getattr(averaged, f"ideal_{field}")
        assert (np.abs(ideal - single.ideal) <= summation_bound(single.ideal_per_topic)).all()
    else:
        present = ~np.isnan(single.per_topic["run"])
        assert np.array_equal(getattr(averaged, f"{field}_counts"), present.sum(axis=0))


@pytest.mark.parametrize("policies", [
    {},
    {"judged_only": True},
    {"judged_only": True, "ties": "average"},
    {"judged_only": True, "ties": "random", "seed": 11},
    {"ties": "input_order", "score_precision": "float32", "topics": "qrels"},
], ids=str)
def test_average_vectors_at_rank_k_are_the_engines_mean_at_k(policies):
    """The vectors at rank k against the engine's own CG@k, DCG@k, nCG@k, nDCG@k means
    (its scalar kernels and its -J and tie handling, a separate code path from rank()
    and the vector kernels). The gains map level -1 to 5: judged-negative documents
    still gain nothing, in the ranking and in the ideal, as in the engine."""
    depth = 12
    gains = {-1: 5, 0: 0, 1: 1, 2: 10, 3: 100}
    spelled = "gains={-1:5,0:0,1:1,2:10,3:100}"
    cutoffs = (1, 5, depth)
    measures = [f"{name}@{k}({spelled})"       # one default discount: trec_eval's
                for name in ("CG", "DCG", "nCG", "nDCG") for k in cutoffs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        averaged = cgd.average_vectors(QRELS, as_dask(RUN, 4), depth, gains=gains,
                                       scheduler="sync", **policies)
    reference = cumgain.evaluate(QRELS, RUN, measures, warn=False, **policies)
    assert averaged.n_topics == len(reference.topics)
    for measure in reference.measures:
        curve = getattr(averaged, measure.family.lower())          # cg, dcg, ncg, ndcg
        per_topic = reference.values[measure.name]
        bound = 2 * len(per_topic) * UNIT_ROUNDOFF * np.mean(np.abs(per_topic))
        assert abs(curve[measure.cutoff - 1] - reference.means[measure.name]) <= bound, \
            measure.name


def test_average_vectors_zero_ideal_nan_leaves_topics_out():
    qrels = QRELS.assign(relevance=np.where(QRELS.query_id == "q5", 0, QRELS.relevance))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        averaged = cgd.average_vectors(qrels, as_dask(RUN), 10, zero_ideal=float("nan"),
                                       scheduler="sync")
    assert (averaged.ndcg_counts == averaged.n_topics - 1).all()
    assert (averaged.ncg_counts == averaged.n_topics - 1).all()
    assert np.isfinite(averaged.ndcg).all()


def test_average_vectors_bad_arguments():
    with pytest.raises(InputError, match="depth must be a positive integer"):
        cgd.average_vectors(QRELS, as_dask(RUN), 0)
    with pytest.raises(InputError, match="discount must be one of"):
        cgd.average_vectors(QRELS, as_dask(RUN), 5, discount="log")
    with pytest.raises(InputError, match="unknown gain scheme"):
        cgd.average_vectors(QRELS, as_dask(RUN), 5, gains="0-1-x")
    with pytest.raises(InputError, match="base must be a number > 1"):
        cgd.average_vectors(QRELS, as_dask(RUN), 5, base=1.0)
    with pytest.raises(InputError, match="base must be a number > 1"):
        cgd.average_vectors(QRELS, as_dask(RUN), 5, base="2")


# ---------------------------------------------------------------- a real cluster

def big_collection(n_topics: int, docs: int, seed: int):
    """``n_topics x docs`` rows with unique docnos per topic, scores with ties, ~10%
    judged (levels 0-3); rows shuffled across topics."""
    rng = np.random.default_rng(seed)
    n = n_topics * docs
    topic = np.repeat(np.arange(n_topics), docs)
    doc = rng.permutation(n)               # unique overall, so unique within a topic
    run = pd.DataFrame({"query_id": pd.array(np.char.add("q", topic.astype(str)), dtype=str),
                        "doc_id": pd.array(np.char.add("d", doc.astype(str)), dtype=str),
                        "score": np.round(rng.normal(10, 2, size=n), 1)})
    judged = rng.random(n) < 0.1
    qrels = pd.DataFrame({"query_id": run.query_id[judged].to_numpy(),
                          "doc_id": run.doc_id[judged].to_numpy(),
                          "relevance": rng.integers(0, 4, size=int(judged.sum()))})
    order = rng.permutation(n)
    return run.iloc[order].reset_index(drop=True), qrels


def nested(frame: pd.DataFrame, value: str) -> dict:
    out: dict = {}
    for q, d, v in zip(frame.query_id.tolist(), frame.doc_id.tolist(), frame[value].tolist()):
        out.setdefault(q, {})[d] = float(v)
    return out


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.mark.slow
def test_local_cluster_two_million_rows(cluster_client, tmp_path):
    """2,000 topics x 1,000 documents in 8 Parquet files (topics interleaved), shuffled and
    evaluated by 2 worker processes: every per-topic value and mean equals the single-
    machine engine's, under ties="input_order" (so the shuffle must keep row order)."""
    pytest.importorskip("pyarrow")
    run, qrels = big_collection(2000, 1000, seed=20)
    for i, part in enumerate(np.array_split(np.arange(len(run)), 8)):
        run.iloc[part].to_parquet(tmp_path / f"part-{i:02d}.parquet", index=False)
    measures = ["ndcg_cut_10", "map", "gm_map", "P_10", "recip_rank", "num_rel_ret",
                "nDCG@20(discount=tois, gains=0-1-10-100)"]
    with pytest.warns(cgd.ShuffleWarning):
        lazy = cgd.evaluate(qrels, str(tmp_path), measures, ties="input_order")
    result = lazy.compute()
    reference = cumgain.evaluate(nested(qrels, "relevance"), nested(run, "score"), measures,
                                 ties="input_order")
    assert len(result.topics) == 2000
    assert_identical(result, reference)


@pytest.mark.slow
def test_local_cluster_topic_partitioned_dataset(cluster_client, run_file, tmp_path,
                                                 monkeypatch):
    """A dataset cumgain wrote partitioned by topic, on 2 worker processes: the prepared
    judgments are one task holding them (which the scheduler can run again), a task per
    file (submitted as it is; through dask.compute with compute
    options the client's map does not take); the numbers are the TREC file's, with and
    without a progress bar."""
    pytest.importorskip("pyarrow")
    cgd.write_parquet(load_run(run_file), tmp_path / "run.parquet", partition_by_topic=True,
                      rows_per_file=300)
    lazy = cgd.evaluate(QRELS, tmp_path / "run.parquet", TREC_MEASURES, warn=False)
    assert len(lazy.partition_files) > 3
    reference = cumgain.evaluate(QRELS, str(run_file), TREC_MEASURES, warn=False)
    held = []
    submit_task = cluster_client.submit
    monkeypatch.setattr(cluster_client, "submit",
                        lambda function, data, **options: held.append(data)
                        or submit_task(function, data, **options))
    mapped = []
    submit = cluster_client.map
    monkeypatch.setattr(cluster_client, "map",
                        lambda *tasks, **options: mapped.append(options) or submit(*tasks,
                                                                                   **options))
    for progress, options in ((False, {}), (True, {}), (False, {"retries": 1}),
                              (True, {"retries": 1})):
        result = lazy.compute(progress=progress, **options)
        result.run_tag = reference.run_tag
        assert_identical(result, reference)
    assert held == [lazy.judged.prepared] * 4
    assert len(mapped) == 2 and all(options["pure"] is False for options in mapped)


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["the worker holding the judgments", "the other worker"])
def test_local_cluster_loses_a_worker_mid_job(cluster_client, run_file, tmp_path,
                                             monkeypatch, victim):
    """A worker process killed while the files' tasks run: the scheduler computes what
    it held again (the judgments are a task holding them, never data scattered to one
    worker, which cannot be recomputed: losing it failed the job with "lost
    dependencies") and the numbers are the TREC file's."""
    pytest.importorskip("pyarrow")
    cgd.write_parquet(load_run(run_file), tmp_path / "run.parquet", partition_by_topic=True,
                      rows_per_file=100)
    lazy = cgd.evaluate(QRELS, tmp_path / "run.parquet", TREC_MEASURES, warn=False)
    reference = cumgain.evaluate(QRELS, str(run_file), TREC_MEASURES, warn=False)
    cluster = cluster_client.cluster
    cluster_client.wait_for_workers(2, timeout=60)
    judgments = []
    submit, submit_map = cluster_client.submit, cluster_client.map

    def held(function, *args, **options):
        judgments.append(submit(function, *args, **options))
        judgments[-1].result()
        return judgments[-1]

    def killing(*tasks, **options):
        futures = submit_map(*tasks, **options)
        holders = set(cluster_client.who_has(judgments[-1])[judgments[-1].key])
        for nanny in list(cluster.workers.values()):
            if (nanny.worker_address in holders) == (victim.startswith("the worker holding")):
                nanny.process.process.kill()
                break
        return futures

    monkeypatch.setattr(cluster_client, "submit", held)
    monkeypatch.setattr(cluster_client, "map", killing)
    result = lazy.compute()
    monkeypatch.undo()
    result.run_tag = reference.run_tag
    assert_identical(result, reference)
    cluster_client.wait_for_workers(2, timeout=60)      # (the nanny starts it again)


# ---------------------------------------------------------------- the columnar path

@pytest.mark.parametrize("ties", ["docno_desc", "input_order", "random"])
def test_partitions_are_ranked_by_the_columnar_path(monkeypatch, ties):
    """Each partition goes to the native ranker as columns (no dict of its rows), against
    judgments shipped as an Arrow table and prepared natively; the values stay the
    single-machine ones bit for bit."""
    reference = cumgain.evaluate(QRELS, RUN, ["map", "ndcg_cut.10", "P.5"], warn=False,
                                 ties=ties, seed=3)
    calls = spy_on_the_columnar_path(monkeypatch)
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):   # (after the cluster test)
        result = dask_result(["map", "ndcg_cut.10", "P.5"], ties=ties, seed=3)
    assert_identical(result, reference)
    assert len(calls) == 4 and sum(calls) == len(RUN)


def spy_on_the_columnar_path(monkeypatch) -> list:
    """From now on: the rows of each table the native ranker ranks, and no dict path."""
    from cumgain.io.native import reader as native
    calls = []
    rank_columns = native._rank_columns

    def spy(make_ranker, run, threads):
        calls.append(len(run))
        return rank_columns(make_ranker, run, threads)

    monkeypatch.setattr(native, "_rank_columns", spy)
    monkeypatch.setattr(cgd, "_run_by_topic", None)     # the dict path is not taken
    return calls


@pytest.mark.parametrize("policies", [{}, {"ties": "input_order"}, {"judged_only": True}])
def test_average_vectors_rank_partitions_by_the_columnar_path(monkeypatch, policies):
    """Against the dict path, within the summation-order bound (the columnar ranking
    gives each partition's topics in byte order, the dict path in input order)."""
    with monkeypatch.context() as patched, \
            dask.config.set({"dataframe.shuffle.method": "tasks"}):
        patched.setattr(dask_vectors, "_vector_task", lambda judged, setup: dask.delayed(
            judged, pure=False, traverse=False))
        expected = cgd.average_vectors(QRELS, as_dask(RUN), 20, warn=False,
                                       partitioned_by_topic=False, scheduler="sync", **policies)
    calls = spy_on_the_columnar_path(monkeypatch)
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):   # (after the cluster test)
        result = cgd.average_vectors(QRELS, as_dask(RUN), 20, warn=False,
                                     partitioned_by_topic=False, scheduler="sync", **policies)
    assert sum(calls) == len(RUN)
    for name in ("cg", "dcg", "ideal_cg", "ideal_dcg", "ncg", "ndcg"):
        bound = 2 * len(RUN.query_id.unique()) * UNIT_ROUNDOFF * np.abs(getattr(expected, name))
        assert np.all(np.abs(getattr(result, name) - getattr(expected, name)) <= bound), name
    assert result.n_topics == expected.n_topics


def test_prepared_judgments_travel_as_a_table():
    import pickle
    from cumgain.io.native.reader import PreparedQrelsTable
    judged = dask_qrels._judged(QRELS, "error")
    task = cgd._prepared_task(judged, "error")
    (prepared,) = dask.compute(task, scheduler="sync")
    assert isinstance(prepared, PreparedQrelsTable) and prepared is judged.prepared
    assert str(prepared.table.schema.field("query_id").type).startswith("dictionary")
    shipped = pickle.dumps(prepared)
    assert len(shipped) < 40 * len(QRELS)       # buffers, not a dict per topic
    again = pickle.loads(shipped)
    assert isinstance(again, PreparedQrelsTable) and again.topics == prepared.topics
    assert cgd._prepared_task(judged, "first").compute(scheduler="sync") is not None
    assert not isinstance(cgd._prepared_task(judged, "first").compute(scheduler="sync"),
                          PreparedQrelsTable)   # duplicates="first": the dict path


@pytest.mark.parametrize("levels", ["whole", "halves", "-0.0", "200"])
def test_prepared_judgments_travel_with_int8_levels_where_they_fit(levels):
    """Whole levels in [-128, 127] (no -0.0) travel as int8, 7 bytes less a judgment;
    others as float64; either way the evaluation is the reference one."""
    import pickle
    qrels = QRELS.astype({"relevance": np.float64})
    if levels == "halves":
        qrels.loc[0, "relevance"] = 0.5
    elif levels == "-0.0":
        qrels.loc[0, "relevance"] = -0.0
    elif levels == "200":
        qrels.loc[0, "relevance"] = 200.0
    judged = dask_qrels._judged(qrels, "error")
    shipped = judged.prepared.table.column("relevance")
    assert str(shipped.type) == ("int8" if levels == "whole" else "double")
    assert np.array_equal(shipped.to_numpy().astype(np.float64), qrels.relevance.to_numpy())
    again = pickle.loads(pickle.dumps(judged.prepared))
    assert np.array_equal(again.relevance, judged.prepared.relevance)
    reference = cumgain.evaluate(qrels, RUN, ["map", "ndcg_cut.10"], warn=False)
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        assert_identical(dask_result(["map", "ndcg_cut.10"], qrels=qrels), reference)


@pytest.mark.parametrize("form", ["parquet in parts", "arrow slices"])
def test_prepared_judgments_travel_as_their_own_rows_only(form, tmp_path):
    """A table read in batches (Parquet) or sliced holds views into bigger buffers,
    which pickle whole; the judgments travel compact (as many bytes as above)."""
    import pickle
    pa = pytest.importorskip("pyarrow")
    if form == "parquet in parts":
        from cumgain.trec_io import load_qrels
        cgd.write_parquet(load_qrels(QRELS), tmp_path / "qrels", rows_per_file=100)
        qrels = tmp_path / "qrels"
    else:
        whole = pa.Table.from_pandas(pd.concat([QRELS] * 8, ignore_index=True))
        half = len(QRELS) // 2          # two chunks, each a slice of eight copies
        qrels = pa.concat_tables([whole.slice(0, half), whole.slice(half, len(QRELS) - half)])
    judged = dask_qrels._judged(qrels, "error")
    assert len(judged.prepared.table) == len(QRELS)
    assert len(pickle.dumps(judged.prepared)) < 40 * len(QRELS)


@pytest.mark.parametrize("form", ["pandas", "arrow", "parquet"])
def test_table_qrels_are_read_natively_on_the_client(form, monkeypatch, tmp_path):
    """Qrels that are a table never go through the reference reader or a dict of their
    judgments; the values stay bit-identical."""
    import pyarrow as pa
    qrels = {"pandas": QRELS, "arrow": pa.Table.from_pandas(QRELS, preserve_index=False),
             "parquet": tmp_path / "qrels.parquet"}[form]
    if form == "parquet":
        QRELS.to_parquet(qrels, index=False)
    reference = cumgain.evaluate(QRELS, RUN, ["map", "ndcg_cut.10"], warn=False)

    def refuse(*args, **kwargs):
        raise AssertionError("the reference reader was used")

    monkeypatch.setattr(dask_qrels, "load_qrels", refuse)
    monkeypatch.setattr(dask_qrels._TopicJudgments, "__getitem__", refuse)
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):   # (after the cluster test)
        result = dask_result(["map", "ndcg_cut.10"], qrels=qrels)
    assert_identical(result, reference)


@pytest.mark.parametrize("form", ["plain", "gzip", "in parts"])
def test_trec_qrels_files_are_read_natively_into_the_same_table(form, tmp_path, monkeypatch):
    """A TREC qrels file (topics interleaved) is read by the native reader on the client
    and made an Arrow table from its buffers: the same table, row for row, as the
    reference reader's (the levels int8 in both, as the native table holds whole levels
    that fit: 7 bytes less a judgment to ship), and no reference read."""
    import gzip
    pytest.importorskip("pyarrow")
    from cumgain.io.native import parts as _native_parts
    from cumgain.io.native import reader as native
    text = "".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False))
    path = tmp_path / ("qrels.txt.gz" if form == "gzip" else "qrels.txt")
    path.write_bytes(gzip.compress(text.encode()) if form == "gzip" else text.encode())
    if form == "in parts":
        monkeypatch.setattr(_native_parts, "PART_BYTES", 64)
        monkeypatch.setattr(native, "auto_threads", lambda threads: 3)
    expected = dask_qrels._judged(dask_qrels.load_qrels(path), "error").prepared.table
    monkeypatch.setattr(dask_qrels, "load_qrels", None)
    judged = dask_qrels._judged(path, "error")
    assert str(judged.prepared.table.schema.field("relevance").type) == "int8"
    assert judged.prepared.table.equals(expected)
    assert judged.prepared.topics == tuple(dict.fromkeys(QRELS.query_id))
    reference = cumgain.evaluate(QRELS, RUN, ["map", "ndcg_cut.10"], warn=False)
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):   # (after the cluster test)
        assert_identical(dask_result(["map", "ndcg_cut.10"], qrels=path), reference)


@pytest.mark.filterwarnings("ignore::cumgain.dask.ShuffleWarning")
def test_a_trec_qrels_file_the_native_reader_refuses_is_read_as_before(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d1 2\n")
    with pytest.raises(InputError, match=r"qrels.txt.*duplicate"):
        cgd.evaluate(path, as_dask(RUN), ["map"], warn=False)


@pytest.mark.parametrize("form", ["pandas", "integer ids", "trec_file", "dict"])
def test_topic_judgments_are_the_reference_readers_dicts(form, tmp_path):
    """by_topic built from the table, topic by topic, equals the reference reader's."""
    qrels = QRELS
    if form == "integer ids":
        qrels = QRELS.assign(query_id=np.arange(len(QRELS)) % 7, doc_id=np.arange(len(QRELS)))
    elif form == "trec_file":
        qrels = tmp_path / "qrels.txt"
        qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False)))
    elif form == "dict":
        qrels = dict(cumgain.trec_io.qrels_from_dataframe(QRELS).to_dict(), q999={})
    judged = dask_qrels._judged(qrels, "error")
    expected = stream.judged_topics(qrels)
    assert isinstance(judged.by_topic, dask_qrels._TopicJudgments) and judged.prepared is not None
    assert dict(judged.by_topic) == expected.by_topic
    assert list(judged.by_topic) == list(expected.by_topic)
    assert judged.empty == expected.empty


def test_duplicate_judgments_first_are_prepared_once_dropped():
    qrels = pd.concat([QRELS, QRELS.iloc[:5].assign(relevance=9)], ignore_index=True)
    with pytest.raises(InputError, match="duplicate"):
        dask_qrels._judged(qrels, "error")
    with pytest.warns(DuplicatesDroppedWarning, match="dropped 5 duplicate"):
        judged = dask_qrels._judged(qrels, "first")
    assert judged.prepared is not None and len(judged.prepared.table) == len(QRELS)
    with pytest.warns(DuplicatesDroppedWarning):
        reference = stream.judged_topics(qrels, "first")
    assert dict(judged.by_topic) == reference.by_topic
