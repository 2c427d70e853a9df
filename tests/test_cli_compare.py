"""`cumgain compare`: the paper's Table 2 from the command line.

The numbers are checked against the API (cumgain.evaluate, cumgain.stats, tested against
scipy and statsmodels in test_stats.py) and against scipy directly; the defaults against
the paper's choices; the errors for their one-line messages and exit statuses.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as ss

import cumgain
from cumgain import cli, report, stats
from cumgain.cli.compare import DEFAULT_MEASURES, paper_gain_schemes
from cumgain.datasets import demo_collection

PAPER_ROWS = [
    "avg_pos_nCG@200(gains=0-1-1-1)", "avg_pos_nDCG@200(discount=tois,gains=0-1-1-1)",
    "avg_pos_nCG@200(gains=0-1-10-100)", "avg_pos_nDCG@200(discount=tois,gains=0-1-10-100)",
    "avg_pos_nCG@200(gains=0-0-0-1)", "avg_pos_nDCG@200(discount=tois,gains=0-0-0-1)",
]


def run_main(capsys, *args):
    status = cli.main(["compare", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo collection as TREC files: 50 topics graded 0-3, runs good, fair, poor."""
    paths = demo_collection().write_trec(tmp_path_factory.mktemp("demo"))
    return {name: str(path) for name, path in paths.items()}


@pytest.fixture
def small(tmp_path):
    """Six topics graded 0-2, three runs (tags X, Y, Z), hand-written."""
    qrels = tmp_path / "qrels.txt"
    lines = []
    for topic in range(1, 7):
        lines += [f"{topic} 0 d{topic}a 2", f"{topic} 0 d{topic}b 1", f"{topic} 0 d{topic}c 1",
                  f"{topic} 0 d{topic}d 0"]
    qrels.write_text("\n".join(lines) + "\n")
    orders = {"X": "abcd", "Y": "bdac", "Z": "dcba"}
    paths = {"qrels": str(qrels)}
    for tag, order in orders.items():
        path = tmp_path / f"{tag.lower()}.run"
        rows = []
        for topic in range(1, 7):
            docs = order if topic % 3 else order[::-1]      # some topics reversed
            rows += [f"{topic} Q0 d{topic}{doc} {rank} {10 - rank} {tag}"
                     for rank, doc in enumerate(docs, start=1)]
        path.write_text("\n".join(rows) + "\n")
        paths[tag] = str(path)
    return paths


def _csv(out: str) -> list:
    return list(csv.DictReader(io.StringIO(out)))


def _api_rows(qrels, runs, measures, **options):
    """What the command computes, through the API."""
    evaluations = {}
    for path in runs:
        evaluation = cumgain.evaluate(qrels, path, measures, warn=False)
        evaluations[evaluation.run_tag] = evaluation
    return [(name, stats.compare(evaluations, name, **options)) for name in
            [m.name for m in cumgain.measures.parse_measures(measures)]]


# ============================================================== defaults

def test_paper_gain_schemes_follow_the_qrels_levels():
    assert paper_gain_schemes(np.array([0, 1, 2, 3])) == ["0-1-1-1", "0-1-10-100", "0-0-0-1"]
    assert paper_gain_schemes(np.array([0, 1, 2, -2])) == ["0-1-1", "0-1-10", "0-0-1"]
    assert paper_gain_schemes(np.array([0, 1, 1])) == ["0-1"]
    assert paper_gain_schemes(np.array([0, 4])) == ["0-1-1-1-1", "0-1-10-100-1000",
                                                    "0-0-0-0-1"]
    assert paper_gain_schemes(np.array([0, 0.5, 1])) == ["identity"]
    assert paper_gain_schemes(np.array([0, 0])) == ["identity"]


def test_default_table_is_the_papers_table2(capsys, demo):
    runs = [demo["good"], demo["fair"], demo["poor"]]
    status, out, err = run_main(capsys, demo["qrels"], *runs, "--format", "csv")
    assert status == 0 and err == ""
    rows = _csv(out)
    assert [row["measure"] for row in rows] == PAPER_ROWS
    expected = _api_rows(demo["qrels"], runs, PAPER_ROWS)
    for row, (_, comparison) in zip(rows, expected):
        for run in ("good", "fair", "poor"):
            assert float(row[run]) == comparison.means[run]
        assert row["significance"] == report.significance_text(comparison)
        assert (row["test"], row["correction"]) == ("friedman+conover", "holm")
        theirs = ss.friedmanchisquare(*comparison.table.values.T)
        assert float(row["statistic"]) == pytest.approx(theirs.statistic, rel=1e-12)
        assert float(row["p_value"]) == pytest.approx(theirs.pvalue, rel=1e-10)
        assert int(row["topics"]) == 50
    assert rows[0]["significance"] == "good > fair **; good, fair > poor **"   # by design


def test_default_measures_are_avg_pos_to_rank_200_with_the_tois_discount():
    measures = cumgain.measures.parse_measures(list(DEFAULT_MEASURES))
    assert [(m.family, m.cutoff) for m in measures] == [("avg_pos_nCG", 200),
                                                        ("avg_pos_nDCG", 200)]
    assert (measures[1].discount, measures[1].base) == ("tois", 2.0)


def test_markdown_and_latex(capsys, small):
    runs = [small["X"], small["Y"], small["Z"]]
    status, out, _ = run_main(capsys, small["qrels"], *runs)
    assert status == 0
    lines = out.splitlines()
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == \
        ["measure", "X", "Y", "Z"]               # marks after the means, keys a, b, c
    assert lines[2].startswith("| avg_pos_nCG@200(gains=0-1-1) ")   # qrels levels 0-2
    assert len([line for line in lines if line.startswith("| avg_pos")]) == 6
    assert "Friedman test, Conover's post-hoc comparisons, Holm's correction" in out
    status, out, _ = run_main(capsys, small["qrels"], *runs, "-f", "latex", "--digits", "2")
    assert out.startswith("\\begin{tabular}{lrrr}\n\\toprule\n")
    assert "\\bottomrule\n\\end{tabular}\n" in out
    row = out.splitlines()[4].removesuffix(" \\\\").split(" & ")
    expected = _api_rows(small["qrels"], runs, ["avg_pos_nCG@200(gains=0-1-1)"])[0][1]
    assert [cell.split("$")[0] for cell in row[1:4]] == \
        [f"{expected.means[run]:.2f}" for run in ("X", "Y", "Z")]


# ============================================================== tests and options

@pytest.mark.parametrize("test, posthoc, label", [
    ("friedman", "nemenyi", "friedman+nemenyi"), ("anova", None, "anova+tukey"),
    ("ttest", None, "ttest"), ("wilcoxon", None, "wilcoxon"),
    ("randomization", None, "randomization")])
def test_each_test_matches_the_api(capsys, demo, test, posthoc, label):
    runs = [demo["good"], demo["fair"], demo["poor"]]
    args = [demo["qrels"], *runs, "-m", "nDCG@10", "-g", "0-1-10-100", "--test", test,
            "--permutations", "300", "--seed", "5", "--correction", "bonferroni", "-f", "csv"]
    if posthoc:
        args += ["--posthoc", posthoc]
    status, out, _ = run_main(capsys, *args)
    assert status == 0
    (row,) = _csv(out)
    assert row["measure"] == "nDCG@10(gains=0-1-10-100)" and row["test"] == label
    ((name, comparison),) = _api_rows(demo["qrels"], runs, ["nDCG@10(gains=0-1-10-100)"],
                                      test=test, posthoc=posthoc, correction="bonferroni",
                                      n_permutations=300, seed=5)
    assert row["significance"] == report.significance_text(comparison)
    assert row["correction"] == comparison.correction
    if comparison.omnibus is not None:
        assert float(row["statistic"]) == comparison.omnibus.statistic
    else:
        assert row["statistic"] == "" and row["p_value"] == ""


def test_a_named_measure_is_computed_as_named(capsys, demo):
    """-m nDCG@10 without -g prints the nDCG@10 of `cumgain evaluate` (not three rows under
    the paper's gain schemes, which are the default only without -m)."""
    import cumgain
    runs = [demo["good"], demo["fair"]]
    status, out, _ = run_main(capsys, demo["qrels"], *runs, "-m", "nDCG@10", "-m", "AP",
                              "--test", "ttest", "-f", "csv")
    assert status == 0
    rows = _csv(out)
    assert [r["measure"] for r in rows] == ["nDCG@10", "AP"]
    for run in runs:
        evaluation = cumgain.evaluate(demo["qrels"], run, ["nDCG@10", "AP"], warn=False)
        for row in rows:
            assert float(row[evaluation.run_tag]) == evaluation.means[row["measure"]]


def test_pairs_lists_every_pair(capsys, small):
    runs = [small["X"], small["Y"], small["Z"]]
    status, out, _ = run_main(capsys, small["qrels"], *runs, "-m", "P@2", "-m", "nDCG@3",
                              "-g", "0-1-10", "--test", "ttest", "--pairs", "-f", "csv")
    assert status == 0
    rows = _csv(out)
    assert [(r["measure"], r["run_a"], r["run_b"]) for r in rows] == [
        (m, a, b) for m in ("P@2", "nDCG@3(gains=0-1-10)")
        for a, b in (("X", "Y"), ("X", "Z"), ("Y", "Z"))]
    comparisons = dict(_api_rows(small["qrels"], runs, ["P@2", "nDCG@3(gains=0-1-10)"],
                                 test="ttest"))
    for row in rows:
        pair = comparisons[row["measure"]].pair(row["run_a"], row["run_b"])
        # (P@2 ties Y and Z on every topic: a NaN t-test, printed as nan)
        np.testing.assert_equal(float(row["p_value"]), pair.p_value)
        np.testing.assert_equal(float(row["p_corrected"]), pair.p_corrected)
        assert row["practical"] == pair.practical


def test_baseline_layout_by_name_or_path(capsys, small):
    runs = [small["X"], small["Y"], small["Z"]]
    for baseline in ("Z", small["Z"]):
        status, out, _ = run_main(capsys, small["qrels"], *runs, "-m", "P@2",
                                  "--test", "ttest", "--baseline", baseline, "-f", "csv")
        assert status == 0
        (row,) = _csv(out)
        assert list(row)[:3] == ["measure", "Z", "X"]
    ((_, comparison),) = _api_rows(small["qrels"], runs, ["P@2"], test="ttest", baseline="Z")
    assert [(p.run_a, p.run_b) for p in comparison.pairs] == [("X", "Z"), ("Y", "Z")]
    assert float(row["X"]) == comparison.means["X"]
    status, out, _ = run_main(capsys, small["qrels"], *runs, "-m", "P@2", "--baseline", "Z")
    assert "better / worse than the baseline Z" in out


def test_runs_named_by_the_run_naming_rule(capsys, small, tmp_path):
    status, out, _ = run_main(capsys, small["qrels"], small["X"], small["Y"], "-m", "P@2",
                              "-f", "csv")
    assert status == 0
    assert list(_csv(out)[0])[1:3] == ["X", "Y"]             # their run tags
    copy = tmp_path / "copy.run"                             # the same tag twice: file names
    copy.write_text(Path(small["X"]).read_text())
    status, out, err = run_main(capsys, small["qrels"], small["X"], str(copy), "-m", "P@2",
                                "-f", "csv")
    assert status == 0
    assert list(_csv(out)[0])[1:3] == ["x.run", "copy.run"]


# ============================================================== topics

def test_runs_covering_different_topics(capsys, small, tmp_path):
    partial = tmp_path / "partial.run"
    partial.write_text("".join(line + "\n" for line in Path(small["Y"]).read_text().splitlines()
                               if not line.startswith("6 ")).replace(" Y\n", " W\n"))
    args = [small["qrels"], small["X"], str(partial), "-m", "P@2", "--test", "ttest"]
    status, out, err = run_main(capsys, *args)
    assert status == cli.EXIT_INPUT and out == ""
    assert err.splitlines()[-1] == (
        "cumgain compare: error: the runs cover different topics (X 6, W 5; 5 common to all): "
        "use --intersect to compare on the common topics, or -c to score a run's missing "
        "topics 0")
    assert "1 qrels topic missing from the run, skipped: 6" in err
    status, out, err = run_main(capsys, *args, "--intersect", "-f", "csv")
    assert status == 0 and _csv(out)[0]["topics"] == "5"
    status, out, err = run_main(capsys, *args, "-c", "-f", "csv")
    assert status == 0 and _csv(out)[0]["topics"] == "6"
    assert "missing from the run, scored 0" in err


# ============================================================== errors

@pytest.mark.parametrize("extra, message", [
    (["--test", "ttest", "--posthoc", "nemenyi"], "--posthoc goes with --test friedman"),
    (["-m", "nDCG@x"], "nDCG@x"),
    (["-g", "0-1-ten"], "unknown gain scheme"),
    (["-m", "P@2", "-g", "0-1-10"], "--gains applies to none of the measures"),
    (["--permutations", "0"], "--permutations must be at least 1"),
    (["--digits", "20"], "--digits must be from 0 to 17"),
    (["--baseline", "nope"], "--baseline 'nope' is none of the runs"),
])
def test_usage_errors_are_one_line(capsys, small, extra, message):
    status, out, err = run_main(capsys, small["qrels"], small["X"], small["Y"], *extra)
    assert status == cli.EXIT_USAGE and out == ""
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err


def test_input_errors(capsys, small, tmp_path):
    status, _, err = run_main(capsys, small["qrels"], small["X"])
    assert status == cli.EXIT_USAGE and "at least two runs" in err
    status, _, err = run_main(capsys, small["qrels"], small["X"], tmp_path / "absent.run")
    assert status == cli.EXIT_INPUT and "absent.run" in err and len(err.splitlines()) == 1
    other = tmp_path / "other.run"
    other.write_text("99 Q0 d1 1 1.0 O\n")
    status, _, err = run_main(capsys, small["qrels"], small["X"], other)
    assert status == cli.EXIT_NO_TOPICS and "no topic of the run" in err


# ============================================================== TREC 2003 Robust

def test_robust03_table2(capsys, shared):
    """The 17 official TREC 2003 Robust runs (100 topics, qrels graded 0-2) with the
    defaults: six rows (nCG and nDCG under 0-1-1, 0-1-10, 0-0-1), Friedman + Conover +
    Holm; every row's statistic against scipy on the same per-topic table."""
    real = shared / "data" / "real"
    qrels = str(real / "qrels" / "qrels.robust03.txt")
    runs = sorted(str(path) for path in (real / "runs" / "robust03").glob("input.*.gz"))
    assert len(runs) == 17
    status, out, err = run_main(capsys, qrels, *runs, "-f", "csv")
    assert status == 0 and err == ""
    rows = _csv(out)
    names = [row["measure"] for row in rows]
    assert names == ["avg_pos_nCG@200(gains=0-1-1)", "avg_pos_nDCG@200(discount=tois,gains=0-1-1)",
                     "avg_pos_nCG@200(gains=0-1-10)",
                     "avg_pos_nDCG@200(discount=tois,gains=0-1-10)",
                     "avg_pos_nCG@200(gains=0-0-1)", "avg_pos_nDCG@200(discount=tois,gains=0-0-1)"]
    loaded = cumgain.trec_io.load_qrels(qrels)
    evaluations = {}
    for path in runs:
        evaluation = cumgain.evaluate(loaded, path, names, warn=False)
        evaluations[evaluation.run_tag] = evaluation
    for row in rows:
        comparison = stats.compare(evaluations, row["measure"])
        values = comparison.table.values
        assert values.shape == (100, 17)
        theirs = ss.friedmanchisquare(*values.T)
        assert float(row["statistic"]) == pytest.approx(theirs.statistic, rel=1e-10)
        assert float(row["p_value"]) == pytest.approx(theirs.pvalue, rel=1e-8)
        assert row["significance"] == report.significance_text(comparison)
        for run, evaluation in evaluations.items():
            assert float(row[run]) == evaluation.means[row["measure"]]


def test_a_run_compared_with_itself_is_refused(capsys, demo):
    status, _, err = run_main(capsys, demo["qrels"], demo["good"], demo["good"])
    assert status == 1
    assert f"the run {demo['good']} is given twice: a run compared with itself" in err
