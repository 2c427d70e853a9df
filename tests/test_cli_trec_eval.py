"""`cumgain-trec-eval` against trec_eval's own outputs, byte for byte.

Every expected file in ``../shared/data/trec_eval_tests`` (``out.*``,
``v9.0.8_expected/out.*``, ``generated/*.q``) and ``../shared/data/real/expected/*.v10.q``
is listed in ``CASES`` with the command that produced it (from the READMEs beside
them), or in ``NOT_COMPARABLE`` with the reason it cannot be; a file in neither
fails ``test_every_expected_file_is_classified``. The installed console script runs
as a subprocess and must print the whole expected file: every line, in the same
order, nothing else. Skipped when ../shared is not beside the checkout.

The small golden files in ``tests/golden`` need nothing outside the repository.
"""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("cumgain-trec-eval")
GOLDEN = Path(__file__).resolve().parent / "golden"
_shared = Path(__file__).resolve().parents[1].parent / "shared"
SHARED = _shared if (_shared / "data").is_dir() else None
TESTS = SHARED / "data" / "trec_eval_tests" if SHARED else None
REAL = SHARED / "data" / "real" if SHARED else None
needs_shared = pytest.mark.skipif(SHARED is None, reason="../shared is not beside this checkout")


def run_script(args, cwd=None, stdin=None):
    return subprocess.run([str(SCRIPT), *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, timeout=600)


# ------------------------------------------------------------------ the commands

# trec_eval's M set of the generated/ and real/ READMEs.
M_GENERATED = ["-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map",
               "-m", "Rprec", "-m", "recip_rank", "-m", "P", "-m", "recall", "-m", "ndcg", "-m",
               "ndcg_cut", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "map_cut", "-m", "success"]
M_REAL = ["-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map",
          "-m", "Rprec", "-m", "recip_rank", "-m", "P.5,10,20,100,1000", "-m",
          "recall.10,100,1000", "-m", "ndcg", "-m", "ndcg_cut.5,10,20,100,1000", "-m",
          "ndcg_rel", "-m", "Rndcg"]
DCG = ["-m", "dcg", "-m", "ideal_dcg"]
PAIRS = {"test": ["qrels.test", "results.test"],
         "rel_level": ["qrels.rel_level", "results.test"],
         "rag24": ["qrels.comment.test", "results.comment.test"]}
EXP_GAINS = "0=0,1=1,2=3,3=7,4=15"
V9 = ["--trec-eval-version", "9"]

# expected file (relative to data/) -> command line, per the READMEs; it runs in
# trec_eval_tests/ or in real/expected/.
# Unsupported measures are left out of a command (trec_eval would compute them; cumgain
# refuses to name them), and their lines are filtered out of the expected file.
CASES: dict = {}
MEAS_PARAMS = ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m",
               "recall.20,2000", "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m",
               "11pt_avg..25,.5,.75", "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4",
               "-msuccess.2,5,20", "qrels.test", "results.test"]
_UPSTREAM = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level",
                     "results.test"],
    "out.test.meas_params": MEAS_PARAMS,
}
for _name, _command in _UPSTREAM.items():
    CASES[f"trec_eval_tests/{_name}"] = _command
    CASES[f"trec_eval_tests/v9.0.8_expected/{_name}"] = V9 + _command
CASES["trec_eval_tests/out.comment.test"] = ["qrels.comment.test", "results.comment.test"]
CASES["trec_eval_tests/out.test.aqZ"] = ["-q", "-m", "all_trec", "-Z", "zscores_file",
                                         "qrels.test", "results.test"]
CASES["trec_eval_tests/v9.0.8_expected/out.test.aqZ"] = \
    V9 + ["-q", "-m", "all_trec", "-Z", "v9.0.8_expected/zscores_file", "qrels.test",
          "results.test"]
CASES["trec_eval_tests/out.test.qrels_jg"] = ["-m", "qrels_jg", "-q", "-R", "qrels_jg",
                                              "qrels.123", "results.test"]
for _pair, _files in PAIRS.items():
    CASES[f"trec_eval_tests/generated/v10.graded_suite.{_pair}.q"] = \
        ["-q", *M_GENERATED, *DCG, *_files]
    CASES[f"trec_eval_tests/generated/v908.graded_suite.{_pair}.q"] = \
        V9 + ["-q", *M_GENERATED, *_files]
    CASES[f"trec_eval_tests/generated/v10.l2.{_pair}.q"] = \
        ["-q", "-l2", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", "-m", "P.5,10", "-m",
         "recip_rank", "-m", "Rprec", "-m", "ndcg", "-m", "ndcg_cut.10", *_files]
    CASES[f"trec_eval_tests/generated/v10.J.{_pair}.q"] = \
        ["-q", "-J", "-m", "num_ret", "-m", "map", "-m", "P.10", "-m", "ndcg", "-m",
         "ndcg_cut.10", *_files]
    CASES[f"trec_eval_tests/generated/v10.M10.{_pair}.q"] = \
        ["-q", "-M10", "-m", "num_ret", "-m", "map", "-m", "P.10,20", "-m", "ndcg", "-m",
         "ndcg_cut.10,20", "-m", "recip_rank", *_files]
    CASES[f"trec_eval_tests/generated/v10.ndcg_exp_gains.{_pair}.q"] = \
        ["-q", "-m", f"ndcg.{EXP_GAINS}", "-m", f"ndcg_rel.{EXP_GAINS}", "-m",
         f"Rndcg.{EXP_GAINS}", *_files]
# The README lists -m dcg -m ideal_dcg for this file, but it holds no dcg lines: it was
# made without them.
CASES["trec_eval_tests/generated/v10.graded_suite.c.trunc.q"] = \
    ["-q", "-c", *M_GENERATED, "qrels.test", "results.trunc"]
CASES["trec_eval_tests/generated/v908.graded_suite.c.trunc.q"] = \
    V9 + ["-q", "-c", *M_GENERATED, "qrels.test", "results.trunc"]
CASES["trec_eval_tests/generated/v908.graded_suite.noc.trunc.q"] = \
    V9 + ["-q", *M_GENERATED, "qrels.test", "results.trunc"]

REAL_PAIRS = {
    "dl19-passage.bm25": ("qrels.dl19-passage.txt",
                          "run.msmarco-v1-passage.bm25-default.dl19.txt", []),
    "dl19-passage.bm25.l2": ("qrels.dl19-passage.txt",
                             "run.msmarco-v1-passage.bm25-default.dl19.txt", ["-l2"]),
    "trec-covid-beir.bm25": ("qrels.beir-v1.0.0-trec-covid.test.txt",
                             "run.beir.bm25-flat.trec-covid.txt", []),
    "covid-complete.bm25": ("qrels.covid-complete.txt", "run.beir.bm25-flat.trec-covid.txt", []),
}
if REAL is not None:
    for _path in sorted((REAL / "expected").glob("robust03.*.v10.q")):
        _run = _path.name[len("robust03."):-len(".v10.q")]
        # trec_eval read the decompressed file; cumgain reads the .gz directly.
        REAL_PAIRS[f"robust03.{_run}"] = ("qrels.robust03.txt",
                                          f"robust03/input.{_run}.gz", [])
for _name, (_qrels, _run, _extra) in REAL_PAIRS.items():
    CASES[f"real/expected/{_name}.v10.q"] = \
        ["-q", *_extra, *M_REAL, *DCG, f"../qrels/{_qrels}", f"../runs/{_run}"]

CASES["trec_eval_tests/out.test.prefs"] = ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test",
                                           "prefs.results.test"]
CASES["trec_eval_tests/out.test.qrels_prefs"] = ["-m", "all_prefs", "-q", "-R", "qrels_prefs",
                                                 "qrels.test", "results.test"]
NOT_COMPARABLE: dict = {}       # every expected file is compared


def expected_files() -> list:
    if SHARED is None:
        return []
    data = SHARED / "data"
    found = [*TESTS.glob("out.*"), *(TESTS / "v9.0.8_expected").glob("out.*"),
             *(TESTS / "generated").glob("*.q"), *(REAL / "expected").glob("*.v10.q")]
    return sorted(str(path.relative_to(data)) for path in found)


@needs_shared
def test_every_expected_file_is_classified():
    files = expected_files()
    assert len(files) > 60
    unclassified = [name for name in files if name not in CASES and name not in NOT_COMPARABLE]
    assert not unclassified, f"no command for {unclassified}"
    stale = [name for name in list(CASES) + list(NOT_COMPARABLE) if name not in files]
    assert not stale, f"expected files that are not there: {stale}"


def _compare(expected_path: Path, completed: subprocess.CompletedProcess) -> int:
    assert completed.returncode == 0, completed.stderr.decode()
    ours = completed.stdout.decode("utf-8")
    assert ours.endswith("\n") and "\r" not in ours
    expected = expected_path.read_text(encoding="utf-8").split("\n")[:-1]
    ours_lines = ours.split("\n")[:-1]
    assert expected, f"{expected_path} is empty"
    if ours_lines != expected:
        for i, (a, b) in enumerate(zip(ours_lines, expected)):
            assert a == b, f"line {i + 1} differs:\n ours:     {a!r}\n expected: {b!r}"
        assert len(ours_lines) == len(expected), \
            f"{len(ours_lines)} lines printed, {len(expected)} expected"
    return len(expected)


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_trec_eval(name):
    path = SHARED / "data" / name
    completed = run_script(CASES[name], cwd=REAL / "expected" if name.startswith("real/")
                           else TESTS)
    _compare(path, completed)


@needs_shared
def test_with_comments_qrels_prints_out_test():
    """The README's second use of out.test: qrels with '#' comment lines."""
    completed = run_script(["qrels.test.with-comments", "results.test"], cwd=TESTS)
    _compare(TESTS / "out.test", completed)


@needs_shared
def test_preferences_with_comments():
    """The README's second use of out.test.prefs: preferences with '#' comment lines."""
    completed = run_script(["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test",
                            "prefs.results.test"], cwd=TESTS)
    _compare(TESTS / "out.test.prefs", completed)


@needs_shared
def test_judgment_groups_with_comments():
    """The README's second use of out.test.qrels_jg: judgment groups with '#' comments."""
    completed = run_script(["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123",
                            "results.test"], cwd=TESTS)
    _compare(TESTS / "out.test.qrels_jg", completed)


@needs_shared
def test_gzipped_run_from_stdin(tmp_path):
    """'-' reads stdin, and gzip is detected by content (trec_eval reads neither)."""
    data = gzip.compress((TESTS / "results.test").read_bytes())
    completed = run_script(["-m", "all_trec", "-q", TESTS / "qrels.test", "-"], stdin=data)
    _compare(TESTS / "out.test.aq", completed)


@needs_shared
def test_missing_topic_is_skipped_with_a_warning_not_fatal():
    """trec_eval 10.0 stops (exit 4, 'result qid not found in qrels') when a qrels topic is
    missing from the run; cumgain skips it like 9.0.8, says so on stderr, exits 0."""
    completed = run_script(["-q", *M_GENERATED, "qrels.test", "results.trunc"], cwd=TESTS)
    _compare(TESTS / "generated" / "v908.graded_suite.noc.trunc.q", completed)
    stderr = completed.stderr.decode()
    assert stderr.count("\n") == 1 and "302" in stderr and "-c" in stderr


@needs_shared
def test_summary_num_rel_under_c_ignores_l():
    """trec_eval's -c quirk: the summary num_rel counts every judgment > 0 whatever -l
    (559 on qrels.rel_level with -l2, against 97 without -c)."""
    def summary_num_rel(*flags):
        out = run_script([*flags, "-l2", "-m", "num_rel", "qrels.rel_level", "results.test"],
                         cwd=TESTS).stdout.decode()
        return out.split("\n")[0].split("\t")[2]
    assert summary_num_rel() == "97"
    assert summary_num_rel("-c") == "559"


@needs_shared
def test_v9_changes_a_printed_dcg():
    """InexpC2, topic 330: the float32 ranking moves dcg in the 4th decimal (10.0: 7.2982)."""
    command = ["-q", "-m", "dcg", "../qrels/qrels.robust03.txt",
               "../runs/robust03/input.InexpC2.gz"]
    lines = {}
    for version in ("10", "9"):
        out = run_script(["--trec-eval-version", version, *command], cwd=REAL / "expected")
        lines[version] = [line for line in out.stdout.decode().splitlines()
                          if line.split("\t")[1] == "330"]
    assert lines["10"] == ["dcg                   \t330\t7.2982"]
    assert lines["9"] == ["dcg                   \t330\t7.2981"]


def _four_decimals(full_precision: str) -> str:
    """A ``%.17g`` output of trec_eval as its stock ``%6.4f`` output: ``%.17g`` gives back
    the exact double, so formatting it again prints what trec_eval would have printed."""
    lines = []
    for line in full_precision.splitlines():
        name, topic, value = line.split("\t")
        if "." in value or "e" in value or name.rstrip() not in COUNTS:
            value = f"{float(value):6.4f}"
        lines.append(f"{name}\t{topic}\t{value}")
    return "\n".join(lines) + "\n"


COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret"}


@needs_shared
@pytest.mark.parametrize("run", ["InexpC2", "oce03noXbmD"])
def test_v9_ranks_float32_scores_like_trec_eval_908(run, tmp_path):
    """The two Robust03 runs whose ranking changes when scores are 32-bit floats
    (trec_eval 9.0.8, pytrec_eval), against 9.0.8's full-precision output printed at 4
    decimals. (Those differences stay below 4 decimals for 9.0.8's measures; that the flag
    changes the ranking is checked by the f32 golden files and by
    ``test_v9_changes_a_printed_dcg``.)"""
    expected = tmp_path / f"{run}.v908.q"
    expected.write_text(_four_decimals(
        (REAL / "expected" / f"robust03.{run}.v908.fp.q").read_text(encoding="utf-8")))
    command = ["-q", *M_REAL, "../qrels/qrels.robust03.txt", f"../runs/robust03/input.{run}.gz"]
    _compare(expected, run_script(V9 + command, cwd=REAL / "expected"))


# ------------------------------------------------------------------ no ../shared needed

GOLDEN_CASES = {
    # expected output file -> arguments (run in tests/golden)
    "tiny.official.out": ["tiny.qrels", "tiny.run"],
    "tiny.graded.q.out": ["-q", "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "map",
                          "-m", "P.2,5", "-m", "recip_rank", "-m", "ndcg", "-m", "ndcg_cut.3",
                          "-m", "dcg", "-m", "ndcg.1=1,2=10", "-m", "runid",
                          "tiny.qrels", "tiny.run"],
    "tiny.c.q.out": ["-q", "-c", "-m", "num_ret", "-m", "num_rel", "-m", "P.2", "-m", "gm_map",
                     "tiny.qrels", "tiny.run"],
    "tiny.c.q.v9.out": ["--trec-eval-version", "9", "-q", "-c", "-m", "num_ret", "-m",
                        "num_rel", "-m", "P.2", "-m", "gm_map", "tiny.qrels", "tiny.run"],
    "tiny.extensions.q.out": ["-q", "-m", "nDCG@3(discount=tois, base=2)", "-m", "CG@2",
                              "-m", "P.2", "tiny.qrels", "tiny.run"],
    # scores 1.000000002 (relevant a) and 1.000000001 (b): equal as float32, so 9.0.8
    # breaks the tie by docno descending and ranks b first
    "f32.v10.out": ["-m", "recip_rank", "f32.qrels", "f32.run"],
    "f32.v9.out": ["--trec-eval-version", "9", "-m", "recip_rank", "f32.qrels", "f32.run"],
}


@pytest.mark.slow
@pytest.mark.parametrize("expected", sorted(GOLDEN_CASES))
def test_golden(expected):
    completed = run_script(GOLDEN_CASES[expected], cwd=GOLDEN)
    assert completed.returncode == 0, completed.stderr.decode()
    assert completed.stdout.decode() == (GOLDEN / expected).read_text(encoding="utf-8")


def _summary(args) -> dict:
    completed = run_script(args, cwd=GOLDEN)
    assert completed.returncode == 0, completed.stderr.decode()
    return {line.split("\t")[0].rstrip(): line.split("\t")[2]
            for line in completed.stdout.decode().splitlines() if "\tall\t" in line}


def test_golden_values_from_the_definitions():
    """The tiny collection by hand (see tests/golden/README.md): topic 1 ranks
    d3 (level 2), d1 (0), d2 (1) (d1 and d3 tie at 0.5; docno descending puts d3 first);
    topic 10 ranks e1 (1), e9 (unjudged); topic 2 ranks f1 (0), f2 (3) and misses f3 (1);
    topic 3 is missing from the run (skipped), topic 5 is not in the qrels (ignored)."""
    import math
    ap = {"1": (1 / 1 + 2 / 3) / 2, "10": 1 / 1, "2": (1 / 2) / 2}
    values = _summary(["-m", "map", "-m", "P.2", "-m", "recip_rank", "-m", "ndcg_cut.3",
                       "tiny.qrels", "tiny.run"])
    assert values["map"] == f"{sum(ap.values()) / 3:6.4f}"
    assert values["P_2"] == f"{(1 / 2 + 1 / 2 + 1 / 2) / 3:6.4f}"
    assert values["recip_rank"] == f"{(1 + 1 + 1 / 2) / 3:6.4f}"
    ndcg_1 = (2 + 1 / math.log2(4)) / (2 + 1 / math.log2(3))
    ndcg_10 = 1.0
    ndcg_2 = (3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert values["ndcg_cut_3"] == f"{(ndcg_1 + ndcg_10 + ndcg_2) / 3:6.4f}"


def test_fractional_gain_table_is_sorted_by_gain():
    """trec_eval's comparator truncates gain differences to int, so gains 0.5, 0.9, 0.7 all
    compare equal; cumgain sorts the ideal properly. Topic 1: judged gains 0.5 (d2, level 1)
    and 0.9 (d3, level 2); the run ranks d3, d1, d2."""
    import math
    completed = run_script(["-q", "-m", "ndcg.1=0.5,2=0.9,3=0.7", "tiny.qrels", "tiny.run"],
                           cwd=GOLDEN)
    topic_1 = completed.stdout.decode().splitlines()[0].split("\t")
    dcg = 0.9 + 0.5 / math.log2(4)
    ideal = 0.9 + 0.5 / math.log2(3)
    assert topic_1 == ["ndcg_1=0.5,2=0.9,3=0.7", "1", f"{dcg / ideal:6.4f}"]


def test_measure_order_and_first_parameters_win():
    """trec_eval's registry order whatever the command-line order, and the first
    parameter list of a measure given twice."""
    completed = run_script(["-m", "ndcg_cut.3", "-m", "P.2", "-m", "P.5", "-m", "map", "-m",
                            "dcg", "-m", "ndcg", "tiny.qrels", "tiny.run"], cwd=GOLDEN)
    names = [line.split("\t")[0].rstrip() for line in completed.stdout.decode().splitlines()]
    assert names == ["map", "P_2", "dcg", "ndcg", "ndcg_cut_3"]


@pytest.mark.slow
@pytest.mark.parametrize("args, status, fragment", [
    (["-m", "bpref.5", "tiny.qrels", "tiny.run"], 1, "bpref takes no parameters"),
    (["-m", "nosuch", "tiny.qrels", "tiny.run"], 1, "unknown measure 'nosuch'"),
    (["-m", "P.", "tiny.qrels", "tiny.run"], 1, "improper measure"),
    (["-m", "utility.1,2", "tiny.qrels", "tiny.run"], 1, "utility takes 4 coefficients"),
    (["-Z", "nosuch.z", "tiny.qrels", "tiny.run"], 2, "nosuch.z: No such file"),
    (["-Z", "bad.qrels", "tiny.qrels", "tiny.run"], 2, "bad.qrels:1: mean and stddev must be"),
    (["-D", "1", "tiny.qrels", "tiny.run"], 1, "-D (debug output) is not offered"),
    (["-R", "qrels_jg", "-m", "map", "tiny.qrels", "tiny.run"], 2,
     "cannot be computed from judgment groups"),
    (["-m", "map_avgjg", "tiny.qrels", "tiny.run"], 2, "needs judgment groups"),
    (["-M-1", "tiny.qrels", "tiny.run"], 1, "must be at least 0"),
    (["tiny.qrels"], 1, "run"),
    (["nosuch.qrels", "tiny.run"], 2, "nosuch.qrels: No such file or directory"),
    (["bad.qrels", "tiny.run"], 2, "bad.qrels:3:"),
    (["tiny.qrels", "bad.run"], 2, "bad.run:2:"),
    (["-", "-"], 1, "standard input"),
    (["tiny.qrels", "other.run"], 7, "No queries with both results and relevance info"),
])
def test_errors_are_one_line(args, status, fragment):
    completed = run_script(args, cwd=GOLDEN)
    stderr = completed.stderr.decode()
    assert completed.returncode == status, stderr
    assert completed.stdout == b""
    assert stderr.count("\n") == 1 and fragment in stderr, stderr
    assert "Traceback" not in stderr


def test_help_and_version():
    completed = run_script(["-h"])
    assert completed.returncode == 0 and b"-q" in completed.stdout and b"-c" in completed.stdout
    completed = run_script(["-v"])
    assert completed.returncode == 0 and completed.stdout.startswith(b"cumgain-trec-eval ")
    completed = run_script(["-h", "-m", "bpref", "-m", "qrels_jg"])     # as trec_eval -h -m
    text = completed.stdout.decode()
    assert completed.returncode == 0 and "Individual measure documentation" in text
    assert "bpref\n" in text and "Buckley" in text and "map_avgjg\n" in text


def test_subcommand_is_the_same_program():
    """`cumgain trec_eval` and `cumgain-trec-eval` print the same bytes."""
    args = GOLDEN_CASES["tiny.graded.q.out"]
    cumgain = Path(sys.executable).with_name("cumgain")
    via_subcommand = subprocess.run([str(cumgain), "trec_eval", *args], cwd=GOLDEN,
                                    capture_output=True, timeout=120)
    assert via_subcommand.returncode == 0
    assert via_subcommand.stdout == run_script(args, cwd=GOLDEN).stdout


def test_no_summary():
    completed = run_script(["-q", "-n", "-m", "P.2", "tiny.qrels", "tiny.run"], cwd=GOLDEN)
    lines = completed.stdout.decode().splitlines()
    assert len(lines) == 3 and not any("\tall\t" in line for line in lines)


def test_v9_complete_summary_is_trec_eval_908s(tmp_path):
    """trec_eval 9.0.8 under -c evaluates only the topics the run has and adds
    n_missing * log(1e-5) to a geometric mean's sum at the end; yaap of a missing topic
    counts 0 (10.0 evaluates it: log(1 / (1 + R))). Values printed by the 9.0.8 binary
    at full precision: gm_map 9.9999999999999974e-06, yaap -0.086643397569993161."""
    import math
    from cumgain import evaluate
    from cumgain.analysis import trec_output as report_trec
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{t} 0 a 1\n" for t in range(1, 9)))
    run = tmp_path / "run"
    run.write_text("1 Q0 b 1 1 r\n")
    result = evaluate(qrels, run, ["gm_map", "yaap"], topics="qrels", warn=False,
                      score_precision="float32", recall_cutoffs="trec_eval9")
    means = report_trec.summary_without(result, result.missing_topics)
    assert means["gm_map"] == 9.9999999999999974e-06
    assert means["yaap"] == -0.086643397569993161 == math.log(1 / 2) / 8
    completed = run_script(["--trec-eval-version", "9", "-c", "-m", "gm_map", "-m", "yaap",
                            qrels, run])
    assert completed.stdout.decode().split("\n")[:2] == ["gm_map                \tall\t0.0000",
                                                         "yaap                  \tall\t-0.0866"]


def test_max_retrieved_0_keeps_no_document(tmp_path):
    """-M 0, which trec_eval accepts: nothing retrieved, every ranking measure 0, the
    judgments still counted."""
    (tmp_path / "q").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 c 1 1 t\n")
    done = run_script(["-M", "0", "-m", "num_ret", "-m", "num_rel", "-m", "map", "-m", "P.1",
                       tmp_path / "q", tmp_path / "r"])
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in done.stdout.decode().splitlines()]
    assert lines == [["num_ret", "all", "0"], ["num_rel", "all", "2"],
                     ["map", "all", "0.0000"], ["P_1", "all", "0.0000"]]
    refused = run_script(["-M", "-1", "-m", "map", tmp_path / "q", tmp_path / "r"])
    assert refused.returncode == 1 and b"must be at least 0" in refused.stderr
