"""End-to-end benchmark of cumgain against its peers, one fresh process per measurement.

One command runs, for each chosen collection size (see ``generate.py``):

a. ``files``   TREC files -> per-topic values and means of ndcg, ndcg_cut_10, map, P_10,
               recip_rank: cumgain (``score_precision="float32"`` and ``"float64"``; its
               default ``threads=None``: the available cores, here 2, read the files),
               pytrec_eval-terrier (parse_qrel/parse_run + RelevanceEvaluator + means),
               ir_measures (read_trec_qrels/read_trec_run + calc_aggregate), ranx
               (Qrels.from_file/Run.from_file + evaluate) and a naive pure-Python loop;
b. ``dicts``   already-loaded ``{qid: {docno: value}}`` dicts: only the ``evaluate`` call of
               ``cumgain.compat.pytrec_eval.RelevanceEvaluator`` vs pytrec_eval's is timed
               (the dicts and the evaluator are built first, in the same process);
c. ``dense``   ``ndcg_score(k=10)`` on a dense topics x docs matrix (the size's shape):
               ``cumgain.compat.sklearn`` vs ``sklearn.metrics``; only the call is timed;
d. ``floor``   a minimal C program (``split_floor.c``, compiled with ``cc -O2`` into
               ``data/``) that reads the run file in 4 MiB blocks and splits every line into
               fields: the least any reader must do. Also run on run + qrels;
e. ``threads`` the cumgain files job (float32, ``threads=1`` so each evaluation uses one
               thread) twice in one process: sequentially vs in two threads at once (the
               speed-up shows how much of it releases the GIL);
               with a control: two numpy sorts of 20M floats (GIL released), the same way,
               which shows how much parallelism the (shared) machine offered at the time;
f. ``runs``    one more run against qrels read beforehand (the many-runs case): only the
               run's reading through to the means is timed; cumgain
               (``prepare_qrels`` untimed, then ``evaluate``, float32), pytrec_eval
               (``parse_qrel`` + ``RelevanceEvaluator`` untimed, then ``parse_run`` +
               ``evaluate`` + means) and ir_measures (``evaluator(measures, qrels)``
               untimed, then ``calc_aggregate(read_trec_run)``). This job reads what
               the run-file floor reads.
g. ``unordered`` the files job (float64) on the same run lines in other orders: the file
               as written (topics contiguous), its lines shuffled, and as four
               concatenated shards (line i in shard i mod 4: each topic in four
               blocks), with pytrec_eval on the shuffled file; the two files are made
               once in ``data/<size>/`` (``run-shuffled.txt``, ``run-sharded.txt``);
h. ``stdin``   the files job (float64) with the run given by path, piped on standard
               input (``cat run.txt | ...``, the run read as ``"-"``), and a gzip of it
               (``run.txt.gz``, made once in ``data/<size>/``) by path and piped through
               ``zcat``.

Every measurement is a separate ``python`` (or C) process; each is repeated ``--repeats``
times, interleaved across tools, and the median is reported. "time" is measured inside the
process around the job only (imports and interpreter start-up excluded; for ``dicts`` and
``dense`` only the evaluate / ndcg_score call); "process" is the wall time of the whole
process as seen by this script (start-up, imports, numba cache loading, the job, exit).
Peak RSS is the child's ``ru_maxrss`` from ``os.wait4``. Before each measurement the
size's qrels and run files are read once, so that every tool starts with them in the
page cache (see ``warm_page_cache``). Ratios are peer / cumgain, so
> 1 means cumgain is faster or smaller. ranx is run once untimed first so its numba
cache is compiled.

After the table the script checks that the tools agree where their semantics agree and
says why where they don't (tie order, topic sets, precision).

Run (with a Python where cumgain and the peers are installed)::

    python benchmarks/run_peers.py --sizes S            # smoke run, < 1 min
    python benchmarks/run_peers.py --sizes S,M,L --repeats 3
    python benchmarks/run_peers.py --sizes M --tools cumgain,pytrec_eval --jobs files,dicts

Options: ``--sizes``, ``--repeats`` (3), ``--tools`` (cumgain, pytrec_eval, ir_measures,
ranx, naive, sklearn, floor), ``--jobs`` (files, dicts, dense, floor, threads, runs),
``--measure-set`` (bundle: ndcg, ndcg_cut_10, map, P_10, recip_rank; or trec_eval's
``official`` or ``all_trec`` as pytrec_eval expands them, for cumgain and pytrec_eval),
``--skip-generate`` (use the files in ``data/`` as they are), ``--timeout`` (s per process),
``--json PATH`` (raw results).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

# the measure bundle, in trec_eval / pytrec_eval output names
MEASURES = ("ndcg", "ndcg_cut_10", "map", "P_10", "recip_rank")
PYTREC_MEASURES = {"ndcg", "ndcg_cut.10", "map", "P.10", "recip_rank"}
RANX_MEASURES = {"ndcg": "ndcg", "ndcg_cut_10": "ndcg@10", "map": "map",
                 "P_10": "precision@10", "recip_rank": "mrr"}
IRM_MEASURES = {"ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "map": "AP", "P_10": "P@10",
                "recip_rank": "RR"}
# --measure-set: the five measures above ("bundle"), or a trec_eval nickname as
# pytrec_eval-terrier (trec_eval 9.0.8) expands it, computed by cumgain and pytrec_eval only
MEASURE_SETS = ("bundle", "official", "all_trec")
MEASURE_SET = "bundle"
SPELLINGS = list(MEASURES)      # what cumgain is asked for


def use_measure_set(name: str) -> None:
    """Set MEASURES (the numeric output names compared), PYTREC_MEASURES and SPELLINGS
    for a measure set."""
    global MEASURE_SET, MEASURES, PYTREC_MEASURES, SPELLINGS
    MEASURE_SET = name
    if name == "bundle":
        return
    from cumgain.compat.pytrec_eval import supported_nicknames
    from cumgain.measures import parse_measures
    SPELLINGS = sorted(supported_nicknames[name])
    MEASURES = tuple(m.name for m in parse_measures(SPELLINGS) if m.kind != "text")
    PYTREC_MEASURES = {name}

ALL_TOOLS = ("cumgain", "pytrec_eval", "ir_measures", "ranx", "naive", "sklearn", "floor")
ALL_JOBS = ("files", "dicts", "dense", "floor", "threads", "runs", "unordered", "stdin",
            "ties")
# job -> [(tool id, family, label)]; the first entry is the job's reference for ratios
JOB_TOOLS = {
    "files": [("cumgain_f32", "cumgain", "cumgain float32"),
              ("cumgain_f64", "cumgain", "cumgain float64"),
              ("pytrec_eval", "pytrec_eval", "pytrec_eval-terrier"),
              ("ir_measures", "ir_measures", "ir_measures"),
              ("ranx", "ranx", "ranx"),
              ("naive", "naive", "naive pure Python")],
    "dicts": [("cumgain_compat", "cumgain", "cumgain.compat.pytrec_eval"),
              ("pytrec_eval", "pytrec_eval", "pytrec_eval-terrier")],
    "dense": [("cumgain_sklearn", "cumgain", "cumgain.compat.sklearn"),
              ("sklearn", "sklearn", "scikit-learn")],
    "floor": [("split_run", "floor", "C split floor: run"),
              ("split_run_qrels", "floor", "C split floor: run+qrels")],
    "runs": [("cumgain_run", "cumgain", "cumgain float32"),
             ("pytrec_eval_run", "pytrec_eval", "pytrec_eval-terrier"),
             ("ir_measures_run", "ir_measures", "ir_measures")],
    "unordered": [("cumgain_sorted", "cumgain", "cumgain, topics contiguous"),
                  ("cumgain_shuffled", "cumgain", "cumgain, lines shuffled"),
                  ("cumgain_sharded", "cumgain", "cumgain, 4 shards concatenated"),
                  ("pytrec_eval_shuffled", "pytrec_eval", "pytrec_eval-terrier, shuffled")],
    "stdin": [("cumgain_path", "cumgain", "cumgain, run by path"),
              ("cumgain_cat", "cumgain", "cumgain, cat run | ... -"),
              ("cumgain_gzpath", "cumgain", "cumgain, run.gz by path"),
              ("cumgain_zcat", "cumgain", "cumgain, zcat run.gz | ... -")],
    "ties": [("cumgain_docno_desc", "cumgain", "cumgain, ties by docno (trec_eval)"),
             ("cumgain_expected", "cumgain", "cumgain, ties='expected'"),
             ("cumgain_optimistic", "cumgain", "cumgain, ties='optimistic'"),
             ("cumgain_pessimistic", "cumgain", "cumgain, ties='pessimistic'")],
    "threads": [("threads2", "cumgain", "cumgain f32, 2 threads at once"),
                ("sequential2", "cumgain", "cumgain f32, 2x sequentially"),
                ("control_threads2", "cumgain", "control: numpy sort, 2 threads"),
                ("control_sequential2", "cumgain", "control: numpy sort, 2x seq.")],
}
JOB_LABEL = {"files": "files->means", "dicts": "loaded dicts", "dense": "dense nDCG@10",
             "floor": "split floor", "threads": "2 evaluations", "runs": "one more run",
             "unordered": "unordered runs", "stdin": "run on stdin", "ties": "tie rules"}
# the run file each tool of the unordered and stdin jobs reads (in data/<size>/), and for
# stdin what feeds it: None (by path), "cat" or "zcat" (of run.txt.gz)
RUN_FILES = {"cumgain_sorted": "run.txt", "cumgain_shuffled": "run-shuffled.txt",
             "cumgain_sharded": "run-sharded.txt", "pytrec_eval_shuffled": "run-shuffled.txt",
             "cumgain_path": "run.txt", "cumgain_cat": "run.txt", "cumgain_gzpath": "run.txt.gz",
             "cumgain_zcat": "run.txt.gz"}
FEEDERS = {"cumgain_cat": "cat", "cumgain_zcat": "zcat"}
EXIT_UNAVAILABLE = 3
# Children may cache bytecode as a normal installation does (some sandboxes set
# PYTHONDONTWRITEBYTECODE, which would make every fresh process recompile its imports).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# =====================================================================================
# worker side: runs in a fresh process, does one measurement, writes a JSON result
# =====================================================================================

def _rss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _byte_sorted_mean(per_topic: dict, name: str) -> float:
    """Mean over topics summed in trec_eval's order (byte order of the topic id)."""
    topics = sorted(per_topic, key=lambda q: q.encode())
    return sum(per_topic[q][name] for q in topics) / len(topics) if topics else float("nan")


def _per_topic_arrays(per_topic: dict) -> dict:
    """{measure: {topic: value}} from pytrec_eval's {topic: {measure: value}}."""
    return {m: {q: values[m] for q, values in per_topic.items()} for m in MEASURES}


def _read_qrels_dict(qrels_path: str) -> dict:
    """Plain ``{qid: {docno: int level}}``."""
    qrels: dict = {}
    with open(qrels_path) as f:
        for line in f:
            qid, _, doc, rel = line.split()
            qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def _read_dicts(qrels_path: str, run_path: str):
    """Plain ``{qid: {docno: int level}}`` and ``{qid: {docno: float score}}``."""
    qrels = _read_qrels_dict(qrels_path)
    run: dict = {}
    with open(run_path) as f:
        for line in f:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return qrels, run


def _naive_evaluate(qrels_path: str, run_path: str):
    """trec_eval's definitions in plain Python: score descending, ties by docno descending."""
    log2 = math.log2
    qrels = _read_qrels_dict(qrels_path)
    run: dict = {}
    with open(run_path) as f:
        for line in f:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, []).append((float(score), doc))
    per_topic = {}
    for qid in sorted(set(run) & set(qrels)):
        judged = qrels[qid]
        ranking = sorted(run[qid], reverse=True)[:1000]   # trec_eval -M 1000
        gains = [judged.get(doc, 0) for _, doc in ranking]
        gains = [g if g > 0 else 0 for g in gains]
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
        num_rel = sum(1 for g in judged.values() if g >= 1)
        dcg = dcg10 = 0.0
        found = 0
        ap = 0.0
        rr = 0.0
        for i, g in enumerate(gains):
            if g:
                dcg += g / log2(i + 2)
                if i < 10:
                    dcg10 += g / log2(i + 2)
            if g >= 1:
                found += 1
                ap += found / (i + 1)
                if rr == 0.0:
                    rr = 1.0 / (i + 1)
        idcg = idcg10 = 0.0
        for i, g in enumerate(ideal):
            idcg += g / log2(i + 2)
            if i < 10:
                idcg10 += g / log2(i + 2)
        p10 = sum(1 for g in gains[:10] if g >= 1) / 10.0
        per_topic[qid] = {"ndcg": dcg / idcg if idcg > 0 else 0.0,
                          "ndcg_cut_10": dcg10 / idcg10 if idcg10 > 0 else 0.0,
                          "map": ap / num_rel if num_rel else 0.0,
                          "P_10": p10, "recip_rank": rr}
    return per_topic


def _dense_matrices(n_samples: int, n_labels: int, seed: int = 20021001):
    """Graded labels 0-3 (mostly 0) and scores rounded to 2 decimals (many ties)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    y_true = rng.choice(4, size=(n_samples, n_labels), p=[0.85, 0.08, 0.05, 0.02])
    y_score = np.round(rng.normal(size=(n_samples, n_labels)), 2)
    return y_true, y_score


def _cumgain_files(qrels_path: str, run_path: str, precision: str, threads=None):
    """float32 is pytrec_eval's trec_eval 9.0.8: its recall cut-offs too."""
    import cumgain
    return cumgain.evaluate(qrels_path, run_path, SPELLINGS, score_precision=precision,
                            recall_cutoffs="trec_eval9" if precision == "float32" else "nearest",
                            warn=False, threads=threads)


def _cumgain_topic_values(result) -> dict:
    return {m: dict(zip(result.topics, result.values[m].tolist())) for m in MEASURES}


def _pytrec_means(pytrec_eval, result: dict) -> dict:
    """pytrec_eval's means, summed in trec_eval's topic order (byte order of the id)."""
    return {m: pytrec_eval.compute_aggregated_measure(
        m, [result[q][m] for q in sorted(result, key=str.encode)]) for m in MEASURES}


def _ir_measures_means(aggregate: dict) -> dict:
    by_name = {str(k): float(v) for k, v in aggregate.items()}
    return {m: by_name[IRM_MEASURES[m]] for m in MEASURES}


def worker(job: str, tool: str, size: str, data_dir: str, dump: str | None) -> dict:
    """One measurement. Returns {"seconds", "means", "extra"}; writes per-topic values
    to ``dump`` (pickle) when asked. Exits with EXIT_UNAVAILABLE if an import fails."""
    qrels_path = os.path.join(data_dir, size, "qrels.txt")
    run_path = os.path.join(data_dir, size, "run.txt")
    out: dict = {"means": None, "extra": {}}
    per_topic = None
    perf = time.perf_counter

    def unavailable(exc: BaseException):
        print(json.dumps({"unavailable": f"{type(exc).__name__}: {exc}"}))
        sys.exit(EXIT_UNAVAILABLE)

    if MEASURE_SET != "bundle" and not tool.startswith(("cumgain", "pytrec_eval")):
        unavailable(ValueError(f"{tool} has no trec_eval nickname {MEASURE_SET}"))

    if job == "files":
        if tool.startswith("cumgain"):
            try:
                import cumgain  # noqa: F401
            except Exception as exc:
                unavailable(exc)
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            result = _cumgain_files(qrels_path, run_path,
                                    "float32" if tool == "cumgain_f32" else "float64")
            means = {m: float(result.means[m]) for m in MEASURES}
            out["seconds"] = perf() - start
            out["means"] = means
            out["extra"]["topics"] = len(result.topics)
            if dump:
                per_topic = _cumgain_topic_values(result)
        elif tool == "pytrec_eval":
            try:
                import pytrec_eval
            except Exception as exc:
                unavailable(exc)
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            with open(qrels_path) as f:
                qrel = pytrec_eval.parse_qrel(f)
            with open(run_path) as f:
                run = pytrec_eval.parse_run(f)
            loaded = perf()
            evaluator = pytrec_eval.RelevanceEvaluator(qrel, PYTREC_MEASURES)
            result = evaluator.evaluate(run)
            means = _pytrec_means(pytrec_eval, result)
            out["seconds"] = perf() - start
            out["extra"]["load_seconds"] = loaded - start
            out["means"] = means
            out["extra"]["topics"] = len(result)
            if dump:
                per_topic = _per_topic_arrays(result)
        elif tool == "ir_measures":
            try:
                import ir_measures
            except Exception as exc:
                unavailable(exc)
            measures = [ir_measures.parse_measure(IRM_MEASURES[m]) for m in MEASURES]
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            agg = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(qrels_path),
                                             ir_measures.read_trec_run(run_path))
            out["seconds"] = perf() - start
            out["means"] = _ir_measures_means(agg)
        elif tool == "ranx":
            try:
                from ranx import Qrels, Run, evaluate
            except Exception as exc:
                unavailable(exc)
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            qrels = Qrels.from_file(qrels_path, kind="trec")
            run = Run.from_file(run_path, kind="trec")
            loaded = perf()
            means = evaluate(qrels, run, [RANX_MEASURES[m] for m in MEASURES])
            out["seconds"] = perf() - start
            out["extra"]["load_seconds"] = loaded - start
            out["means"] = {m: float(means[RANX_MEASURES[m]]) for m in MEASURES}
            if dump:
                per_topic = {m: {q: float(v) for q, v in run.scores[RANX_MEASURES[m]].items()}
                             for m in MEASURES}
        elif tool == "naive":
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            result = _naive_evaluate(qrels_path, run_path)
            means = {m: _byte_sorted_mean(result, m) for m in MEASURES}
            out["seconds"] = perf() - start
            out["means"] = means
            if dump:
                per_topic = _per_topic_arrays(result)
        else:
            raise SystemExit(f"unknown tool {tool} for job {job}")

    elif job == "tiecheck":
        # untimed, for the agreement check only: the same evaluation under other tie rules
        import cumgain
        out["seconds"] = 0.0
        out["extra"]["tie_rules"] = {
            rule: {m: float(cumgain.evaluate(qrels_path, run_path, list(MEASURES), ties=rule,
                                             score_precision="float64", warn=False).means[m])
                   for m in MEASURES}
            for rule in ("docno_desc", "docno_asc", "input_order")}

    elif job == "dicts":
        try:
            if tool == "cumgain_compat":
                import cumgain.compat.pytrec_eval as module
            else:
                import pytrec_eval as module
        except Exception as exc:
            unavailable(exc)
        qrel, run = _read_dicts(qrels_path, run_path)
        out["rss_base_mb"] = _rss_mb()   # with the dicts built
        start = perf()
        evaluator = module.RelevanceEvaluator(qrel, PYTREC_MEASURES)
        built = perf()
        result = evaluator.evaluate(run)
        out["seconds"] = perf() - built
        out["extra"]["construct_seconds"] = built - start
        out["means"] = {m: _byte_sorted_mean(result, m) for m in MEASURES}
        if dump:
            per_topic = _per_topic_arrays(result)

    elif job == "runs":
        # the qrels are read before the timed part; one run through to the means is timed
        try:
            if tool == "cumgain_run":
                import cumgain
            elif tool == "pytrec_eval_run":
                import pytrec_eval
            else:
                import ir_measures
        except Exception as exc:
            unavailable(exc)
        if tool == "cumgain_run":
            qrels = cumgain.prepare_qrels(qrels_path)
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            result = cumgain.evaluate(qrels, run_path, list(MEASURES),
                                      score_precision="float32", warn=False)
            means = {m: float(result.means[m]) for m in MEASURES}
            out["seconds"] = perf() - start
            if dump:
                per_topic = _cumgain_topic_values(result)
        elif tool == "pytrec_eval_run":
            with open(qrels_path) as f:
                evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f),
                                                           PYTREC_MEASURES)
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            with open(run_path) as f:
                run = pytrec_eval.parse_run(f)
            result = evaluator.evaluate(run)
            means = _pytrec_means(pytrec_eval, result)
            out["seconds"] = perf() - start
            if dump:
                per_topic = _per_topic_arrays(result)
        else:
            measures = [ir_measures.parse_measure(IRM_MEASURES[m]) for m in MEASURES]
            evaluator = ir_measures.evaluator(measures, ir_measures.read_trec_qrels(qrels_path))
            out["rss_base_mb"] = _rss_mb()
            start = perf()
            agg = evaluator.calc_aggregate(ir_measures.read_trec_run(run_path))
            out["seconds"] = perf() - start
            means = _ir_measures_means(agg)
        out["means"] = means

    elif job == "ties":             # the same file, float64, under each tie rule
        try:
            import cumgain
        except Exception as exc:
            unavailable(exc)
        out["rss_base_mb"] = _rss_mb()
        start = perf()
        result = cumgain.evaluate(qrels_path, run_path, SPELLINGS, ties=tool[len("cumgain_"):],
                                  warn=False)
        out["seconds"] = perf() - start
        out["means"] = {m: float(result.means[m]) for m in MEASURES}

    elif job in ("unordered", "stdin"):
        try:
            if tool.startswith("cumgain"):
                import cumgain
            else:
                import pytrec_eval
        except Exception as exc:
            unavailable(exc)
        source = os.path.join(data_dir, size, RUN_FILES[tool])
        out["rss_base_mb"] = _rss_mb()
        start = perf()
        if tool.startswith("cumgain"):
            result = _cumgain_files(qrels_path, "-" if tool in FEEDERS else source, "float64")
            means = {m: float(result.means[m]) for m in MEASURES}
        else:
            with open(qrels_path) as f:
                qrel = pytrec_eval.parse_qrel(f)
            with open(source) as f:
                run = pytrec_eval.parse_run(f)
            means = _pytrec_means(pytrec_eval, pytrec_eval.RelevanceEvaluator(
                qrel, PYTREC_MEASURES).evaluate(run))
        out["seconds"] = perf() - start
        out["means"] = means

    elif job == "dense":
        try:
            if tool == "cumgain_sklearn":
                from cumgain.compat.sklearn import ndcg_score
            else:
                from sklearn.metrics import ndcg_score
        except Exception as exc:
            unavailable(exc)
        from generate import SIZES
        n_topics, k = SIZES[size][:2]
        y_true, y_score = _dense_matrices(n_topics, k)
        out["rss_base_mb"] = _rss_mb()
        start = perf()
        value = ndcg_score(y_true, y_score, k=10)
        out["seconds"] = perf() - start
        out["means"] = {"ndcg@10": float(value)}
        out["extra"]["shape"] = [n_topics, k]

    elif job == "threads":
        try:
            import cumgain  # noqa: F401
        except Exception as exc:
            unavailable(exc)
        import threading
        control = tool.startswith("control_")
        if control:
            # how much parallelism the machine gives right now: np.sort releases the GIL
            import numpy as np
            arrays = [np.random.default_rng(i).random(20_000_000) for i in (0, 1)]
        out["rss_base_mb"] = _rss_mb()
        results: list = [None, None]

        def one(i: int) -> None:
            if control:
                results[i] = np.sort(arrays[i])
            else:
                # one thread per evaluation: the job shows evaluations side by side
                results[i] = _cumgain_files(qrels_path, run_path, "float32", threads=1)

        start = perf()
        if tool.endswith("sequential2"):
            one(0)
            one(1)
        else:
            threads = [threading.Thread(target=one, args=(i,)) for i in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        out["seconds"] = perf() - start
        if any(r is None for r in results):
            raise SystemExit("a thread failed")
        if not control:
            out["means"] = {m: float(results[0].means[m]) for m in MEASURES}
            out["extra"]["same_in_both"] = all(
                results[0].means[m] == results[1].means[m] for m in MEASURES)
    else:
        raise SystemExit(f"unknown job {job}")

    if dump and per_topic is not None:
        with open(dump, "wb") as f:
            pickle.dump(per_topic, f, protocol=pickle.HIGHEST_PROTOCOL)
    return out


# =====================================================================================
# driver side
# =====================================================================================

def build_floor() -> tuple[str | None, str]:
    """Compile split_floor.c into data/; return (binary or None, why not)."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return None, f"no C compiler ({cc}) on PATH"
    DATA.mkdir(parents=True, exist_ok=True)
    binary = DATA / "split_floor"
    proc = subprocess.run([cc, "-O2", "-o", str(binary), str(HERE / "split_floor.c")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"{cc} failed: {proc.stderr.strip()[-300:]}"
    return str(binary), ""


def run_process(cmd: list, timeout: float, feeder: list | None = None) -> dict:
    """Run ``cmd`` as a fresh process; wall time, peak RSS (wait4), stdout, stderr, rc.
    ``feeder``: a command whose output is piped to the process's standard input."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        feeding = subprocess.Popen(feeder, stdout=subprocess.PIPE) if feeder else None
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=str(HERE), env=CHILD_ENV,
                                stdin=feeding.stdout if feeding else subprocess.DEVNULL)
        if feeding:
            feeding.stdout.close()      # (the child holds the pipe's read end)
        deadline = start + timeout
        status = rusage = None
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, rusage = os.wait4(proc.pid, 0)
                status = None
                break
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = 0  # reaped by wait4; keep Popen from waiting again
        if feeding:
            feeding.kill() if status is None else None
            feeding.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if status is None:
        rc = "timeout"
    elif os.WIFSIGNALED(status):
        rc = f"signal {os.WTERMSIG(status)}"
    else:
        rc = os.WEXITSTATUS(status)
    return {"wall": wall, "rss_mb": rusage.ru_maxrss / 1024.0, "rc": rc,
            "stdout": stdout, "stderr": stderr}


def warm_page_cache(size: str) -> None:
    """Read the size's qrels and run files once, so that every measurement starts with
    them in the page cache. A machine may page out file pages it sees as cold (this
    one's kernel runs DAMON with a pageout scheme for regions not accessed for about a
    minute), and a measurement that met evicted pages would time the disk."""
    block = bytearray(1 << 20)
    for name in ("qrels.txt", "run.txt"):
        path = DATA / size / name
        if path.exists():
            with open(path, "rb", buffering=0) as raw:
                while raw.readinto(block):
                    pass


def measure(job: str, tool: str, size: str, floor_binary: str | None, timeout: float,
            dump: str | None) -> dict:
    """One fresh-process measurement, the size's files read just before (see
    warm_page_cache); returns a record with seconds/wall/rss/means or an
    'unavailable'/'error' reason."""
    warm_page_cache(size)
    if job == "floor":
        files = [str(DATA / size / "run.txt")]
        if tool == "split_run_qrels":
            files.append(str(DATA / size / "qrels.txt"))
        proc = run_process([floor_binary, *files], timeout)
        if proc["rc"] != 0:
            return {"error": f"rc={proc['rc']}: {proc['stderr'].strip()[-300:]}"}
        result = json.loads(proc["stdout"].strip().splitlines()[-1])
        return {"seconds": result["seconds"], "wall": proc["wall"], "rss_mb": proc["rss_mb"],
                "means": None, "extra": {k: result[k] for k in ("lines", "fields", "bytes")}}
    cmd = [sys.executable, str(HERE / "run_peers.py"), "--worker", job, tool, size,
           "--data", str(DATA), "--measure-set", MEASURE_SET]
    if dump:
        cmd += ["--dump", dump]
    feeder = [FEEDERS[tool], str(DATA / size / RUN_FILES[tool])] if tool in FEEDERS else None
    if job in ("unordered", "stdin"):
        warm_file(DATA / size / RUN_FILES[tool])
    return worker_result(run_process(cmd, timeout, feeder))


def warm_file(path: Path) -> None:
    """Read a file once (see warm_page_cache)."""
    block = bytearray(1 << 20)
    with open(path, "rb", buffering=0) as raw:
        while raw.readinto(block):
            pass


def make_run_variants(size: str) -> None:
    """The run file's lines in other orders, and gzipped, for the unordered and stdin
    jobs (made once, in a child process: a child's peak RSS starts from its parent's,
    which holding the run's lines here would raise for every measurement after)."""
    folder = DATA / size
    wanted = [folder / name for name in ("run-shuffled.txt", "run-sharded.txt", "run.txt.gz")]
    if all(path.exists() for path in wanted):
        return
    subprocess.run([sys.executable, str(HERE / "run_peers.py"), "--make-variants", size,
                    "--data", str(DATA)], check=True, cwd=str(HERE), env=CHILD_ENV)


def _write_run_variants(folder: Path) -> None:
    """make_run_variants' work: shuffled (a fixed seed), as four shards concatenated
    (line i in shard i mod 4), and run.txt.gz (level 1)."""
    import gzip
    import numpy as np
    lines = (folder / "run.txt").read_bytes().split(b"\n")
    if not lines[-1]:
        lines.pop()
    order = np.random.default_rng(20081201).permutation(len(lines))
    variants = {"run-shuffled.txt": [lines[i] for i in order.tolist()],
                "run-sharded.txt": [line for k in range(4) for line in lines[k::4]]}
    for name, ordered in variants.items():
        (folder / name).write_bytes(b"\n".join(ordered) + b"\n")
    with gzip.open(folder / "run.txt.gz", "wb", compresslevel=1) as packed:
        packed.write(b"\n".join(lines) + b"\n")


def worker_result(proc: dict, tail_chars: int = 400) -> dict:
    """A worker process's result: the JSON of its last stdout line with its wall time
    and peak RSS added; or {"unavailable": why} (exit EXIT_UNAVAILABLE), or
    {"error": what} (another failure)."""
    if proc["rc"] == EXIT_UNAVAILABLE:
        try:
            reason = json.loads(proc["stdout"].strip().splitlines()[-1])["unavailable"]
        except Exception:
            reason = proc["stderr"].strip()[-300:]
        return {"unavailable": reason}
    if proc["rc"] != 0:
        tail = (proc["stderr"].strip() or proc["stdout"].strip())[-tail_chars:]
        return {"error": f"rc={proc['rc']}: {tail}"}
    try:
        result = json.loads(proc["stdout"].strip().splitlines()[-1])
    except Exception:
        return {"error": f"unreadable worker output: {proc['stdout'][-300:]}"}
    result.update(wall=proc["wall"], rss_mb=proc["rss_mb"])
    return result


def _fmt_time(seconds) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _fmt_mb(mb) -> str:
    if mb is None:
        return "-"
    return f"{mb / 1024:.2f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def _fmt_ratio(x) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def summarise(records: list) -> dict | None:
    ok = [r for r in records if "seconds" in r]
    if not ok:
        return None
    return {"seconds": statistics.median(r["seconds"] for r in ok),
            "wall": statistics.median(r["wall"] for r in ok),
            "rss_mb": statistics.median(r["rss_mb"] for r in ok),
            "rss_base_mb": (statistics.median(r["rss_base_mb"] for r in ok)
                            if all("rss_base_mb" in r for r in ok) else None),
            "n": len(ok), "all_seconds": [r["seconds"] for r in ok],
            "means": ok[0].get("means"), "extra": ok[0].get("extra", {})}


def collection_info(size: str) -> str:
    run, qrels = DATA / size / "run.txt", DATA / size / "qrels.txt"
    with open(qrels, "rb") as f:
        n_q = sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 22), b""))
    with open(run, "rb") as f:
        n_r = sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 22), b""))
    from generate import SIZES
    n_topics, k = SIZES[size][:2]
    return (f"{n_topics:,} topics x {k:,} docs: {n_r:,} run lines "
            f"({run.stat().st_size / 1e6:.0f} MB), {n_q:,} judgments")


# ----------------------------------------------------------------------- agreement

def _load_dump(path: str | None):
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            return pickle.load(f)
    return None


def _max_topic_diff(a: dict, b: dict):
    """(max |a-b| over shared topics and measures, #topics in a only, #topics in b only)."""
    worst = 0.0
    only_a = only_b = 0
    for m in MEASURES:
        ta, tb = a[m], b[m]
        only_a = max(only_a, len(set(ta) - set(tb)))
        only_b = max(only_b, len(set(tb) - set(ta)))
        for q in set(ta) & set(tb):
            worst = max(worst, abs(ta[q] - tb[q]))
    return worst, only_a, only_b


def _max_mean_diff(a: dict, b: dict) -> float:
    return max(abs(a[m] - b[m]) for m in a if m in b)


def agreement(size: str, summaries: dict, dumps: dict, tie_rules: dict | None) -> list:
    """Lines describing the cross-tool checks for one size."""
    lines = []
    tol = 1e-12

    def means(job, tool):
        s = summaries.get((job, tool))
        return s["means"] if s else None

    def compare(label, job_a, tool_a, job_b, tool_b, expect_equal, why=""):
        ma, mb = means(job_a, tool_a), means(job_b, tool_b)
        if ma is None and mb is None:
            return
        if ma is None or mb is None:
            lines.append(f"  {label}: not checked (a tool did not run)")
            return
        d_mean = _max_mean_diff(ma, mb)
        pa, pb = _load_dump(dumps.get((job_a, tool_a))), _load_dump(dumps.get((job_b, tool_b)))
        topic_part = ""
        if pa is not None and pb is not None:
            d_topic, only_a, only_b = _max_topic_diff(pa, pb)
            topic_part = f", per topic max |diff| {d_topic:.3g}"
            if only_a or only_b:
                topic_part += f" (topics only in one: {only_a}/{only_b})"
        else:
            d_topic = 0.0
        if expect_equal:
            verdict = "PASS" if max(d_mean, d_topic) <= tol else "FAIL"
            lines.append(f"  [{verdict}] {label}: means max |diff| {d_mean:.3g}{topic_part}"
                         f" (tolerance {tol:g})")
        else:
            lines.append(f"  [info] {label}: means max |diff| {d_mean:.3g}{topic_part}")
            if why:
                lines.append(f"         why: {why}")
            detail = ", ".join(f"{m} {ma[m]:.6f} vs {mb[m]:.6f}" for m in MEASURES if m in mb)
            lines.append(f"         {detail}")

    compare("pytrec_eval vs cumgain float32 (files)", "files", "pytrec_eval", "files",
            "cumgain_f32", True)
    compare("cumgain float64 vs float32 (files)", "files", "cumgain_f64", "files",
            "cumgain_f32", MEASURE_SET == "bundle",
            "" if MEASURE_SET == "bundle" else
            "iprec_at_recall: trec_eval 10's recall cut-offs against 9.0.8's")
    compare("ir_measures vs cumgain float32 (files)", "files", "ir_measures", "files",
            "cumgain_f32", True)
    compare("naive Python vs cumgain float64 (files)", "files", "naive", "files",
            "cumgain_f64", True)
    compare("cumgain.compat.pytrec_eval vs pytrec_eval (dicts)", "dicts", "cumgain_compat",
            "dicts", "pytrec_eval", True)
    compare("dicts vs files, cumgain", "dicts", "cumgain_compat", "files", "cumgain_f32", True)
    compare("pytrec_eval vs cumgain (one more run)", "runs", "pytrec_eval_run", "runs",
            "cumgain_run", True)
    compare("ir_measures vs cumgain (one more run)", "runs", "ir_measures_run", "runs",
            "cumgain_run", True)
    compare("one more run vs files, cumgain", "runs", "cumgain_run", "files", "cumgain_f32", True)
    for tool in ("cumgain_shuffled", "cumgain_sharded"):
        compare(f"{tool[8:]} vs contiguous, cumgain", "unordered", tool, "unordered",
                "cumgain_sorted", True)
    compare("pytrec_eval shuffled vs cumgain contiguous", "unordered", "pytrec_eval_shuffled",
            "unordered", "cumgain_sorted", False,
            why="pytrec_eval compares scores as float32 (cumgain float64 here)")
    for tool in ("cumgain_cat", "cumgain_zcat"):
        compare(f"{tool[8:]} on stdin vs by path, cumgain", "stdin", tool, "stdin",
                "cumgain_path", True)
    bounds = [summaries.get(("ties", f"cumgain_{rule}"))
              for rule in ("pessimistic", "expected", "optimistic")]
    if all(bound and bound.get("means") for bound in bounds):
        low, mid, high = (bound["means"] for bound in bounds)
        inside = all(low[m] - 1e-12 <= mid[m] <= high[m] + 1e-12 for m in MEASURES)
        lines.append(f"  [{'PASS' if inside else 'FAIL'}] ties: pessimistic <= expected <= "
                     f"optimistic for every mean; spread (optimistic - pessimistic): " +
                     ", ".join(f"{m} {high[m] - low[m]:.2e}" for m in MEASURES))
    spread = None
    if tie_rules:
        rules = tie_rules
        spread = max(max(r[m] for r in rules.values()) - min(r[m] for r in rules.values())
                     for m in MEASURES)
        lines.append("  [info] cumgain float64 means under other tie rules (same data): "
                     + "; ".join(f"{rule}: ndcg_cut_10 {r['ndcg_cut_10']:.6f}, map {r['map']:.6f}"
                                 for rule, r in rules.items())
                     + f"; largest spread over the 5 measures {spread:.3g}")
    ranx_means = means("files", "ranx")
    if ranx_means is not None and spread is not None:
        lines.append("  [info] ranx vs cumgain float64 under each tie rule, means max |diff|: "
                     + ", ".join(f"{rule} {_max_mean_diff(ranx_means, r):.3g}"
                                 for rule, r in rules.items()))
    compare("ranx vs cumgain float64 (files)", "files", "ranx", "files", "cumgain_f64", False,
            why="ranx orders tied scores by numba's unstable argsort (neither file order nor "
                "trec_eval's docno-descending rule) and many scores here are tied; "
                "gains, discount, ideal and topic sets agree"
                + (f"; the tie rule alone moves cumgain's means by up to {spread:.3g}"
                   if spread is not None else ""))
    d = summaries.get(("dense", "cumgain_sklearn")), summaries.get(("dense", "sklearn"))
    if d[0] and d[1]:
        a, b = d[0]["means"]["ndcg@10"], d[1]["means"]["ndcg@10"]
        verdict = "PASS" if abs(a - b) <= tol * max(1.0, abs(b)) else "FAIL"
        lines.append(f"  [{verdict}] cumgain.compat.sklearn vs scikit-learn ndcg_score(k=10): "
                     f"{a!r} vs {b!r} (|diff| {abs(a - b):.3g})")
    t = summaries.get(("threads", "threads2"))
    if t is not None:
        same = t["extra"].get("same_in_both")
        f32 = means("files", "cumgain_f32")
        agree = f32 is not None and _max_mean_diff(t["means"], f32) == 0.0
        lines.append(f"  [{'PASS' if same and (agree or f32 is None) else 'FAIL'}] "
                     f"2 threads: both threads' means identical ({same})"
                     + (f", equal to the single-thread run ({agree})" if f32 else ""))
    return lines


# ----------------------------------------------------------------------- the table

def print_table(size: str, info: str, summaries: dict, failures: dict, jobs: list,
                repeats: int) -> list:
    out = [f"\n== size {size}: {info}; median of {repeats} fresh processes ==",
           f"{'job':<15} {'tool':<32} {'time':>10} {'process':>10} {'peak RSS':>9} "
           f"{'RSS before':>10} {'time ratio':>10} {'RSS ratio':>9}"]
    for job in jobs:
        ref = JOB_TOOLS[job][0][0]
        if job == "floor":
            ref_s = summaries.get(("files", "cumgain_f32"))
        else:
            ref_s = summaries.get((job, ref))
        for tool, _, label in JOB_TOOLS[job]:
            key = (job, tool)
            if key in failures:
                out.append(f"{JOB_LABEL[job]:<15} {label:<32} {failures[key]}")
                continue
            s = summaries.get(key)
            if s is None:
                continue
            t_ratio = rss_ratio = None
            if ref_s is not None:
                t_ratio = s["seconds"] / ref_s["seconds"]
                rss_ratio = s["rss_mb"] / ref_s["rss_mb"]
            if job == "threads" and tool == "threads2":
                t_ratio = rss_ratio = 1.0 if ref_s else None
            if job == "threads" and tool.startswith("control_"):
                c_ref = summaries.get(("threads", "control_threads2"))
                t_ratio = s["seconds"] / c_ref["seconds"] if c_ref else None
                rss_ratio = s["rss_mb"] / c_ref["rss_mb"] if c_ref else None
            out.append(f"{JOB_LABEL[job]:<15} {label:<32} {_fmt_time(s['seconds']):>10} "
                       f"{_fmt_time(s['wall']):>10} {_fmt_mb(s['rss_mb']):>9} "
                       f"{_fmt_mb(s['rss_base_mb']):>10} {_fmt_ratio(t_ratio):>10} "
                       f"{_fmt_ratio(rss_ratio):>9}")
    out.append("time: inside the process, around the job only (dicts/dense: only the evaluate / "
               "ndcg_score call); process: the whole fresh process (start-up, imports, job, exit); "
               "peak RSS: the process's maximum; RSS before: at the start of the timed part (after "
               "imports; dicts: with the dicts built; dense: with the matrices built); ratios: "
               "tool / the job's first row (floor rows: / cumgain float32 files->means; control rows: / "
               "the control's 2-thread row).")
    # targets
    cg = summaries.get(("files", "cumgain_f32"))
    pt = summaries.get(("files", "pytrec_eval"))
    lines = []
    if cg and pt and MEASURE_SET == "bundle":
        lines.append(f"files->means vs pytrec_eval: {pt['seconds'] / cg['seconds']:.1f}x faster "
                     f"(target >= 15x), peak RSS {cg['rss_mb'] / pt['rss_mb']:.2f} of its "
                     f"(target <= 0.20)")
    elif cg and pt:
        target = " (target >= 20x at M)" if MEASURE_SET == "official" else ""
        lines.append(f"files->means, {MEASURE_SET}, vs pytrec_eval: "
                     f"{pt['seconds'] / cg['seconds']:.1f}x faster{target}, peak RSS "
                     f"{cg['rss_mb'] / pt['rss_mb']:.2f} of its")
    a, b = summaries.get(("dicts", "cumgain_compat")), summaries.get(("dicts", "pytrec_eval"))
    if a and b:
        lines.append(f"loaded dicts vs pytrec_eval evaluate: {b['seconds'] / a['seconds']:.1f}x "
                     f"(target >= 5x)")
    a, b = summaries.get(("dense", "cumgain_sklearn")), summaries.get(("dense", "sklearn"))
    if a and b:
        lines.append(f"dense nDCG@10 vs scikit-learn: {b['seconds'] / a['seconds']:.1f}x "
                     f"(target >= 10x)")
    fl = summaries.get(("floor", "split_run"))
    if cg and fl:
        fq = summaries.get(("floor", "split_run_qrels"))
        extra = (f"; {cg['seconds'] / fq['seconds']:.1f}x the floor on run+qrels" if fq else "")
        lines.append(f"cumgain float32 files->means = {cg['seconds'] / fl['seconds']:.1f}x the "
                     f"split floor on the run file (target <= 2x){extra}")
    a, b = summaries.get(("runs", "cumgain_run")), summaries.get(("runs", "pytrec_eval_run"))
    if a and b:
        lines.append(f"one more run (qrels read before) vs pytrec_eval: "
                     f"{b['seconds'] / a['seconds']:.1f}x")
    if a and fl:
        lines.append(f"cumgain one more run = {a['seconds'] / fl['seconds']:.1f}x the split "
                     f"floor on the run file (the same bytes read)")
    base = summaries.get(("unordered", "cumgain_sorted"))
    for tool, what in (("cumgain_shuffled", "shuffled"), ("cumgain_sharded", "4 shards")):
        u = summaries.get(("unordered", tool))
        if base and u:
            lines.append(f"unordered run, {what}: {u['seconds'] / base['seconds']:.2f}x the "
                         f"time of the contiguous file (target <= 1.5x), peak RSS "
                         f"{u['rss_mb']:.0f} MB (target <= the run file's size)")
    u, p = summaries.get(("unordered", "cumgain_shuffled")), \
        summaries.get(("unordered", "pytrec_eval_shuffled"))
    if u and p:
        lines.append(f"shuffled run vs pytrec_eval on it: {p['seconds'] / u['seconds']:.1f}x "
                     f"(target >= 15x)")
    for tool, path_tool, what in (("cumgain_cat", "cumgain_path", "cat | stdin"),
                                  ("cumgain_zcat", "cumgain_path", "zcat | stdin"),
                                  ("cumgain_zcat", "cumgain_gzpath", "zcat | stdin, against "
                                   "the gzip file by path")):
        base, u = summaries.get(("stdin", path_tool)), summaries.get(("stdin", tool))
        if base and u:
            lines.append(f"run on stdin ({what}): {u['seconds'] / base['seconds']:.2f}x the time "
                         f"(target <= 2x), {u['rss_mb'] / base['rss_mb']:.2f}x the peak RSS "
                         f"(target <= 1.5x) of the file by path")
    base, u = summaries.get(("ties", "cumgain_docno_desc")), summaries.get(("ties",
                                                                             "cumgain_expected"))
    if base and u:
        lines.append(f"ties='expected': {u['seconds'] / base['seconds']:.2f}x the time of ties "
                     f"by docno (target <= 1.5x)")
    t2, s2 = summaries.get(("threads", "threads2")), summaries.get(("threads", "sequential2"))
    if t2 and s2:
        c2 = summaries.get(("threads", "control_threads2"))
        cs = summaries.get(("threads", "control_sequential2"))
        control = (f"; the numpy-sort control got {cs['seconds'] / c2['seconds']:.2f}x in the "
                   f"same conditions" if c2 and cs else "")
        lines.append(f"2 evaluations in 2 threads vs sequentially: speed-up "
                     f"{s2['seconds'] / t2['seconds']:.2f}x (2.0x = perfect; 1.0x = no overlap)"
                     + control)
    if lines:
        out.append("vs targets: " + "\n            ".join(lines))
    print("\n".join(out), flush=True)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="S", help="comma-separated subset of S,M,L")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tools", default=",".join(ALL_TOOLS),
                        help=f"comma-separated subset of {','.join(ALL_TOOLS)}")
    parser.add_argument("--jobs", default=",".join(ALL_JOBS),
                        help=f"comma-separated subset of {','.join(ALL_JOBS)}")
    parser.add_argument("--skip-generate", action="store_true",
                        help="do not generate missing collections")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per process")
    parser.add_argument("--json", help="write the raw measurements here")
    parser.add_argument("--measure-set", choices=MEASURE_SETS, default="bundle",
                        help="the five-measure bundle (default), or trec_eval's official or "
                             "all_trec (cumgain and pytrec_eval only)")
    parser.add_argument("--data", default=str(DATA), help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=3, metavar=("JOB", "TOOL", "SIZE"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    parser.add_argument("--make-variants", metavar="SIZE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    use_measure_set(args.measure_set)
    if args.make_variants:
        _write_run_variants(Path(args.data) / args.make_variants)
        return

    if args.worker:
        job, tool, size = args.worker
        result = worker(job, tool, size, args.data, args.dump)
        print(json.dumps(result))
        return

    sizes = [s.strip().upper() for s in args.sizes.split(",") if s.strip()]
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    from generate import SIZES, generate
    for name, allowed, given in (("sizes", SIZES, sizes), ("tools", ALL_TOOLS, tools),
                                 ("jobs", ALL_JOBS, jobs)):
        bad = [g for g in given if g not in allowed]
        if bad:
            sys.exit(f"unknown {name} {bad}; choose from {list(allowed)}")
    if args.repeats < 1:
        sys.exit("--repeats must be >= 1")

    for size in sizes:
        if (DATA / size / "run.txt").exists() and (DATA / size / "qrels.txt").exists():
            continue
        if args.skip_generate:
            sys.exit(f"{DATA / size} is missing and --skip-generate was given")
        generate(size, DATA)

    if "unordered" in jobs or "stdin" in jobs:
        for size in sizes:
            make_run_variants(size)

    floor_binary, floor_why = (None, "")
    if "floor" in jobs and "floor" in tools:
        floor_binary, floor_why = build_floor()

    header = [f"cumgain end-to-end benchmark ({MEASURE_SET} measures); python "
              f"{platform.python_version()} ({sys.executable}); {os.cpu_count()} CPUs; "
              f"{platform.platform()}"]
    versions = {}
    import importlib.metadata as md
    for module, dist in (("cumgain", "cumgain"), ("pytrec_eval", "pytrec-eval-terrier"),
                         ("ir_measures", "ir_measures"), ("ranx", "ranx"),
                         ("sklearn", "scikit-learn"), ("numpy", "numpy"), ("numba", "numba")):
        try:
            versions[module] = md.version(dist)
        except Exception:
            versions[module] = "not installed"
    header.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print("\n".join(header), flush=True)

    todo = [(job, tool) for job in jobs for tool, family, _ in JOB_TOOLS[job] if family in tools]
    raw: dict = {"header": header, "sizes": {}}
    report = list(header)
    dump_dir = Path(tempfile.mkdtemp(prefix="cumgain_bench_"))
    try:
        # ranx compiles its numba functions on first use (cached on disk): warm up, untimed
        marker = DATA / (f".ranx_warm_{versions['ranx']}_{versions['numba']}"
                         f"_py{sys.version_info[0]}{sys.version_info[1]}")
        if ("files", "ranx") in todo and not marker.exists():
            smallest = min(sizes, key=lambda s: SIZES[s][0] * SIZES[s][1])
            print(f"(first ranx run with this numba: compiling its on-disk cache on {smallest}, "
                  f"untimed)", flush=True)
            if "seconds" in measure("files", "ranx", smallest, floor_binary, args.timeout, None):
                marker.touch()
        for size in sizes:
            info = collection_info(size)
            print(f"\n[{size}] {info}: running {len(todo)} measurements x {args.repeats}",
                  flush=True)
            records: dict = {key: [] for key in todo}
            failures: dict = {}
            dumps: dict = {}
            for rep in range(args.repeats):
                for job, tool in todo:
                    key = (job, tool)
                    if key in failures:
                        continue
                    if job == "floor" and floor_binary is None:
                        failures[key] = f"not available: {floor_why}"
                        continue
                    dump = None
                    if rep == 0 and job in ("files", "dicts", "runs"):
                        dump = str(dump_dir / f"{size}_{job}_{tool}.pkl")
                        dumps[key] = dump
                    r = measure(job, tool, size, floor_binary, args.timeout, dump)
                    if "unavailable" in r:
                        failures[key] = f"not available: {r['unavailable']}"
                    elif "error" in r:
                        failures[key] = f"FAILED: {r['error']}"
                    else:
                        records[key].append(r)
                    status = (failures.get(key) or
                              f"{_fmt_time(r.get('seconds'))} (process {_fmt_time(r.get('wall'))}, "
                              f"{_fmt_mb(r.get('rss_mb'))})")
                    print(f"  rep {rep + 1}/{args.repeats} {job:<8} {tool:<16} {status}",
                          flush=True)
            tie_rules = None
            if ("files", "ranx") in todo and ("files", "cumgain_f64") in todo:
                r = measure("tiecheck", "cumgain", size, floor_binary, args.timeout, None)
                tie_rules = r.get("extra", {}).get("tie_rules")
            summaries = {key: summarise(recs) for key, recs in records.items()
                         if key not in failures and summarise(recs)}
            table = print_table(size, info, summaries, failures, jobs, args.repeats)
            checks = [f"agreement checks, size {size}:"] + agreement(size, summaries, dumps, tie_rules)
            print("\n".join(checks), flush=True)
            report += table + checks
            raw["sizes"][size] = {
                "info": info,
                "summaries": {f"{j}/{t}": s for (j, t), s in summaries.items()},
                "failures": {f"{j}/{t}": f for (j, t), f in failures.items()},
                "records": {f"{j}/{t}": recs for (j, t), recs in records.items()},
                "checks": checks}
    finally:
        shutil.rmtree(dump_dir, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1, default=str)
        print(f"\nraw results written to {args.json}")


if __name__ == "__main__":
    main()
