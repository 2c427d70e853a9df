"""The tools people reach cumgain through, timed with and without it, side by side in
one run: ``ir_measures.calc_aggregate`` (ir_measures' default pipeline against the same
call after ``cumgain.compat.ir_measures.install()``) and BEIR's
``EvaluateRetrieval.evaluate`` (on pytrec_eval against the same call after
``cumgain.compat.pytrec_eval.install()``).

    python benchmarks/run_integrations.py --sizes M --repeats 3

Each measurement is a fresh process that reads the collection into the dicts these
tools are given (not timed), makes one warm-up call on ten topics (imports, numba), then
times the call on the whole collection; the median of ``--repeats`` is reported, with
the peak RSS. The values of the two sides are compared (largest difference of a mean).
Needs ir_measures, pytrec-eval-terrier and beir (``pip install --no-deps beir``) in the
interpreter that runs it, and the collections of ``benchmarks/generate.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
IR_MEASURES = ["nDCG@10", "AP", "P@10", "RR@10", "R@100", "Judged@10"]
BEIR_CUTOFFS = [1, 3, 5, 10, 100, 1000]
SIDES = {"ir_measures": ("default pipeline", "cumgain installed"),
         "beir": ("pytrec_eval", "cumgain installed")}


def _read_dicts(folder: Path) -> tuple:
    qrels: dict = {}
    with open(folder / "qrels.txt") as lines:
        for line in lines:
            qid, _, doc, rel = line.split()
            qrels.setdefault(qid, {})[doc] = int(rel)
    run: dict = {}
    with open(folder / "run.txt") as lines:
        for line in lines:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return qrels, run


def _few(qrels: dict, run: dict, n: int = 10) -> tuple:
    topics = list(run)[:n]
    return {t: qrels[t] for t in topics if t in qrels}, {t: run[t] for t in topics}


def worker(job: str, side: int, size: str) -> dict:
    """One measurement: the call's time and its means (by name)."""
    qrels, run = _read_dicts(DATA / size)
    if job == "ir_measures":
        import ir_measures
        if side:
            import cumgain.compat.ir_measures as provider
            provider.install()
        measures = [ir_measures.parse_measure(name) for name in IR_MEASURES]
        ir_measures.calc_aggregate(measures, *_few(qrels, run))
        start = time.perf_counter()
        means = ir_measures.calc_aggregate(measures, qrels, run)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "means": {str(m): float(v) for m, v in means.items()}}
    if side:
        import cumgain.compat.pytrec_eval as drop_in
        drop_in.install()
    from beir.retrieval.evaluation import EvaluateRetrieval
    EvaluateRetrieval.evaluate(*_few(qrels, run), BEIR_CUTOFFS)
    start = time.perf_counter()
    scores = EvaluateRetrieval.evaluate(qrels, run, BEIR_CUTOFFS)
    seconds = time.perf_counter() - start
    means = {name: float(value) for part in scores for name, value in part.items()}
    return {"seconds": seconds, "means": means}


def measure(job: str, side: int, size: str) -> dict:
    """A fresh process running :func:`worker`: its time, means and peak RSS (the dicts
    included, the same on both sides)."""
    with open(os.devnull, "w") as quiet:
        done = subprocess.run([sys.executable, __file__, "--worker", job, str(side), size],
                              stdout=subprocess.PIPE, stderr=quiet, check=True)
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", default="ir_measures,beir")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        job, side, size = args.worker
        result = worker(job, int(side), size)
        import resource
        result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    for size in args.sizes.split(","):
        if not (DATA / size / "run.txt").exists():
            sys.exit(f"no collection {size}: run benchmarks/generate.py --sizes {size}")
        for job in args.jobs.split(","):
            runs = {0: [], 1: []}
            for _ in range(args.repeats):          # the two sides alternate
                for side in (0, 1):
                    runs[side].append(measure(job, side, size))
            medians = {side: statistics.median(r["seconds"] for r in runs[side])
                       for side in runs}
            difference = max(abs(runs[0][0]["means"][name] - runs[1][0]["means"][name])
                             for name in runs[0][0]["means"])
            print(f"## {job}, size {size} ({args.repeats} fresh processes a side)")
            print("| side | time (median; range) | peak RSS | speed-up |")
            print("|---|---|---|---|")
            for side in (0, 1):
                times = sorted(r["seconds"] for r in runs[side])
                rss = max(r["rss_mb"] for r in runs[side])
                speedup = medians[0] / medians[side]
                print(f"| {SIDES[job][side]} | {medians[side]:.3f} s ({times[0]:.3f}-"
                      f"{times[-1]:.3f}) | {rss:.0f} MB | {speedup:.1f}x |")
            print(f"\nlargest difference of a mean between the two sides: {difference:.3g}"
                  f" ({len(runs[0][0]['means'])} means)\n")


if __name__ == "__main__":
    main()
