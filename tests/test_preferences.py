"""trec_eval 10.0's preference measures (cumgain.engine.preferences, cgcore._prefs).

* Golden: trec_eval's own expected outputs for ``-R prefs`` and ``-R qrels_prefs``
  (../shared, skipped when absent), every prefs_* line printed identically.
* Worked examples: values derived by hand from the definitions (each derivation is
  in the test), for equivalence classes, a transitive preference array, unretrieved
  documents, conflicting judgment groups, and trec_eval's quirks.
* A literal pure-Python translation of form_prefs_counts.c and m_prefs_*.c (dense
  arrays, trec_eval's closure by repeated multiplication, its rank pool) as the
  oracle of a Hypothesis test.
* Bad input: every class of malformed line raises FormatError with file and line.
"""
from __future__ import annotations

import gzip
import math
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cgcore import _prefs
from cumgain.engine.results import TopicsWarning
from cumgain.exceptions import FormatError, InputError
from cumgain.engine.preferences import (
    COUNTS,
    MEASURES,
    PreferenceValues,
    UndefinedValueWarning,
    load_preferences,
    preference_values,
    rank_for_preferences,
)

_shared = Path(__file__).resolve().parents[1].parent / "shared"
TESTS = _shared / "data" / "trec_eval_tests"
needs_shared = pytest.mark.skipif(not TESTS.is_dir(),
                                  reason="../shared is not beside this checkout")


def write(tmp_path: Path, text: str, name: str = "prefs") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def values_of(tmp_path: Path, prefs_text: str, ranked: dict, format: str = "prefs",
              **options) -> dict:
    """{measure: value} of the one topic ``q``."""
    prefs = load_preferences(write(tmp_path, prefs_text), format)
    result = preference_values(prefs, ranked, **options)
    assert result.topics == ("q",)
    return {name: result.values[name][0] for name in MEASURES}


# --------------------------------------------------------------------------- golden

def trec_lines(result: PreferenceValues) -> list[str]:
    """trec_eval -q's lines: each topic's block in byte order, then the summary."""
    def line(name, topic, value):
        if name in COUNTS:
            return "%-22s\t%s\t%ld" % (name, topic, value)
        return "%-22s\t%s\t%6.4f" % (name, topic, value)

    lines = [line(name, topic, result.values[name][t])
             for t, topic in enumerate(result.topics) for name in MEASURES]
    summary = result.summary()
    return lines + [line(name, "all", summary[name]) for name in MEASURES]


def expected_lines(name: str) -> list[str]:
    return [line for line in (TESTS / name).read_text().splitlines()
            if line.split("\t")[0].strip() not in ("runid", "num_q")]


@needs_shared
@pytest.mark.parametrize("prefs_file", ["prefs.test", "prefs.comment.test"])
def test_trec_eval_prefs_expected_output(prefs_file):
    prefs = load_preferences(TESTS / prefs_file)
    ranked = rank_for_preferences(TESTS / "prefs.results.test")
    result = preference_values(prefs, ranked)
    expected = expected_lines("out.test.prefs")
    assert len(expected) == 14 * (len(result.topics) + 1)
    assert trec_lines(result) == expected


@needs_shared
def test_trec_eval_qrels_prefs_expected_output():
    prefs = load_preferences(TESTS / "qrels.test", "qrels_prefs")
    ranked = rank_for_preferences(TESTS / "results.test")
    result = preference_values(prefs, ranked)
    assert result.topics == ("301", "302", "303")
    assert trec_lines(result) == expected_lines("out.test.qrels_prefs")


# --------------------------------------------------------------------------- worked examples

def test_equivalence_classes_by_hand(tmp_path):
    # One judgment group, one sub-group: d1 (2) > d2 (1) > {d3, d4} (0): 5 preferences.
    # Ranking d2, d1, d5 (unjudged), d3; d4 not retrieved. Internal ranks: d2 0, d1 1,
    # d3 2 (the judged retrieved, NJR = 3), then d4 3.
    #   d1>d2: 1 > 0, both retrieved: not fulfilled   d1>d3, d2>d3: fulfilled, retrieved
    #   d1>d4, d2>d4: fulfilled, implied (d4 unretrieved)
    v = values_of(tmp_path, "q u s d1 2\nq u s d2 1\nq u s d3 0\nq u s d4 0\n",
                  {"q": ["d2", "d1", "d5", "d3"]})
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"],
            v["prefs_num_prefs_ful_ret"]) == (5, 4, 2)
    assert v["prefs_simp"] == 4 / 5 and v["prefs_avgjg"] == 4 / 5
    assert v["prefs_simp_ret"] == 2 / 3 and v["prefs_avgjg_ret"] == 2 / 3
    assert v["prefs_simp_imp"] == 4 / 5 and v["prefs_avgjg_imp"] == 4 / 5
    # pairs (higher-ranked first): (d2,d1) 0/1, (d2,d3) 1, (d1,d3) 1 | (d2,d4) 1, (d1,d4) 1
    assert v["prefs_pair_ret"] == (0 + 1 + 1) / 3
    assert v["prefs_pair_imp"] == v["prefs_pair"] == (0 + 1 + 1 + 1 + 1) / 5
    # R = 2 relevant, N = 2 non-relevant: R >= N adds rel_ret * 0; ratio 4 / 5.
    assert v["prefs_avgjg_Rnonrel"] == 4 / 5
    # Retrieved: R = 2, N = 1 (d3): ful = 2 + rel_ret * 1, poss = 3 + rel * 1.
    assert v["prefs_avgjg_Rnonrel_ret"] == (2 + 2 * 1) / (3 + 2 * 1)
    assert isinstance(v["prefs_num_prefs_poss"], np.int64)


def test_preference_array_with_transitive_preference_by_hand(tmp_path):
    # Sub-group a: A 3 > B 2 > C 1; sub-group b: B 5 > D 4. Preferences A>B, A>C, B>C,
    # B>D and, by transitivity, A>D (none between C and D): 5 (get_prefs.c's example).
    # Ranking A, D, B (C not retrieved): internal ranks A 0, D 1, B 2, C 3.
    #   A>B, A>D: fulfilled, retrieved; A>C, B>C: fulfilled, implied; B>D: not fulfilled.
    v = values_of(tmp_path, "q u a A 3\nq u a B 2\nq u a C 1\nq u b B 5\nq u b D 4\n",
                  {"q": ["A", "D", "B"]})
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"],
            v["prefs_num_prefs_ful_ret"]) == (5, 4, 2)
    assert v["prefs_simp"] == 4 / 5 and v["prefs_simp_ret"] == 2 / 3
    assert v["prefs_simp_imp"] == 4 / 5
    # pairs: (A,D) 1, (A,B) 1, (D,B) 0 | (A,C) 1, (B,C) 1
    assert v["prefs_pair_ret"] == 2 / 3 and v["prefs_pair"] == 4 / 5
    # All four documents relevant (levels > 0): R = 4, N = 0, rel_ret = 3.
    assert v["prefs_avgjg_Rnonrel"] == (4 + 3 * 4) / (5 + 4 * 4)
    # Retrieved: R = rel_ret = 3, N = 0; trec_eval adds rel (4), not rel_ret, to poss.
    assert v["prefs_avgjg_Rnonrel_ret"] == (2 + 3 * 3) / (3 + 4 * 3)


def test_without_transitivity_there_are_four_preferences(tmp_path):
    # The same sub-groups as separate judgment groups: no A > D.
    v = values_of(tmp_path, "q u a A 3\nq u a B 2\nq u a C 1\nq w b B 5\nq w b D 4\n",
                  {"q": ["A", "D", "B"]})
    assert v["prefs_num_prefs_poss"] == 4


def test_conflicting_judgment_groups_by_hand(tmp_path):
    # u1: X > Y, X > Z; u2: Y > X; u3: X > Y. Ranking Y, X (Z not retrieved).
    # u1: X>Y not fulfilled, X>Z fulfilled implied; u2: fulfilled; u3: not fulfilled.
    v = values_of(tmp_path, "q u1 s X 1\nq u1 s Y 0\nq u1 s Z 0\nq u2 s Y 2\nq u2 s X 1\n"
                            "q u3 s X 2\nq u3 s Y 1\n", {"q": ["Y", "X"]})
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"],
            v["prefs_num_prefs_ful_ret"]) == (4, 2, 1)
    assert v["prefs_simp"] == 2 / 4 and v["prefs_simp_ret"] == 1 / 3
    assert v["prefs_avgjg"] == (1 / 2 + 1 + 0) / 3
    assert v["prefs_avgjg_ret"] == (0 + 1 + 0) / 3
    # pair (Y, X): 1 group prefers Y (ranked higher), 2 prefer X: 1/3; (X, Z): 1.
    assert v["prefs_pair_ret"] == 1 / 3
    assert v["prefs_pair"] == v["prefs_pair_imp"] == (1 / 3 + 1) / 2
    # Rnonrel: u1 has R = 1 < N = 2, so only its first non-relevant doc in rank order
    # (Y) is kept: X>Y not fulfilled, and the EC of Y, Z against {Y} adds 2 more
    # unfulfilled (trec_eval compares the non-relevant EC with itself): 0 / 3.
    # u2: R = 2, N = 0: (1 + 2 * 2) / (1 + 2 * 2); u3: (0 + 2 * 2) / (1 + 2 * 2).
    assert v["prefs_avgjg_Rnonrel"] == (0 / 3 + 5 / 5 + 4 / 5) / 3
    # retrieved: u1 R = N = 1: 0 / 1; u2, u3 as above with the retrieved counts.
    assert v["prefs_avgjg_Rnonrel_ret"] == (0 / 1 + 5 / 5 + 4 / 5) / 3


def test_nothing_retrieved(tmp_path):
    # An empty ranking (trec_eval -c's bogus ranking): the 2 preferences are possible,
    # none fulfilled; every ratio is 0, the pair measures count the pair only.
    v = values_of(tmp_path, "q u s a 1\nq u s b 0\nq u s c 0\n", {"q": []})
    assert v["prefs_num_prefs_poss"] == 2
    assert all(v[name] == 0 for name in MEASURES if name != "prefs_num_prefs_poss")


def test_sentinel_level_minus_three_drops_the_lowest_class(tmp_path):
    # trec_eval counts a group's levels from a sentinel of -3.0, so a group whose
    # highest level is -3 loses its lowest class: 1 preference, not 3.
    ranked = {"q": ["a", "b", "c"]}
    assert values_of(tmp_path, "q j s a -3\nq j s b -4\nq j s c -5\n",
                     ranked)["prefs_num_prefs_poss"] == 1
    assert values_of(tmp_path, "q j s a -2\nq j s b -4\nq j s c -5\n",
                     ranked)["prefs_num_prefs_poss"] == 3


def test_a_zero_over_zero_group_zeroes_rnonrel(tmp_path):
    # j2 holds one non-relevant doc: its Rnonrel ratio is 0/0 = NaN, which makes the
    # topic's sum NaN, and trec_eval then leaves the value at 0 (j1 alone gives 1).
    v = values_of(tmp_path, "q j1 s a 1\nq j1 s b 0\nq j2 s c 0\n", {"q": ["a", "b", "c"]})
    assert v["prefs_avgjg"] == (1 + 0) / 2
    assert v["prefs_avgjg_Rnonrel"] == 0 and v["prefs_avgjg_Rnonrel_ret"] == 0


def test_pair_counts_wrap_at_65536(tmp_path):
    # A listed 256 times at level 2, B 256 times at 1: 65,536 preferences A > B, whose
    # count wraps to 0 in trec_eval's unsigned short array: the pair is not counted.
    text = "q u s A 2\n" * 256 + "q u s B 1\n" * 256
    v = values_of(tmp_path, text, {"q": ["A", "B"]})
    assert v["prefs_num_prefs_poss"] == 65536 and v["prefs_simp"] == 1
    assert v["prefs_pair"] == v["prefs_pair_ret"] == v["prefs_pair_imp"] == 0


def test_repeated_line_counts_twice(tmp_path):
    v = values_of(tmp_path, "q u s a 1\nq u s a 1\nq u s b 0\n", {"q": ["b", "a"]})
    assert v["prefs_num_prefs_poss"] == 2 and v["prefs_num_prefs_ful"] == 0


def test_rnonrel_reads_on_into_the_next_group(tmp_path):
    # j1: a, b (1) > c, d (0) > e (-1); j2: f (2) > g (1). Ranking a c g e f: internal
    # ranks a 0, c 1, g 2, e 3, f 4 (NJR = 5), b 5, d 6. trec_eval's rank pool holds
    # the EC groups' ranks one after another: [0 5 1 6 3 | 4 2].
    # j1 has R = 2 < N = 3, so recalculate() takes the first R = 2 ranks from the start
    # of its last EC {e}: 3 (e) and then 4, which is f's, of j2 (past the EC's end).
    #   ECs {a,b} x {c,d}: fulfilled (x < y and x retrieved) a<c, a<d: 2 of 4
    #   each EC against {3, 4}: a: 2 of 2, b: 0 of 2, c: 2 of 2, d: 0 of 2, e: 1 of 2
    #   j1: 7 / 14. j2: R = 2, N = 0: (0 + 2 * 2) / (1 + 2 * 2).
    v = values_of(tmp_path, "q j1 s a 1\nq j1 s b 1\nq j1 s c 0\nq j1 s d 0\nq j1 s e -1\n"
                            "q j2 s f 2\nq j2 s g 1\n", {"q": ["a", "c", "g", "e", "f"]})
    assert v["prefs_avgjg_Rnonrel"] == (7 / 14 + 4 / 5) / 2
    # _ret: R = 1 retrieved relevant (a) < N = 2; one rank read (3, e's own):
    # {a} x {c}: 1 of 1; {a}, {c}, {e} against {3}: 1, 1, 0 of 1 each: 3 / 4.
    assert v["prefs_avgjg_Rnonrel_ret"] == (3 / 4 + 4 / 5) / 2


def test_rnonrel_past_the_topic_is_undefined(tmp_path):
    # As above without j2: trec_eval reads past the end of its rank pool (valgrind:
    # "Invalid read"), so the value is undefined: NaN, with a warning.
    prefs = load_preferences(write(tmp_path, "q j s a 1\nq j s b 1\nq j s c 0\nq j s d 0\n"
                                             "q j s e -1\n"))
    with pytest.warns(UndefinedValueWarning, match="prefs_avgjg_Rnonrel"):
        result = preference_values(prefs, {"q": ["a", "c", "e"]})
    assert math.isnan(result.values["prefs_avgjg_Rnonrel"][0])
    assert math.isnan(result.summary()["prefs_avgjg_Rnonrel"])
    # ranks a 0, c 1, e 2 | b 3, d 4: a>c, a>e, c>e fulfilled, a>d fulfilled
    # implied; b>c, b>e, d>e not (implied); b>d neither retrieved: 4 of 8.
    assert result.values["prefs_simp"][0] == 4 / 8


def test_negative_levels_in_a_preference_array_are_neither_relevant_nor_not(tmp_path):
    # Many sub-groups: a (2) > b (-1) in s1, b (-1) > c (-2) in s2, so a > c too.
    v = values_of(tmp_path, "q u s1 a 2\nq u s1 b -1\nq u s2 b -1\nq u s2 c -2\n",
                  {"q": ["c", "b", "a"]})
    # a>b, b>c, a>c all unfulfilled (reversed ranking): 0 / 3
    assert v["prefs_num_prefs_poss"] == 3 and v["prefs_simp"] == 0
    # Levels < 0 count as neither relevant nor non-relevant in a preference array
    # (in an EC group they would be non-relevant): R = 1 (a), N = 0, rel_ret = 1:
    # (0 + 1 * 1) / (3 + 1 * 1).
    assert v["prefs_avgjg_Rnonrel"] == 1 / 4


def test_qrels_prefs_reads_the_second_column_as_the_group(tmp_path):
    # Two groups (iter 0 and 1) disagreeing about a and b; rel read as a float.
    v = values_of(tmp_path, "q 0 a 1\nq 0 b 0\nq 1 a 0\nq 1 b 1.5\n", {"q": ["a", "b"]},
                  format="qrels_prefs")
    assert v["prefs_num_prefs_poss"] == 2 and v["prefs_simp"] == 1 / 2
    assert v["prefs_pair"] == 1 / 2


def test_depth_and_ties_follow_form_prefs_counts(tmp_path):
    # Tied scores: docno ascending first (form_prefs_counts.c; the other trec_eval
    # measures order ties the other way), then the -M cut.
    run = write(tmp_path, "q Q0 b 1 1.0 r\nq Q0 a 2 1.0 r\nq Q0 c 3 2.0 r\n", "run")
    assert rank_for_preferences(run) == {"q": ["c", "a", "b"]}
    assert rank_for_preferences(run, depth=2) == {"q": ["c", "a"]}
    v = values_of(tmp_path, "q u s a 1\nq u s b 0\n", rank_for_preferences(run))
    assert v["prefs_simp_ret"] == 1
    v = values_of(tmp_path, "q u s a 0\nq u s b 1\n", rank_for_preferences(run))
    assert v["prefs_simp_ret"] == 0


def test_float32_mode_reproduces_trec_eval_9(tmp_path):
    # Levels 1 and 1.00000001 are equal as 32-bit floats (trec_eval 9.0.8).
    text = "q u s a 1.00000001\nq u s b 1\n"
    assert values_of(tmp_path, text, {"q": ["a", "b"]})["prefs_num_prefs_poss"] == 1
    assert values_of(tmp_path, text, {"q": ["a", "b"]},
                     level_precision="float32")["prefs_num_prefs_poss"] == 0
    run = write(tmp_path, "q Q0 b 1 1.0000000001 r\nq Q0 a 2 1.0 r\n", "run")
    assert rank_for_preferences(run) == {"q": ["b", "a"]}
    assert rank_for_preferences(run, score_precision="float32") == {"q": ["a", "b"]}


def test_topics_order_missing_and_summary(tmp_path):
    prefs = load_preferences(write(tmp_path, "t2 u s a 1\nt2 u s b 0\nt10 u s a 1\n"
                                             "t10 u s b 0\nt1 u s a 1\nt1 u s b 0\n"))
    assert prefs.topics == ("t1", "t10", "t2")                # byte order
    with pytest.warns(TopicsWarning, match="t10"):
        result = preference_values(prefs, {"t2": ["b", "a"], "t1": ["a"], "x": ["a"]})
    assert result.topics == ("t1", "t2") and result.missing == ("t10",)
    assert result.values["prefs_simp"].tolist() == [1.0, 0.0]
    summary = result.summary()
    assert summary["prefs_num_prefs_poss"] == 2 and isinstance(summary["prefs_num_prefs_poss"],
                                                               int)
    assert summary["prefs_simp"] == (1.0 + 0.0) / 2
    assert result.per_topic()["t2"]["prefs_simp"] == 0.0
    as_arrays = preference_values(prefs, {"t2": np.array(["b", "a"]), "t1": ("a",)},
                                  warn=False)
    assert as_arrays.values["prefs_simp"].tolist() == [1.0, 0.0]
    only = preference_values(prefs, {"t1": ["a"]}, ["prefs_simp", "prefs_num_prefs_ful"],
                             warn=False)
    assert list(only.values) == ["prefs_simp", "prefs_num_prefs_ful"]
    with pytest.raises(InputError, match="no topic"):
        preference_values(prefs, {}, warn=False).summary()


def test_comments_crlf_and_gzip(tmp_path):
    # Comment lines anywhere (trec_eval 10.0 misreads two in a row and crashes on a
    # final one), CRLF line ends, gzip: all read like the plain file.
    plain = load_preferences(write(tmp_path, "q u s a 1\nq u s b 0\n", "plain"))
    texts = ["# c1\n# c2\nq u s a 1\n  # indented\nq u s b 0\n# last",
             "q u s a 1\r\nq u s b 0\r\n"]
    for i, text in enumerate(texts):
        other = load_preferences(write(tmp_path, text, f"other{i}"))
        assert other.topics == plain.topics
        assert other.docnos.tolist() == plain.docnos.tolist()
        assert other.levels.tolist() == plain.levels.tolist()
    zipped = load_preferences(write(tmp_path, gzip.compress(b"q u s a 1\nq u s b 0\n"), "z.gz"))
    assert zipped.levels.tolist() == [1.0, 0.0]
    assert plain.lines.tolist() == [1, 2] and not plain.levels.flags.writeable


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("text, line, message", [
    ("q u s a 1\nq u s b\n", 2, "expected 5 fields (qid jg jsg docno rel_level), found 4"),
    ("q u s a 1 x\n", 1, "expected 5 fields"),
    ("q u s a 1\n\nq u s b 0\n", 2, "blank line"),
    ("q u s a 1\n   \t\n", 2, "blank line"),
    ("q u s a 1\nq u s b abc\n", 2, "rel_level 'abc' is not a number"),
    ("q u s a 2x\n", 1, "is not a number"),
    ("q u s a 0x10\n", 1, "is not a number"),
    ("q u s a 1_0\n", 1, "is not a number"),
    ("q u s a nan\n", 1, "is NaN"),
    ("q u s a inf\n", 1, "is infinite"),
    (b"q u s a 1\nq u s \xff 0\n", 2, "not valid UTF-8"),
    (b"q u s a 1\nq u s a\x00b 0\n", 2, "NUL byte"),
    ("q u s a 1\rq u s b 0\n", 1, "carriage return inside the line"),
    ("q u s a 1\nq u s a 1\u2028q u s b 0\n", 2, "U+2028 LINE SEPARATOR at column 10"),
    (b"BZh91AY&SY\x00\xff", 0, "compressed with bzip2, not supported"),
    ("", 0, "no judgments"),
    ("# only a comment\n", 0, "no judgments"),
    ("q u s a abc\nq u s b\n", 1, "is not a number"),      # the first error in file order
    ("q u s a 1\nq u s b\nq u s c abc\n", 2, "expected 5 fields"),
])
def test_malformed_prefs_lines(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        load_preferences(path)
    assert info.value.path == str(path) and info.value.line_number == line
    assert str(info.value).startswith(f"{path}:{line}: " if line else f"{path}: ")


def test_malformed_qrels_prefs_line(tmp_path):
    path = write(tmp_path, "301 0 d1 1\n301 0 s d2 0\n")
    with pytest.raises(FormatError, match="expected 4 fields \\(qid jg docno rel\\)") as info:
        load_preferences(path, "qrels_prefs")
    assert info.value.line_number == 2
    with pytest.raises(FormatError, match="relevance 'x' is not a number"):
        load_preferences(write(tmp_path, "301 0 d1 x\n"), "qrels_prefs")


def test_judgments_trec_eval_stops_on(tmp_path):
    ranked = {"q": ["a", "b", "c"]}
    # one sub-group, a doc at two levels ('occurs with different rel_level in same jsg')
    prefs = load_preferences(write(tmp_path, "q u s a 1\nq u s b 0\nq u s a 2\n"))
    with pytest.raises(FormatError, match="'a' has two levels.*line 3.*line 1|'a' has two "
                                          "levels.*line 1.*line 3") as info:
        preference_values(prefs, ranked)
    assert info.value.path == str(tmp_path / "prefs") and info.value.line_number == 3
    # several sub-groups, level 0 and a non-0 level ('has both 0 and non-0 rel_level')
    prefs = load_preferences(write(tmp_path, "q u s1 a 1\nq u s1 b 2\nq u s2 a 0\n"
                                             "q u s2 c 1\n"))
    with pytest.raises(FormatError, match="'a' is non-relevant in one sub-group"):
        preference_values(prefs, ranked)
    # several sub-groups, a cycle through transitivity (trec_eval aborts)
    prefs = load_preferences(write(tmp_path, "q u s1 a 2\nq u s1 b 1\nq u s2 b 2\n"
                                             "q u s2 c 1\nq u s3 c 2\nq u s3 a 1\n"))
    with pytest.raises(FormatError, match="each preferred to the other"):
        preference_values(prefs, ranked)
    # the same judgments in separate groups are fine: they may disagree
    prefs = load_preferences(write(tmp_path, "q u1 s1 a 2\nq u1 s1 b 1\nq u2 s2 b 2\n"
                                             "q u2 s2 a 1\n"))
    assert preference_values(prefs, ranked).values["prefs_pair"][0] == 1 / 2


def test_preference_array_too_large_is_refused(tmp_path):
    m = 46341                               # m * m > 2**31
    text = "".join(f"q u s{i % 2} d{i} 1\n" for i in range(m))
    prefs = load_preferences(write(tmp_path, text))
    with pytest.raises(InputError, match="46341\\*46341 cells, more than 2147483648"):
        preference_values(prefs, {"q": []})


def test_bad_arguments(tmp_path):
    prefs = load_preferences(write(tmp_path, "q u s a 1\nq u s b 0\n"))
    with pytest.raises(InputError, match="'a' more than once.*duplicate docs"):
        preference_values(prefs, {"q": ["a", "b", "a"]})
    with pytest.raises(InputError, match="sequence of docnos"):
        preference_values(prefs, {"q": "ab"})
    with pytest.raises(InputError, match="docnos must be str"):
        preference_values(prefs, {"q": ["a", 3]})
    with pytest.raises(InputError, match="topic ids must be str"):
        preference_values(prefs, {1: ["a"]})
    with pytest.raises(InputError, match="unknown preference measure 'map'"):
        preference_values(prefs, {"q": ["a"]}, ["map"])
    with pytest.raises(InputError, match="level_precision"):
        preference_values(prefs, {"q": ["a"]}, level_precision="half")
    with pytest.raises(InputError, match="Preferences"):
        preference_values("prefs", {"q": ["a"]})
    with pytest.raises(InputError, match="format must be one of"):
        load_preferences(tmp_path / "prefs", "qrels")
    with pytest.raises(InputError, match="depth"):
        rank_for_preferences({"q": {"a": 1.0}}, depth=-1)


def test_kernel_checks_its_arguments():
    def ints(*values):
        return np.array(values, dtype=np.int64)

    z = ints(0, 0)
    levels = np.zeros(2)
    with pytest.raises(ValueError, match="offsets\\[-1\\]"):
        _prefs.preference_measures(ints(0, 3), z, z, z, levels, z)
    with pytest.raises(ValueError, match="non-decreasing"):
        _prefs.preference_measures(ints(0, 2, 1, 2), z, z, z, levels, z)
    with pytest.raises(ValueError, match="levels has 1 entries"):
        _prefs.preference_measures(ints(0, 2), z, z, z, np.zeros(1), z)
    with pytest.raises(ValueError, match="NaN"):
        _prefs.preference_measures(ints(0, 2), z, z, z, np.array([0.0, np.nan]), z)
    with pytest.raises(ValueError, match="retrieved_at"):
        _prefs.preference_measures(ints(0, 2), z, z, z, levels, ints(0, -2))
    values, errors = _prefs.preference_measures(ints(0), ints(), ints(), ints(), np.zeros(0),
                                                ints())
    assert values.shape == (0, 14) and errors.shape == (0, 3)


# --------------------------------------------------------------------------- the oracle

class TrecEvalStops(Exception):
    """trec_eval reports an error (or aborts) on these judgments; args[0] is the kind."""


UNDEFINED = object()


def reference_topic(judgments: list, ranking: list) -> dict:
    """A literal translation of form_prefs_counts.c and m_prefs_*.c for one topic:
    ``judgments`` are (jg, jsg, docno, level), ``ranking`` the docnos in rank order."""
    key = str.encode
    judged = sorted({docno for _, _, docno, _ in judgments}, key=key)
    retrieved = [docno for docno in ranking if docno in set(judged)]
    njr = len(retrieved)
    rank = {docno: i for i, docno in enumerate(retrieved)}
    for docno in judged:
        if docno not in rank:
            rank[docno] = len(rank)
    nj = len(judged)
    entries = sorted(((key(g), key(s), -level, rank[d], d, level) for g, s, d, level in judgments))
    entries = [(g, s, level, r) for g, s, _, r, _, level in entries]
    ca = [[0] * nj for _ in range(nj)]
    pool: list = []
    groups = []
    i = 0
    while i < len(entries):
        j = i
        while j < len(entries) and entries[j][0] == entries[i][0]:
            j += 1
        group = entries[i:j]
        n_sub = len({s for _, s, _, _ in group})
        if n_sub > 1:
            groups.append(_reference_pa(group, nj, njr, ca))
        else:
            groups.append(_reference_ec(group, njr, ca, pool))
        i = j
    values = {}
    ful = sum(c["ful_ret"] + c["ful_imp"] for c in groups)
    poss = sum(c["poss_ret"] + c["poss_imp"] + c["notoccur"] for c in groups)
    ful_ret = sum(c["ful_ret"] for c in groups)
    poss_ret = sum(c["poss_ret"] for c in groups)
    poss_imp = sum(c["poss_ret"] + c["poss_imp"] for c in groups)
    values["prefs_num_prefs_poss"] = poss
    values["prefs_num_prefs_ful"] = ful
    values["prefs_num_prefs_ful_ret"] = ful_ret
    values["prefs_simp"] = ful / poss if poss else 0.0
    values["prefs_simp_ret"] = ful_ret / poss_ret if poss_ret else 0.0
    values["prefs_simp_imp"] = ful / poss_imp if poss_imp else 0.0

    def mean_over_groups(terms):
        total = 0.0
        for term in terms:
            total += term
        return total / len(groups) if total > 0.0 else 0.0     # a NaN total gives 0

    def ratio(ful, poss):
        return ful / poss if poss else math.nan                 # C's 0.0 / 0.0

    simp = [(c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"] + c["notoccur"])
            for c in groups]
    simp_ret = [(c["ful_ret"], c["poss_ret"]) for c in groups]
    simp_imp = [(c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"]) for c in groups]
    for name, pairs_ in (("prefs_avgjg", simp), ("prefs_avgjg_ret", simp_ret),
                         ("prefs_avgjg_imp", simp_imp)):
        values[name] = mean_over_groups([f / p if p else 0.0 for f, p in pairs_])
    for name, ret in (("prefs_avgjg_Rnonrel", False), ("prefs_avgjg_Rnonrel_ret", True)):
        terms = []
        for c in groups:
            R, N = (c["rel_ret"], c["nonrel_ret"]) if ret else (c["rel"], c["nonrel"])
            if R >= N:
                f = c["ful_ret"] + (0 if ret else c["ful_imp"]) + c["rel_ret"] * (R - N)
                p = c["poss_ret"] + (0 if ret else c["poss_imp"] + c["notoccur"]) \
                    + c["rel"] * (R - N)
                terms.append(ratio(f, p))
            else:
                terms.append(c["recalculate"](ret))
        undefined = any(term is UNDEFINED for term in terms)
        values[name] = math.nan if undefined else mean_over_groups(terms)
    # pairs, on the unsigned short count array
    c = [[x % 65536 for x in row] for row in ca]
    total, pairs = 0.0, 0
    for a in range(njr):
        for b in range(a + 1, njr):
            if c[a][b] or c[b][a]:
                pairs += 1
                total += c[a][b] / (c[a][b] + c[b][a])
    values["prefs_pair_ret"] = total / pairs if pairs else 0.0
    for a in range(njr):
        for b in range(njr, nj):
            if c[a][b] or c[b][a]:
                pairs += 1
                total += c[a][b] / (c[a][b] + c[b][a])
    values["prefs_pair_imp"] = total / pairs if pairs else 0.0
    for a in range(njr, nj):
        for b in range(a + 1, nj):
            if c[a][b] or c[b][a]:
                pairs += 1
    values["prefs_pair"] = total / pairs if pairs else 0.0
    return values


def _reference_ec(group, njr, ca, pool):
    """form_jg_ec + add_ec_pref_to_jg, and recalculate() for an EC group."""
    start = len(pool)
    pool.extend(r for _, _, _, r in group)
    ecs = []                        # (level, pool offset, size)
    for n, (_, _, level, _) in enumerate(group):
        if not ecs or level != ecs[-1][0]:
            ecs.append([level, start + n, 0])
        ecs[-1][2] += 1
    num_ecs, previous = 0, -3.0
    for _, _, level, _ in group:
        if level != previous:
            num_ecs += 1
            previous = level
    ecs = ecs[:num_ecs]
    c = dict.fromkeys(("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur", "rel",
                       "rel_ret", "nonrel", "nonrel_ret"), 0)

    def ranks(ec):
        return pool[ec[1]:ec[1] + ec[2]]

    for e1, ec1 in enumerate(ecs):
        ret = sum(1 for r in ranks(ec1) if r < njr)
        kind = "rel" if ec1[0] > 0.0 else "nonrel"
        c[kind + "_ret"] += ret
        c[kind] += ec1[2]
        for ec2 in ecs[e1 + 1:]:
            for r1 in ranks(ec1):
                for r2 in ranks(ec2):
                    ca[r1][r2] += 1
                    if r1 == r2:
                        raise TrecEvalStops("two levels")
                    if r1 < r2:
                        key = "ful_ret" if r2 < njr else "ful_imp" if r1 < njr else "notoccur"
                    else:
                        key = "poss_ret" if r1 < njr else "poss_imp" if r2 < njr else "notoccur"
                    c[key] += 1
    c["poss_ret"] += c["ful_ret"]
    c["poss_imp"] += c["ful_imp"]

    def recalculate(ret):
        n_new = c["rel_ret"] if ret else c["rel"]
        last = ecs[-1]
        ful = poss = 0

        def first(ec):
            out = []
            for r in ranks(ec):
                if ret and r >= njr:
                    break
                out.append(r)
            return out

        new = []
        for p in range(last[1], last[1] + n_new):
            if p >= len(pool):
                return UNDEFINED
            if ret and pool[p] >= njr:
                break
            new.append(pool[p])
        for e1, ec1 in enumerate(ecs):
            for ec2 in ecs[e1 + 1:len(ecs) - 1]:
                for r1 in first(ec1):
                    for r2 in first(ec2):
                        if r1 < r2 and (ret or r1 < njr):
                            ful += 1
                        else:
                            poss += 1
        for ec1 in ecs:
            for r1 in first(ec1):
                for r2 in new:
                    if r1 < r2 and (ret or r1 < njr):
                        ful += 1
                    else:
                        poss += 1
        poss += ful
        return ful / poss if poss else math.nan

    c["recalculate"] = recalculate
    return c


def _reference_pa(group, nj, njr, ca):
    """form_jg_pa + add_transitives + add_pa_pref_to_jg, and recalculate()."""
    pa = [[0] * nj for _ in range(nj)]
    rel = [-1.0] * nj
    for i, (_, s, level, r) in enumerate(group):
        if (rel[r] > 0.0 and level == 0.0) or (rel[r] == 0.0 and level > 0.0):
            raise TrecEvalStops("zero and non-zero")
        rel[r] = level
        j = i + 1
        while j < len(group) and group[j][1] == s and group[j][2] == level:
            j += 1
        while j < len(group) and group[j][1] == s:
            pa[r][group[j][3]] = 1
            j += 1
    for i in range(nj):
        pa[i][i] = 1

    def multiply(a1, a2):
        return [[1 if any(a1[i][k] and a2[k][j] for k in range(nj)) else 0
                 for j in range(nj)] for i in range(nj)]

    current = multiply(pa, pa)
    if current != pa:
        while True:
            following = multiply(pa, current)
            if following == current:
                break
            current = following
        pa = current
    for i in range(nj):
        pa[i][i] = 0
    if any(pa[i][j] and pa[j][i] for i in range(nj) for j in range(nj) if i != j):
        raise TrecEvalStops("cycle")
    c = dict.fromkeys(("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"), 0)
    c["rel_ret"] = sum(1 for i in range(njr) if rel[i] > 0.0)
    c["nonrel_ret"] = sum(1 for i in range(njr) if rel[i] == 0.0)
    c["rel"] = c["rel_ret"] + sum(1 for i in range(njr, nj) if rel[i] > 0.0)
    c["nonrel"] = c["nonrel_ret"] + sum(1 for i in range(njr, nj) if rel[i] == 0.0)
    for i in range(nj):
        for j in range(nj):
            if pa[i][j]:
                ca[i][j] += 1
                if i < njr:
                    key = "poss_ret" if j < i else "ful_ret" if j < njr else "ful_imp"
                else:
                    key = "poss_imp" if j < njr else "notoccur"
                c[key] += 1
    c["poss_ret"] += c["ful_ret"]
    c["poss_imp"] += c["ful_imp"]

    def recalculate(ret):
        limit = njr if ret else nj
        seen, first_discarded = 0, limit
        for i in range(limit):
            if rel[i] == 0.0:
                seen += 1
                if seen == c["rel"] + 1:
                    first_discarded = i
                    break

        def kept(i):
            return not (i >= first_discarded and rel[i] == 0.0)

        ful = poss = 0
        for i in range(limit):
            for j in range(limit):
                if i != j and kept(i) and kept(j) and pa[i][j]:
                    if i < njr and j > i:
                        ful += 1
                    else:
                        poss += 1
        poss += ful
        return ful / poss if poss else math.nan

    c["recalculate"] = recalculate
    return c


DOCS = ["a", "b", "c", "d", "e", "f", "B", "aa"]
LEVELS = [0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.0, -3.0]
LOW_LEVELS = [-3.0, -3.0, -4.0, -5.0, -1.0, 0.0]       # the -3.0 sentinel as a top level


@st.composite
def topics(draw):
    judgments = []
    for g in range(draw(st.integers(1, 3))):
        group = draw(st.sampled_from(["u", "v", "w1", "W"])) + str(g)
        if draw(st.booleans()):         # one sub-group: equivalence classes
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
            sub = draw(st.sampled_from(["s", "0"]))
            levels = draw(st.sampled_from([LEVELS, LEVELS, LOW_LEVELS]))
            for docno in docs:
                judgments.append((group, sub, docno, draw(st.sampled_from(levels))))
        else:                           # sub-groups over consistent hidden levels
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=2, max_size=7, unique=True))
            hidden = {docno: draw(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, -1.0]))
                      for docno in docs}
            for s in range(draw(st.integers(2, 3))):
                scale = draw(st.sampled_from([1.0, 2.0, 0.5]))
                for docno in draw(st.lists(st.sampled_from(docs), min_size=1, unique=True)):
                    judgments.append((group, f"s{s}", docno, hidden[docno] * scale))
    if draw(st.integers(0, 9)) == 0 and judgments:          # sometimes inconsistent
        g, s, docno, level = judgments[0]
        judgments.append((g, s, docno, level + 1.0))
    judgments = draw(st.permutations(judgments))
    ranking = draw(st.lists(st.sampled_from(DOCS + ["x", "y"]), max_size=9, unique=True))
    return judgments, ranking


@given(st.lists(topics(), min_size=1, max_size=3))
def test_kernel_matches_a_literal_translation_of_trec_eval(cases):
    text = "".join(f"q{t} {g} {s} {d} {level!r}\n"
                   for t, (judgments, _) in enumerate(cases) for g, s, d, level in judgments)
    ranked = {f"q{t}": ranking for t, (_, ranking) in enumerate(cases)}
    with tempfile.TemporaryDirectory() as tmp:
        prefs = load_preferences(write(Path(tmp), text))
        expected = {}
        stops = None
        for t in sorted(range(len(cases)), key=lambda t: f"q{t}"):
            judgments, ranking = cases[t]
            try:
                expected[f"q{t}"] = reference_topic(judgments, ranking)
            except TrecEvalStops:
                stops = True
                break
        if stops:
            with pytest.raises(FormatError):
                preference_values(prefs, ranked)
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedValueWarning)
            result = preference_values(prefs, ranked)
    for t, topic in enumerate(result.topics):
        for name in MEASURES:
            ours, theirs = result.values[name][t], expected[topic][name]
            assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)), \
                (topic, name, ours, theirs)
