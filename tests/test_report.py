"""cumgain.report: the paper's Table 2 layout, the baseline layout and the pair list, in
markdown, LaTeX, CSV and pandas."""
import csv
import io
import itertools
import re

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


def _markdown_tables(text):
    """The tables of a markdown report: [(header cells, [row cells])], blank lines apart."""
    tables = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if lines:
            split = [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
                     for line in lines]
            tables.append((split[0], split[2:]))
    return tables


def _parse_marks(text, comparisons):
    """Every pair the markdown's marks say is significant: ``{label: {(winner, loser):
    mark}}``, reading the run keys from the row labels ``(a) name`` or the legend line
    ``runs: (a) name, ...``, whichever layout the table has."""
    tables = _markdown_tables(text)
    by_rows = tables[0][0][0] == "run"
    if by_rows:
        keyed = [row[0] for _, rows in tables[:1] for row in rows]
    else:
        items = re.split(r"\n(?=- )", text.split("\n\n")[-1])   # wrapped lines joined
        legend = next(" ".join(map(str.strip, item.splitlines())) for item in items
                      if item.startswith("- runs: "))
        keyed = legend[len("- runs: "):].split(", ")
    names = {}
    for entry in keyed:
        key, name = re.fullmatch(r"\((\w+)\) (.+)", entry).groups()
        names[key] = name
    cells = {}                               # (label, run) -> "0.316 a\*\*"
    for header, rows in tables:
        for row in rows:
            for column, cell in zip(header[1:], row[1:]):
                label, run = (column, names[row[0][1:].split(")")[0]]) if by_rows \
                    else (row[0], column)
                cells[(label, run)] = cell
    found = {label: {} for label in comparisons}
    for (label, run), cell in cells.items():
        value, *groups = cell.replace("\\*", "*").split(" ")
        assert float(value) == pytest.approx(comparisons[label].means[run], abs=1e-3)
        for group in groups:
            keys, mark = re.fullmatch(r"([a-z]+|[0-9]+(?:,[0-9]+)*)(\*+)", group).groups()
            keys = keys.split(",") if "," in keys or keys.isdigit() else list(keys)
            for key in keys:
                found[label][(run, names[key])] = mark
    return found


def _expected_marks(comparison):
    """``{(winner, loser): mark}`` from Comparison.significant at 0.01 and 0.05."""
    marks = {}
    for alpha, mark in ((0.01, "**"), (0.05, "*")):
        for pair in comparison.significant(alpha):
            marks.setdefault((pair.winner, pair.loser), mark)
    return marks


def _many_runs(n_runs=17, n_topics=50, seed=3, long_names=True,
               tests=("friedman", "anova", "ttest")):
    """``n_runs`` runs with synthetic per-topic scores, means spread from 0.2 to 0.6 (many
    significant pairs at both levels), compared with each of ``tests``."""
    rng = np.random.default_rng(seed)
    values = rng.random((n_topics, n_runs)) * 0.4 + np.linspace(0.0, 0.4, n_runs)
    runs = [f"team{i:02d}.{'very-long-run-name-' if long_names else ''}{i}"
            for i in range(n_runs)]
    table = stats.score_table(values, runs=runs)
    return {f"nDCG@10 ({test})": stats.compare(table, test=test)
            for test in tests}


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
        ["measure", "A", "B", "C", "D", "E"]
    assert set(lines[1]) <= set("|:-") and lines[1].count("|") == 7
    row = [cell.strip() for cell in lines[4].strip("|").split("|")]
    assert row == ["nCG (0-1-10-100)", "0.254", "0.305", "0.313", "0.316 a\\*\\*",
                   "0.342 a\\*\\*"]
    assert lines[4].index("0.316") == lines[3].index("0.335")        # values aligned
    row = [cell.strip() for cell in lines[5].strip("|").split("|")]
    assert row[1:] == ["0.211", "0.238", "0.236", "0.279 a\\*", "0.247"]
    notes = text.split("\n\n")[1]
    assert "- runs: (a) A, (b) B, (c) C, (d) D, (e) E\n" in notes
    assert "the keys of the runs it is significantly better than" in notes
    assert "\\* p < 0.05, \\*\\* p < 0.01: Friedman test, Conover's post-hoc comparisons, " \
           "Holm's correction" in notes
    assert "- nCG (0-1-1-1): Friedman test, chi2(4) = 12.500, p = 0.001, 2 topics" in notes
    assert max(len(line) for line in lines) <= report.WIDTH


def test_latex_table2_uses_booktabs_and_escapes():
    rows = [("nDCG_cut & more", _comparison((0.1, 0.25), {("b_2", "a%1"): 0.001},
                                            runs=("a%1", "b_2")))]
    text = report.significance_table(rows, digits=2).to_latex()
    lines = text.splitlines()
    assert lines[:4] == ["\\begin{tabular}{lrr}", "\\toprule",
                         "measure & a\\%1 & b\\_2 \\\\", "\\midrule"]
    assert lines[4] == "nDCG\\_cut \\& more & 0.10 & 0.25$^{a**}$ \\\\"
    assert lines[5:7] == ["\\bottomrule", "\\end{tabular}"]
    assert all(line.startswith("% ") for line in lines[7:])
    assert "% runs: (a) a%1, (b) b_2" in lines


def test_latex_runs_as_rows_has_superscripts_and_thin_spaces():
    means = (0.1, 0.2, 0.3)
    comparison = _comparison(means, {("c", "a"): 0.001, ("c", "b"): 0.03, ("b", "a"): 0.04},
                             runs=("a", "b", "c"))
    text = report.significance_table({"P@10": comparison}, runs_as="rows").to_latex()
    lines = text.splitlines()
    assert lines[:4] == ["\\begin{tabular}{lr}", "\\toprule", "run & P@10 \\\\",
                         "\\midrule"]
    assert lines[4:7] == ["(a) a & 0.100 \\\\", "(b) b & 0.200$^{a*}$ \\\\",
                          "(c) c & 0.300$^{a**\\,b*}$ \\\\"]


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
    assert table.render("text") == table.to_text()
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
    assert row == ["nDCG@10", "0.400", "0.300 -\\*", "0.200 -\\*\\*", "0.310"]
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
    assert table.columns == tuple("wxyz")                    # the paper's layout: it fits
    found = _parse_marks(table.to_markdown(), rows)
    for label, comparison in rows.items():
        assert found[label] == _expected_marks(comparison), label
        assert found[label]                                   # something to find
    for (label, cells, _), comparison in zip(table.rows, rows.values()):
        assert [cell.value for cell in cells] == pytest.approx(values.mean(axis=0).tolist())


# ============================================================== many runs

@pytest.mark.slow
def test_seventeen_runs_fit_120_columns_with_every_pair():
    """17 runs with long names: the markdown is at most 120 characters a line, a row per
    run, and the marks give back every significant pair of every comparison."""
    rows = _many_runs()
    table = report.significance_table(rows)
    text = table.to_markdown()
    assert max(len(line) for line in text.splitlines()) <= 120
    assert table.index_name == "run" and table.columns == tuple(rows)
    assert table.rows[0][0] == "(a) team00.very-long-run-name-0"
    found = _parse_marks(text, rows)
    for label, comparison in rows.items():
        assert found[label] == _expected_marks(comparison) == report.pair_marks(comparison)
        assert {"*", "**"} <= set(found[label].values())       # both levels appear
    # the same information as the words of the CSV's significance column
    for record in csv.DictReader(io.StringIO(table.to_csv())):
        comparison = rows[record["measure"]]
        assert record["significance"] == report.significance_text(comparison)
        assert [float(record[run]) for run in comparison.runs] == \
            list(comparison.means.values())


@pytest.mark.slow
def test_text_is_the_markdown_without_rules_and_escapes():
    rows = _many_runs()
    table = report.significance_table(rows)
    text, markdown = table.to_text(), table.to_markdown()
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "|" not in text and "\\*" not in text
    lines = text.splitlines()
    assert lines[0].startswith("run ") and lines[1].startswith("(a) team00.very-long-run-name-0  ")
    first = [line.strip("| ").split(" | ")[0] for line in markdown.splitlines()
             if line.startswith("| (")]
    assert [line[:len(first[0])] for line in lines if line.startswith("(")] == \
        [label.ljust(len(first[0])) for label in first]
    for label, comparison in rows.items():              # every marked cell, unescaped
        for run, marks in report.run_marks(comparison).items():
            if marks:
                assert f"{comparison.means[run]:.3f} {marks}" in text


def test_the_papers_layout_for_seventeen_runs_is_split_to_fit():
    rows = _many_runs(long_names=False, tests=("friedman", "ttest"))
    table = report.significance_table(rows, runs_as="columns")
    text = table.to_markdown()
    tables = _markdown_tables(text)
    assert len(tables) > 1 and max(len(line) for line in text.splitlines()) <= 120
    assert [cell for header, _ in tables for cell in header[1:]] == \
        list(next(iter(rows.values())).runs)                 # every run once, in order
    assert all([row[0] for row in body] == list(rows) for _, body in tables)
    found = _parse_marks(text, rows)
    for label, comparison in rows.items():
        assert found[label] == _expected_marks(comparison)
    unlimited = report.significance_table(rows, runs_as="columns", width=None).to_markdown()
    assert len(_markdown_tables(unlimited)) == 1
    assert max(len(line) for line in unlimited.splitlines()) > 120


def test_more_than_26_runs_are_keyed_by_numbers():
    rows = _many_runs(n_runs=30, n_topics=40, long_names=False, tests=("friedman", "ttest"))
    table = report.significance_table(rows)
    assert table.rows[26][0] == "(27) team26.26"
    marks = report.run_marks(rows["nDCG@10 (ttest)"])
    assert any("," in mark for mark in marks.values())
    found = _parse_marks(table.to_markdown(), rows)
    for label, comparison in rows.items():
        assert found[label] == _expected_marks(comparison)


def test_run_marks_group_by_level_strictest_first():
    means = (0.1, 0.2, 0.3, 0.4, 0.5)
    comparison = _comparison(means, {("E", "A"): 0.001, ("E", "B"): 0.002, ("E", "D"): 0.03,
                                     ("D", "A"): 0.04, ("B", "A"): 0.2})
    assert report.run_keys(PAPER_RUNS) == dict(zip(PAPER_RUNS, "abcde"))
    assert report.run_marks(comparison) == {"A": "", "B": "", "C": "", "D": "a*",
                                            "E": "ab** d*"}
    levels = ((0.05, "+"), (0.001, "+++"), (0.01, "++"))
    assert report.run_marks(comparison, levels) == {"A": "", "B": "", "C": "", "D": "a+",
                                                    "E": "ab++ d+"}


@pytest.mark.parametrize("levels", [((0.05, "x"),), ((0.05, ""),), ((0.05, "* "),),
                                    ((0.05, "1"),), ((0.05, "*"), (0.01, "*"))])
def test_marks_that_would_be_ambiguous_are_refused(levels):
    comparison = _comparison((0.1, 0.2), {}, runs=("a", "b"))
    with pytest.raises(InputError, match="mark"):
        report.significance_table(comparison, levels=levels)


def test_layout_options_are_checked():
    comparison = _comparison((0.1, 0.2), {("b", "a"): 0.001}, runs=("a", "b"))
    assert report.significance_table(comparison, runs_as="rows").index_name == "run"
    assert report.significance_table(comparison, runs_as="columns").index_name == "measure"
    assert report.significance_table(comparison).index_name == "measure"
    with pytest.raises(InputError, match="runs_as"):
        report.significance_table(comparison, runs_as="transposed")
    for width in (0, 2.5, True):
        with pytest.raises(InputError, match="width"):
            report.significance_table(comparison, width=width)


def test_markdown_wraps_long_legend_lines_and_splits_wide_tables():
    cells = tuple(report.Cell(float(i)) for i in range(12))
    table = report.Report("m", tuple(f"column{i}" for i in range(12)), (("row", cells, ()),),
                          ("word " * 40,), width=60)
    text = table.to_markdown()
    assert max(len(line) for line in text.splitlines()) <= 60
    tables = _markdown_tables(text)
    assert [cell for header, _ in tables for cell in header[1:]] == list(table.columns)
    assert all(rows[0][0] == "row" for _, rows in tables)
    legend = text.split("\n\n")[-1].splitlines()
    assert legend[0].startswith("- word") and all(line.startswith("  word")
                                                  for line in legend[1:])
    assert " ".join(line.strip("- ") for line in legend).split() == ["word"] * 40
    assert report.Report("m", table.columns, table.rows).to_markdown().count("\n") == 3
