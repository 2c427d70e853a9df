"""cumgain.report: the paper's Table 2 layout, the baseline layout and the pair list, in
markdown, LaTeX, CSV and pandas."""
import csv
import io
import itertools

import numpy as np
import pytest

from cumgain import report, stats
from cumgain.exceptions import InputError

# The paper's Table 2 (J&K 2002, TOIS, section 3.6): five TREC-7 runs, avg-pos of the
# n(D)CG vectors to rank 200 under three gain schemes, Friedman test.
PAPER_RUNS = ("A", "B", "C", "D", "E")
PAPER_TABLE2 = [
    ("nCG (0-1-1-1)", (0.242, 0.271, 0.293, 0.318, 0.343), {}),
    ("nDCG (0-1-1-1)", (0.292, 0.294, 0.287, 0.335, 0.331), {}),
    ("nCG (0-1-10-100)", (0.254, 0.305, 0.313, 0.316, 0.342),
     {("D", "A"): 0.004, ("E", "A"): 0.001}),
    ("nDCG (0-1-10-100)", (0.211, 0.238, 0.236, 0.279, 0.247), {("D", "A"): 0.02}),
    ("nCG (0-0-0-1)", (0.244, 0.301, 0.309, 0.309, 0.329), {}),
    ("nDCG (0-0-0-1)", (0.192, 0.220, 0.223, 0.259, 0.224), {}),
]
PAPER_MARKS = ["", "", "D, E > A **", "D > A *", "", ""]


def _comparison(means, significant, omnibus_p=0.001, runs=PAPER_RUNS, protected=True,
                correction="holm", baseline=None):
    """A Comparison built by hand: ``significant`` maps (winner, loser) to its corrected p;
    every other pair gets p = 0.5. Topic scores are the means twice, so the means are exact."""
    values = np.array([list(means), list(means)], dtype=float)
    table = stats.ScoreTable(tuple(runs), ("t1", "t2"), values, "measure")
    if baseline is None:
        pairs = list(itertools.combinations(runs, 2))
    else:
        pairs = [(run, baseline) for run in runs if run != baseline]
    results = []
    for a, b in pairs:
        mean_a, mean_b = means[runs.index(a)], means[runs.index(b)]
        if (a, b) in significant:
            p, direction = significant[(a, b)], ">"
        elif (b, a) in significant:
            p, direction = significant[(b, a)], "<"
        else:
            p, direction = 0.5, ">" if mean_a > mean_b else "<"
        relative = stats.relative_difference(mean_a, mean_b)
        results.append(stats.PairwiseResult(
            a, b, "conover", 1.0, p, p, mean_a, mean_b, mean_a - mean_b, relative,
            stats.practical_significance(relative), direction))
    omnibus = stats.OmnibusResult("friedman", 12.5, omnibus_p, (len(runs) - 1.0,), 2, len(runs))
    return stats.Comparison(table, "friedman", "conover", correction, omnibus, tuple(results),
                            baseline=baseline, protected=protected)


def _paper_rows():
    return [(label, _comparison(means, marks)) for label, means, marks in PAPER_TABLE2]


# ============================================================== the significance column

def test_significance_text_reproduces_the_papers_marks():
    for (label, comparison), expected in zip(_paper_rows(), PAPER_MARKS):
        assert report.significance_text(comparison) == expected, label


def test_significance_text_groups_winners_and_losers():
    means = (0.1, 0.2, 0.3, 0.4, 0.5)
    comparison = _comparison(means, {("D", "A"): 0.001, ("E", "A"): 0.002, ("D", "B"): 0.003,
                                     ("E", "B"): 0.009, ("E", "C"): 0.03, ("C", "A"): 0.04})
    assert report.significance_text(comparison) == "D, E > A, B **; C > A *; E > C *"


def test_significance_text_applies_the_omnibus_gate_per_level():
    means = (0.1, 0.2, 0.3, 0.4, 0.5)
    marks = {("D", "A"): 0.001, ("E", "A"): 0.001, ("D", "B"): 0.03}
    # Omnibus p = 0.03: nothing passes at 0.01, so the ** pairs count at 0.05 only.
    assert report.significance_text(_comparison(means, marks, omnibus_p=0.03)) == \
        "D, E > A *; D > B *"
    assert report.significance_text(_comparison(means, marks, omnibus_p=0.2)) == ""
    assert report.significance_text(_comparison(means, marks, omnibus_p=0.2,
                                                protected=False)) == "D, E > A **; D > B *"


def test_custom_levels():
    means = (0.1, 0.2, 0.3, 0.4, 0.5)
    comparison = _comparison(means, {("E", "A"): 0.0005, ("D", "A"): 0.005}, omnibus_p=1e-6)
    levels = ((0.05, "*"), (0.001, "***"), (0.01, "**"))        # any order
    assert report.significance_text(comparison, levels) == "E > A ***; D > A **"
    with pytest.raises(InputError, match="significance levels"):
        report.significance_text(comparison, ((1.5, "*"),))


# ============================================================== Table 2 layout

def test_markdown_table2_has_the_papers_layout():
    text = report.significance_table(_paper_rows()).to_markdown()
    lines = text.splitlines()
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == \
        ["measure", "A", "B", "C", "D", "E", "significance"]
    assert set(lines[1]) <= set("|:-") and lines[1].count("|") == 8
    row = [cell.strip() for cell in lines[4].strip("|").split("|")]
    assert row == ["nCG (0-1-10-100)", "0.254", "0.305", "0.313", "0.316", "0.342",
                   "D, E > A \\*\\*"]
    assert "| nDCG (0-1-10-100)" in lines[5] and "D > A \\*" in lines[5]
    notes = text.split("\n\n")[1]
    assert "\\* p < 0.05, \\*\\* p < 0.01: Friedman test, Conover's post-hoc comparisons, " \
           "Holm's correction" in notes
    assert "- nCG (0-1-1-1): Friedman test, chi2(4) = 12.500, p = 0.001, 2 topics" in notes


def test_latex_table2_uses_booktabs_and_escapes():
    rows = [("nDCG_cut & more", _comparison((0.1, 0.25), {("b_2", "a%1"): 0.001},
                                            runs=("a%1", "b_2")))]
    text = report.significance_table(rows, digits=2).to_latex()
    lines = text.splitlines()
    assert lines[:4] == ["\\begin{tabular}{lrrl}", "\\toprule",
                         "measure & a\\%1 & b\\_2 & significance \\\\", "\\midrule"]
    assert lines[4] == "nDCG\\_cut \\& more & 0.10 & 0.25 & b\\_2 $>$ a\\%1 ** \\\\"
    assert lines[5:7] == ["\\bottomrule", "\\end{tabular}"]
    assert all(line.startswith("% ") for line in lines[7:])


def test_csv_carries_full_precision_and_the_omnibus_result():
    means = (1 / 3, 2 / 7)
    rows = [("m", _comparison(means, {("a", "b"): 0.004}, runs=("a", "b"), omnibus_p=0.002))]
    records = list(csv.reader(io.StringIO(report.significance_table(rows).to_csv())))
    assert records[0] == ["measure", "a", "b", "significance", "test", "correction",
                          "statistic", "p_value", "topics"]
    assert records[1][0] == "m"
    assert float(records[1][1]) == 1 / 3 and float(records[1][2]) == 2 / 7
    assert records[1][3:] == ["a > b **", "friedman+conover", "holm", "12.5", "0.002", "2"]


def test_dataframe_has_the_csv_columns_and_values():
    pd = pytest.importorskip("pandas")
    table = report.significance_table(_paper_rows())
    frame = table.to_dataframe()
    from_csv = pd.read_csv(io.StringIO(table.to_csv()), index_col="measure",
                           keep_default_na=False)
    assert list(frame.columns) == list(from_csv.columns)
    assert frame.index.name == "measure"
    assert frame.loc["nCG (0-1-10-100)", "E"] == 0.342
    assert frame.loc["nCG (0-1-10-100)", "significance"] == "D, E > A **"
    assert np.array_equal(frame[list(PAPER_RUNS)].to_numpy(dtype=float),
                          from_csv[list(PAPER_RUNS)].to_numpy(dtype=float))


def test_render_dispatches_and_rejects_unknown_formats():
    table = report.significance_table(_paper_rows())
    assert table.render("md") == table.to_markdown()
    assert table.render("latex") == table.to_latex()
    assert table.render("csv") == table.to_csv()
    with pytest.raises(InputError, match="format must be"):
        table.render("html")


# ============================================================== baseline layout

def test_baseline_layout_marks_better_and_worse_runs():
    means = (0.30, 0.40, 0.20, 0.31)
    runs = ("sys1", "base", "sys2", "sys3")
    comparison = _comparison(means, {("base", "sys1"): 0.03, ("base", "sys2"): 0.001},
                             runs=runs, baseline="base")
    table = report.baseline_table({"nDCG@10": comparison}, "base")
    assert table.columns == ("base", "sys1", "sys2", "sys3")
    markdown = table.to_markdown().splitlines()
    row = [cell.strip() for cell in markdown[2].strip("|").split("|")]
    assert row == ["nDCG@10", "0.400", "0.300<sup>-\\*</sup>", "0.200<sup>-\\*\\*</sup>",
                   "0.310"]
    assert "$^{-**}$" in table.to_latex()
    records = list(csv.reader(io.StringIO(table.to_csv())))
    assert records[0][:7] == ["measure", "base", "sys1", "sys1 sig", "sys2", "sys2 sig", "sys3"]
    assert records[1][:7] == ["nDCG@10", "0.4", "0.3", "-*", "0.2", "-**", "0.31"]
    # the direction comes from the pair: swap it and the marker turns to +
    better = _comparison(means, {("sys1", "base"): 0.03}, runs=runs, baseline="base")
    assert report.baseline_table([("m", better)], "base").rows[0][1][1].marker == "+*"


def test_baseline_layout_works_on_all_pairs_and_checks_the_baseline():
    comparison = _comparison((0.1, 0.2, 0.3), {("c", "a"): 0.001}, runs=("a", "b", "c"))
    table = report.baseline_table([("m", comparison)], "a")
    assert [cell.marker for cell in table.rows[0][1]] == ["", "", "+**"]
    with pytest.raises(InputError, match="not one of the runs"):
        report.baseline_table([("m", comparison)], "z")
    other = _comparison((0.1, 0.2, 0.3), {}, runs=("a", "b", "c"), baseline="b")
    with pytest.raises(InputError, match="no pair"):
        report.baseline_table([("m", other)], "a")


# ============================================================== pair list

def test_pairwise_table_lists_every_number():
    values = np.array([[0.1, 0.3, 0.2], [0.2, 0.5, 0.1], [0.4, 0.6, 0.3], [0.3, 0.7, 0.2]])
    comparison = stats.compare(stats.score_table(values, runs=["a", "b", "c"]), test="ttest",
                               confidence_level=0.9, n_resamples=500, seed=3)
    table = report.pairwise_table({"P@10": comparison})
    frame_header, records = next(csv.reader(io.StringIO(table.to_csv()))), \
        list(csv.reader(io.StringIO(table.to_csv())))[1:]
    assert frame_header == ["measure"] + list(report._PAIR_COLUMNS) + ["ci_low", "ci_high"]
    assert len(records) == 3
    for record, pair in zip(records, comparison.pairs):
        fields = dict(zip(frame_header, record))
        assert (fields["run_a"], fields["run_b"], fields["test"]) == (pair.run_a, pair.run_b,
                                                                      "ttest")
        assert float(fields["p_value"]) == pair.p_value
        assert float(fields["p_corrected"]) == pair.p_corrected
        assert float(fields["relative_difference_%"]) == pair.relative_difference
        assert float(fields["ci_low"]) == pair.ci.low
        assert fields["practical"] == pair.practical and fields["direction"] == pair.direction
        mark = "**" if pair.p_corrected < 0.01 else "*" if pair.p_corrected < 0.05 else ""
        assert fields["significance"] == mark


# ============================================================== rows

def test_rows_must_compare_the_same_runs():
    first = _comparison((0.1, 0.2), {}, runs=("a", "b"))
    second = _comparison((0.1, 0.2), {}, runs=("b", "a"))
    with pytest.raises(InputError, match="same runs in the same order"):
        report.significance_table([("x", first), ("y", second)])
    with pytest.raises(InputError, match="at least one"):
        report.significance_table([])
    with pytest.raises(InputError, match="pairs"):
        report.significance_table([first])
    single = report.significance_table(first)
    assert single.rows[0][0] == "measure"
    with pytest.raises(InputError, match="digits"):
        report.significance_table(first, digits=-1)


def test_table_of_real_comparisons_marks_what_compare_finds_significant():
    rng = np.random.default_rng(5)
    values = rng.random((30, 4)) + np.array([0.0, 0.05, 0.3, 0.35])
    rows = {test: stats.compare(stats.score_table(values, runs=list("wxyz")), test=test,
                                n_permutations=500, seed=1)
            for test in ("friedman", "anova", "ttest", "wilcoxon", "randomization")}
    table = report.significance_table(rows)
    for (label, cells, _), comparison in zip(table.rows, rows.values()):
        text = cells[-1].value
        for pair in comparison.pairs:
            mark = "**" if pair in comparison.significant(0.01) else \
                "*" if pair in comparison.significant(0.05) else ""
            if mark:
                group = [g for g in text.split("; ") if g.endswith(" " + mark)]
                assert any(pair.winner in g.split(" > ")[0].split(", ")
                           and pair.loser in g.split(" > ")[1][:-len(mark) - 1].split(", ")
                           for g in group), (label, pair)
        assert [cell.value for cell in cells[:-1]] == \
            pytest.approx(values.mean(axis=0).tolist())
