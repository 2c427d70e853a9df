"""ir_measures' own providers' measures (ERR, Judged, Compat, Accuracy) and its msmarco
RR: per-topic differential tests against the providers themselves (each forced by
name), on generated inputs (ties, unjudged and negatively judged documents, short and
empty rankings, unretrieved relevant documents) and on ../shared/data/real; a literal
run of gdeval.pl with full-precision output; hand-computed cases; parameter errors.

Tie rules: gdeval orders equal scores by docno descending (cumgain's default); the
judged, compat and msmarco providers by docno ascending (``ties="docno_asc"`` here); the
accuracy provider keeps the run's order (``ties="input_order"``)."""
from __future__ import annotations

import math
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from cumgain import InputError, evaluate

ir_measures = pytest.importorskip("ir_measures")
from ir_measures.providers import registry  # noqa: E402

PERL = shutil.which("perl")
GDEVAL = Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"


def provider_values(provider: str, spelling: str, qrels, run) -> dict:
    """The provider's per-topic values of one measure."""
    measure = ir_measures.parse_measure(spelling)
    assert registry[provider].supports(measure)
    return {m.query_id: m.value for m in registry[provider].iter_calc([measure], qrels, run)}


def cumgain_values(spelling: str, qrels, run, **policies) -> dict:
    result = evaluate(qrels, run, [spelling], topics="qrels", warn=False, **policies)
    return dict(zip(result.topics, result.values[spelling].tolist()))


def generated(seed: int, *, positive_scores: bool = False, max_level: int = 4) -> tuple:
    """Random qrels and run with numeric topic ids (gdeval's requirement): levels -1 .. 4,
    scores on a coarse grid (many ties; negative and zero ones unless
    ``positive_scores``), unjudged documents,
    unretrieved judged ones, a qrels topic the run lacks, a run topic the qrels lack,
    and now and then a topic without a relevant judgment. The qrels of a topic are in
    docno order (the compat provider's ideal keeps it among equals)."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for topic in range(1, rng.randint(2, 7)):
        docs = [f"d{i:02d}" for i in range(rng.randint(1, 25))]
        judged = sorted(rng.sample(docs, rng.randint(0, len(docs))))
        no_relevant = rng.random() < 0.15
        qrels[str(topic)] = {doc: (rng.choice([-1, 0]) if no_relevant else
                                   rng.choice([-1, 0, 0, 1, 1, 2, 3, max_level]))
                             for doc in judged}
        if not qrels[str(topic)]:
            qrels[str(topic)] = {"d99": rng.choice([0, 1])}
        retrieved = rng.sample(docs, rng.randint(1, len(docs)))
        grid = [s / 4 for s in range(1 if positive_scores else -4, 9)]
        run[str(topic)] = {doc: rng.choice(grid) for doc in retrieved}
    qrels["900"] = {"d01": 2, "d02": 0}         # not in the run
    run["901"] = {"d01": 1.0}                   # not in the qrels
    return qrels, run


def assert_same(ours: dict, theirs: dict, *, tolerance: float = 0.0):
    assert set(ours) == set(theirs), (sorted(ours), sorted(theirs))
    for topic in theirs:
        if tolerance == 0.0:
            assert ours[topic] == theirs[topic], (topic, ours[topic], theirs[topic])
        else:
            assert abs(ours[topic] - theirs[topic]) <= tolerance, \
                (topic, ours[topic], theirs[topic])


# ---------------------------------------------------------------- gdeval's ERR

def gdeval_full_precision(tmp_path: Path, qrels, run, k: int) -> dict:
    """gdeval.pl as ir_measures ships it, its %.5f changed to %.17g (the only change)."""
    script = GDEVAL.read_text().replace("%.5f,%.5f", "%.17g,%.17g")
    assert "%.17g,%.17g" in script
    (tmp_path / "gdeval.pl").write_text(script)
    (tmp_path / "qrels").write_text("".join(
        f"{q} 0 {d} {level}\n" for q, docs in qrels.items() for d, level in docs.items()))
    (tmp_path / "run").write_text("".join(
        f"{q} Q0 {d} {rank} {score!r} run\n" for q, docs in run.items()
        for rank, (d, score) in enumerate(docs.items())))
    output = subprocess.run([PERL, str(tmp_path / "gdeval.pl"), str(tmp_path / "qrels"),
                             str(tmp_path / "run"), str(k)], check=True,
                            capture_output=True, text=True).stdout
    values = {}
    for line in output.splitlines()[1:]:
        _, topic, _, err = line.split(",")
        values[topic] = float(err)
    return values


needs_perl = pytest.mark.skipif(PERL is None, reason="perl is not installed")


@needs_perl
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("k", [1, 5, 20])
def test_err_is_gdeval_exactly(tmp_path, seed, k):
    """gdeval prints topics with a relevant judgment; the others (and the qrels topic the
    run lacks) are 0 in ir_measures and here."""
    qrels, run = generated(seed)
    theirs = gdeval_full_precision(tmp_path, qrels, run, k)
    ours = cumgain_values(f"ERR@{k}", qrels, run)
    for topic, value in ours.items():
        assert value == theirs.get(topic, 0.0), (topic, value, theirs.get(topic))


@needs_perl
@pytest.mark.parametrize("seed", range(6))
def test_err_is_ir_measures_gdeval_to_its_five_decimals(seed):
    """ir_measures' value is gdeval's %.5f print: equal to within 5e-6 (ir_measures#50)."""
    qrels, run = generated(seed)
    assert_same(cumgain_values("ERR@10", qrels, run),
                provider_values("gdeval", "ERR@10", qrels, run), tolerance=5e-6 + 1e-12)


def test_err_hand_computed():
    """Levels 2, then a tie of 1 and 0 broken by docno descending (c before b):
    3/16 + (1/16)(13/16)/2."""
    qrels = {"1": {"a": 2, "b": 0, "c": 1, "x": -1}}
    run = {"1": {"a": 1.0, "b": 0.5, "c": 0.5, "x": 0.4, "u": 0.3}}
    assert cumgain_values("ERR@10", qrels, run)["1"] == 3 / 16 + (1 / 16) * (13 / 16) / 2
    assert cumgain_values("ERR@1", qrels, run)["1"] == 3 / 16
    assert cumgain_values("ERR", qrels, run)["1"] == cumgain_values("ERR@10", qrels, run)["1"]
    # max_rel raises gdeval's MAX_JUDGMENT: R = (2^g - 1) / 2^5
    assert cumgain_values("ERR(max_rel=5)@1", qrels, run)["1"] == 3 / 32


def test_err_refuses_levels_above_gdevals_maximum():
    qrels, run = {"1": {"a": 5}}, {"1": {"a": 1.0}}
    with pytest.raises(InputError, match=r"level 5 is above 4.*ERR\(max_rel=5\)"):
        evaluate(qrels, run, ["ERR@10"])
    assert evaluate(qrels, run, ["ERR(max_rel=5)@10"]).means["ERR(max_rel=5)@10"] == 31 / 32
    with pytest.raises(InputError, match="max_rel must be a whole number in"):
        evaluate(qrels, run, ["ERR(max_rel=0)@10"])


@pytest.mark.parametrize("seed", range(6))
def test_err_with_exponential_gains_is_gdevals_err(seed):
    """ERR(gains=m): R = m(level) / (g_max + 1), g_max = m(4) unless max_rel or a table
    says otherwise; exponential gains give gdeval's (2^level - 1) / 2^4, bit for bit."""
    qrels, run = generated(seed)
    for k in (1, 5, 20):
        plain = cumgain_values(f"ERR@{k}", qrels, run)
        assert cumgain_values(f"ERR(gains='exponential')@{k}", qrels, run) == plain
        assert cumgain_values(f"ERR(gains={{0:0,1:1,2:3,3:7,4:15}})@{k}", qrels, run) == plain
    assert cumgain_values("ERR(gains='exponential',max_rel=5)@10", qrels, run) == \
        cumgain_values("ERR(max_rel=5)@10", qrels, run)


def test_err_with_a_gains_table_hand_computed():
    """gains {0:0, 1:1, 2:2, 4:4}: g_max = 4, R = g / 5; ranks a (2), c (1), b (0)."""
    qrels = {"1": {"a": 2, "b": 0, "c": 1, "x": 4}}
    run = {"1": {"a": 1.0, "c": 0.5, "b": 0.4, "u": 0.3}}
    table = "gains={0:0,1:1,2:2,4:4}"
    assert cumgain_values(f"ERR({table})", qrels, run)["1"] == \
        pytest.approx(2 / 5 + (1 / 5) * (3 / 5) / 2, abs=1e-16)
    # max_rel=2: g_max = 2, R = g / 3, and a judged gain above it is refused
    assert cumgain_values(f"ERR({table},max_rel=2)@1", {"1": {"a": 2, "b": 0}},
                          {"1": {"a": 1.0}})["1"] == 2 / 3
    with pytest.raises(InputError, match="is above the top level"):
        evaluate(qrels, run, [f"ERR({table},max_rel=2)"])
    # a level the table leaves out keeps its own value (ir_measures' mapping): 0 -> 0
    assert cumgain_values("ERR(gains={1:1,2:2,4:4})", qrels, run) == \
        cumgain_values(f"ERR({table})", qrels, run)


# ---------------------------------------------------------------- Judged

@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("spelling", ["Judged@1", "Judged@5", "Judged@30", "Judged"])
def test_judged_is_the_judged_provider(seed, spelling):
    qrels, run = generated(seed)
    assert_same(cumgain_values(spelling, qrels, run, ties="docno_asc"),
                provider_values("judged", spelling, qrels, run))


def test_judged_hand_computed():
    """A negative judgment counts as judged (the provider asks whether the document is
    in the qrels); a ranking shorter than k is divided by its length; no ranking is 0."""
    qrels = {"1": {"a": 2, "b": 0, "x": -1}, "2": {"a": 1}}
    run = {"1": {"a": 3.0, "x": 2.0, "u": 1.0}}
    assert cumgain_values("Judged@2", qrels, run) == {"1": 1.0, "2": 0.0}
    assert cumgain_values("Judged@10", qrels, run) == {"1": 2 / 3, "2": 0.0}
    # under -J the unjudged (not in the qrels, or negative) are gone
    assert cumgain_values("Judged@10", qrels, run, judged_only=True)["1"] == 1.0


# ---------------------------------------------------------------- Compat

@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("spelling", ["Compat", "Compat(p=0.8)", "Compat(normalize=False)",
                                      "Compat(p=0.5,normalize=False)", "Compat(p=1.0)"])
def test_compat_is_the_compat_provider(seed, spelling):
    """Exact: the same sums in the same order. Every score is positive here (see
    test_compat_ideal_with_scores_not_above_zero)."""
    qrels, run = generated(seed, positive_scores=True)
    assert_same(cumgain_values(spelling, qrels, run, ties="docno_asc"),
                provider_values("compat", spelling, qrels, run))


def rbo(ranking: list, ideal: list, p: float, depth: int = 0) -> float:
    """RBO over ``depth`` ranks (default: the longer list's length)."""
    depth = depth or max(len(ranking), len(ideal))
    weights = [p ** i for i in range(depth)]
    overlaps = [len(set(ranking[:i + 1]) & set(ideal[:i + 1])) / (i + 1) for i in range(depth)]
    return sum(w * o for w, o in zip(weights, overlaps)) / sum(weights)


def clarke_ideal(qrels: dict, ranking: list) -> list:
    """Clarke's ideal (compatibility.py): by level, then run rank, unretrieved last."""
    rank = {doc: i for i, doc in enumerate(ranking)}
    relevant = [doc for doc, level in qrels.items() if level > 0]
    return sorted(relevant, key=lambda doc: (-qrels[doc], rank.get(doc, len(ranking))))


@pytest.mark.parametrize("seed", range(25))
def test_compat_is_clarkes_definition_with_any_scores(seed):
    """With negative and zero scores too: RBO against Clarke's ideal (a direct
    re-implementation of the definition, not the provider)."""
    qrels, run = generated(seed)
    ours = cumgain_values("Compat(p=0.9)", qrels, run, ties="docno_asc")
    for topic, value in ours.items():
        docs = run.get(topic, {})
        ranking = sorted(sorted(docs), key=lambda doc: -docs[doc])
        ideal = clarke_ideal(qrels[topic], ranking)
        depth = max(len(ranking), len(ideal))
        best = rbo(ideal, ideal, 0.9, depth) if ideal else 0.0
        expected = rbo(ranking, ideal, 0.9) / best if best > 0 else 0.0
        assert value == pytest.approx(expected, abs=1e-14), topic


@pytest.mark.parametrize("seed", range(10))
def test_compat_with_gains_is_compat_of_the_mapped_qrels(seed):
    """Compat(gains=m) orders the ideal (and tells the relevant) by gain: it is Compat on
    the qrels whose levels are their gains (checked against Clarke's definition above);
    a gain order that is not the level order changes the ideal."""
    qrels, run = generated(seed)
    for table in ({-1: 0, 0: 0, 1: 1, 2: 3, 3: 9, 4: 27}, {-1: 0, 0: 0, 1: 9, 2: 3, 3: 1, 4: 5}):
        mapped = {topic: {doc: table[level] for doc, level in docs.items()}
                  for topic, docs in qrels.items()}
        spelling = "Compat(gains={" + ",".join(f"{k}:{v}" for k, v in table.items()
                                               if k >= 0) + "})"
        assert cumgain_values(spelling, qrels, run) == cumgain_values("Compat", mapped, run)


def test_compat_hand_computed():
    """The ideal puts level 2 before level 1; within a level the run's order, then the
    unretrieved document."""
    qrels = {"1": {"a": 1, "b": 2, "c": 1, "d": 1, "n": 0}}
    run = {"1": {"a": 0.9, "n": 0.8, "b": 0.7, "c": 0.5}}
    ranking, ideal = ["a", "n", "b", "c"], ["b", "a", "c", "d"]
    expected = rbo(ranking, ideal, 0.95) / rbo(ideal, ideal, 0.95, 4)
    assert cumgain_values("Compat", qrels, run)["1"] == pytest.approx(expected, abs=1e-15)
    assert cumgain_values("Compat", qrels, run)["1"] == \
        provider_values("compat", "Compat", qrels, run)["1"]
    assert cumgain_values("Compat(p=0.7,normalize=False)", qrels, run)["1"] == \
        pytest.approx(rbo(ranking, ideal, 0.7), abs=1e-15)


def test_compat_ideal_with_scores_not_above_zero():
    """The provider sorts the ideal's documents of a level by run score, 0.0 for an
    unretrieved one: a retrieved document with a negative score falls behind the
    unretrieved ones (and one scored 0.0 ties with them, in the qrels' order). Clarke's
    code, and cumgain, keep the retrieved ones first, in run order."""
    qrels = {"1": {"a": 1, "c": 1, "d": 1}}
    run = {"1": {"a": -0.1, "c": -0.5}}
    provider_ideal, clarke = ["d", "a", "c"], ["a", "c", "d"]
    theirs = provider_values("compat", "Compat", qrels, run)["1"]
    assert theirs == pytest.approx(rbo(["a", "c"], provider_ideal, 0.95)
                                   / rbo(provider_ideal, provider_ideal, 0.95), abs=1e-15)
    ours = cumgain_values("Compat", qrels, run)["1"]
    assert ours == pytest.approx(rbo(["a", "c"], clarke, 0.95) / rbo(clarke, clarke, 0.95),
                                 abs=1e-15)
    assert theirs < ours
    # all scores positive: the same ideal, the same value
    positive = {"1": {"a": 0.9, "c": 0.5}}
    assert cumgain_values("Compat", qrels, positive)["1"] == \
        provider_values("compat", "Compat", qrels, positive)["1"] == ours


def test_compat_is_one_for_the_ideal_ranking_and_zero_without_relevant_documents():
    qrels = {"1": {"a": 3, "b": 2, "c": 1, "z": 0}, "2": {"a": 0}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"a": 1.0}}
    assert cumgain_values("Compat", qrels, run) == {"1": 1.0, "2": 0.0}


# ---------------------------------------------------------------- Accuracy

def accuracy_provider(spelling: str, qrels, run) -> dict:
    """The accuracy provider per topic; a topic whose top k holds no non-relevant
    document makes it divide by zero (it raises), so each topic is asked alone."""
    values = {}
    for topic in run:
        try:
            values.update(provider_values("accuracy", spelling, qrels, {topic: run[topic]}))
        except ZeroDivisionError:
            values[topic] = "ZeroDivisionError"
    return values


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("spelling", ["Accuracy", "Accuracy@3", "Accuracy@10",
                                      "Accuracy(rel=2)@10", "Accuracy(rel=0)"])
def test_accuracy_is_the_accuracy_provider(seed, spelling):
    """Exact on the topics the provider reports; NaN on the others (no relevant
    document in the top k: not reported; no non-relevant one: the provider raises)."""
    qrels, run = generated(seed)
    theirs = accuracy_provider(spelling, qrels, run)
    ours = cumgain_values(spelling, qrels, run, ties="input_order")
    for topic, value in ours.items():
        if topic in theirs and theirs[topic] != "ZeroDivisionError":
            assert value == theirs[topic], (topic, value, theirs[topic])
        else:
            assert math.isnan(value), (topic, value)


@pytest.mark.parametrize("seed", range(10))
def test_accuracy_mean_is_over_the_topics_the_provider_reports(seed):
    qrels, run = generated(seed)
    theirs = [value for value in accuracy_provider("Accuracy@10", qrels, run).values()
              if value != "ZeroDivisionError"]
    ours = evaluate(qrels, run, ["Accuracy@10"], ties="input_order", topics="qrels",
                    warn=False).means["Accuracy@10"]
    if theirs:
        assert ours == pytest.approx(sum(theirs) / len(theirs), rel=1e-14)
    else:
        assert math.isnan(ours)


def test_accuracy_hand_computed_and_its_mean():
    """N R N R: of the 4 (relevant, non-relevant) pairs, 1 in the right order. The mean
    over topics leaves out a topic without a pair, as ir_measures does."""
    qrels = {"1": {"r1": 1, "r2": 2, "n1": 0}, "2": {"r": 1}}
    run = {"1": {"n1": 4.0, "r1": 3.0, "u": 2.0, "r2": 1.0}, "2": {"x": 1.0}}
    result = evaluate(qrels, run, ["Accuracy", "Accuracy(rel=2)"], warn=False)
    assert result.values["Accuracy"][0] == 0.25
    assert result.values["Accuracy(rel=2)"][0] == 1 - 3 / 3
    assert math.isnan(result.values["Accuracy"][1]) and result.means["Accuracy"] == 0.25
    nothing = evaluate({"1": {"r": 1}}, {"1": {"r": 1.0}}, ["Accuracy"], warn=False)
    assert math.isnan(nothing.means["Accuracy"])


# ---------------------------------------------------------------- msmarco's RR

@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("spelling", ["RR@10", "RR@3", "RR", "RR(rel=2)@10"])
def test_msmarco_rr_is_cumgain_rr_with_ties_by_docno_ascending(seed, spelling):
    qrels, run = generated(seed)
    assert_same(cumgain_values(spelling, qrels, run, ties="docno_asc"),
                provider_values("msmarco", spelling, qrels, run))


def test_msmarco_rr_differs_from_trec_eval_only_in_ties():
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 1.0, "b": 1.0}}
    assert provider_values("msmarco", "RR@10", qrels, run)["1"] == 1.0
    assert cumgain_values("RR@10", qrels, run)["1"] == 0.5          # trec_eval: b first
    assert cumgain_values("RR@10", qrels, run, ties="docno_asc")["1"] == 1.0


# ---------------------------------------------------------------- real data

@pytest.fixture
def dl19(shared):
    real = shared / "data" / "real"
    qrels_path = real / "qrels" / "qrels.dl19-passage.txt"
    run_path = real / "runs" / "run.msmarco-v1-passage.bm25-default.dl19.txt"
    if not qrels_path.exists() or not run_path.exists():
        pytest.skip("the DL19 files are not in ../shared/data/real")
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return str(qrels_path), str(run_path), qrels, run


@pytest.mark.slow
@pytest.mark.parametrize("provider, spelling, ties, tolerance", [
    ("judged", "Judged@10", "docno_asc", 0.0),
    ("judged", "Judged@100", "docno_asc", 0.0),
    ("compat", "Compat", "docno_asc", 0.0),
    ("compat", "Compat(p=0.8,normalize=False)", "docno_asc", 0.0),
    ("msmarco", "RR@10", "docno_asc", 0.0),
    ("msmarco", "RR(rel=2)", "docno_asc", 0.0),
    ("gdeval", "ERR@20", "docno_desc", 5e-6 + 1e-12),
])
def test_dl19_per_topic(dl19, provider, spelling, ties, tolerance):
    qrels_path, run_path, qrels, run = dl19
    ours = cumgain_values(spelling, qrels_path, run_path, ties=ties)
    theirs = provider_values(provider, spelling, qrels, run)
    assert len(theirs) == 43
    assert_same(ours, theirs, tolerance=tolerance)


@needs_perl
def test_dl19_err_is_gdeval_exactly(dl19, tmp_path):
    qrels_path, run_path, qrels, run = dl19
    qrels_dict, run_dict = {}, {}
    for qrel in qrels:
        qrels_dict.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    for doc in run:
        run_dict.setdefault(doc.query_id, {})[doc.doc_id] = doc.score
    for k in (10, 1000):
        theirs = gdeval_full_precision(tmp_path, qrels_dict, run_dict, k)
        ours = cumgain_values(f"ERR@{k}", qrels_path, run_path)
        assert ours == {topic: theirs.get(topic, 0.0) for topic in ours}


def test_dl19_accuracy(dl19):
    qrels_path, run_path, qrels, run = dl19
    by_topic = {}
    for doc in run:
        by_topic.setdefault(doc.query_id, {})[doc.doc_id] = doc.score
    for spelling in ("Accuracy(rel=2)@100", "Accuracy@10"):
        theirs = accuracy_provider(spelling, qrels, by_topic)
        ours = cumgain_values(spelling, qrels_path, run_path, ties="input_order")
        compared = 0
        for topic, value in ours.items():
            if isinstance(theirs.get(topic), float):
                assert value == theirs[topic]
                compared += 1
            else:
                assert math.isnan(value)
        assert compared > 20


# ---------------------------------------------------------------- parameters

@pytest.mark.parametrize("spelling, fragment", [
    ("Compat@10", "Compat takes no cut-off"),
    ("Compat(p=1.5)", "p must be a number in [0, 1]"),
    ("Compat(normalize=1)", "normalize must be True or False"),
    ("Compat(rel=1)", "Compat does not take 'rel'"),
    ("Judged(rel=1)@10", "Judged does not take 'rel'"),
    ("Judged@0", "the cut-off must be a whole number >= 1"),
    ("ERR(rel=1)@10", "ERR does not take 'rel'"),
    ("ERR(max_rel=2.5)@10", "max_rel must be a whole number"),
    ("Accuracy(rel=-1)", "rel must be a number >= 0"),
    ("Accuracy(judged_only=True)", "Accuracy does not take 'judged_only'"),
])
def test_parameter_errors(spelling, fragment):
    with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, [spelling])


def test_defaults_are_ir_measures_defaults():
    qrels, run = generated(3, positive_scores=True)
    assert cumgain_values("Compat", qrels, run) == \
        cumgain_values("Compat(p=0.95,normalize=True)", qrels, run)
    assert cumgain_values("Accuracy", qrels, run) == \
        pytest.approx(cumgain_values("Accuracy(rel=1)", qrels, run), nan_ok=True)
    for name, measure in (("Compat", ir_measures.Compat), ("Accuracy", ir_measures.Accuracy)):
        defaults = {key: info.default for key, info in measure.SUPPORTED_PARAMS.items()
                    if key != "cutoff" and info.default is not None}
        assert defaults == {"Compat": {"p": 0.95, "normalize": True},
                            "Accuracy": {"rel": 1}}[name]


def test_robust03_compat_differs_only_where_a_relevant_document_scores_below_zero(shared):
    """UIUC03Rd1 scores every document below 0: the provider's ideal then puts a level's
    unretrieved documents before its retrieved ones. Topics where no relevant retrieved
    document scores <= 0 (none here, but checked) must agree exactly; the others differ,
    and cumgain's value is Clarke's definition."""
    import gzip
    real = shared / "data" / "real"
    qrels_path = real / "qrels" / "qrels.robust03.txt"
    run_path = real / "runs" / "robust03" / "input.UIUC03Rd1.gz"
    if not qrels_path.exists() or not run_path.exists():
        pytest.skip("the Robust03 files are not in ../shared/data/real")
    qrels, run = {}, {}
    for line in qrels_path.read_text().splitlines():
        topic, _, doc, level = line.split()
        qrels.setdefault(topic, {})[doc] = int(level)
    with gzip.open(run_path, "rt") as lines:
        for line in lines:
            topic, _, doc, _, score, _ = line.split()
            run.setdefault(topic, {})[doc] = float(score)
    topics = sorted(run)[:25]
    qrels = {topic: qrels[topic] for topic in topics}
    run = {topic: run[topic] for topic in topics}
    ours = cumgain_values("Compat", qrels, run, ties="docno_asc")
    theirs = provider_values("compat", "Compat", qrels, run)
    differing = 0
    for topic in topics:
        docs = run[topic]
        ranking = sorted(sorted(docs), key=lambda doc: -docs[doc])
        if all(docs[doc] > 0 for doc in ranking if qrels[topic].get(doc, 0) > 0):
            assert ours[topic] == theirs[topic], topic
            continue
        ideal = clarke_ideal(qrels[topic], ranking)
        depth = max(len(ranking), len(ideal))
        expected = rbo(ranking, ideal, 0.95) / rbo(ideal, ideal, 0.95, depth)
        assert ours[topic] == pytest.approx(expected, abs=1e-13), topic
        differing += ours[topic] != theirs[topic]
    assert differing > 10


def test_undefined_accuracy_is_left_out_of_a_topics_values():
    """Accuracy of a topic without a (relevant, non-relevant) pair in the top k is NaN
    in the values array, left out of the mean and of per_topic(), as ir_measures
    leaves it out of iter_calc."""
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1, "d": 1}}
    run = {"q1": {"a": 0.3, "b": 0.9}, "q2": {"c": 1.0, "d": 0.5}}
    result = evaluate(qrels, run, ["Accuracy@2", "P@1"])
    assert math.isnan(result.values["Accuracy@2"][1])
    assert result.per_topic() == {"q1": {"Accuracy@2": 0.0, "P@1": 0.0}, "q2": {"P@1": 1.0}}
    assert result.means["Accuracy@2"] == 0.0
    # (ir_measures' provider raises ZeroDivisionError on q2: asked for q1 only)
    expected = {m.query_id: m.value for m in ir_measures.providers.registry["accuracy"]
                .iter_calc([ir_measures.parse_measure("Accuracy@2")], {"q1": qrels["q1"]},
                           {"q1": run["q1"]})}
    assert expected == {"q1": 0.0}


def test_numq_and_numrel_count_a_missing_topic_under_topics_qrels():
    """As trec_eval -c counts it (num_q and num_rel summed over every qrels topic);
    ir_measures' provider gives the missing topic 0 (docs/differences.md)."""
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1, "d": 1}}
    run = {"q1": {"a": 0.3, "b": 0.9}}
    result = evaluate(qrels, run, ["NumQ", "NumRel", "num_q", "num_rel"], topics="qrels",
                      warn=False)
    assert result.per_topic()["q2"] == {"NumQ": 1.0, "NumRel": 2.0, "num_q": 1.0,
                                        "num_rel": 2.0}
    assert result.means["NumRel"] == result.means["num_rel"] == 3.0
