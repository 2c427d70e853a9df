"""Dense score matrices: ``cumgain.evaluate_dense`` against torchmetrics' retrieval
metrics and scikit-learn's ``ndcg_score`` on the same arrays, one fresh process per
measurement.

Two shapes (8,000 x 40, the batch of torchmetrics#2287, and 100,000 x 100), labels
0-3 and float64 scores drawn from numpy's default generator (seed 0, no ties); each
process builds the arrays (not timed) and times one call:

* **cumgain**: ``evaluate_dense(labels, scores, ["ndcg_cut.10", "map", "RR@10"])``;
* **torchmetrics**: ``RetrievalNormalizedDCG(top_k=10)``, ``RetrievalMAP()`` and
  ``RetrievalMRR(top_k=10)`` on the flattened tensors with ``indexes`` (the rows);
* **sklearn**: ``ndcg_score(labels, scores, k=10)`` (nDCG only: it has no MAP or MRR).

The ratio is the peer's time over cumgain's (the targets of the issue "Columnar inputs
at file speed": >= 50x torchmetrics, >= 20x scikit-learn). The means are compared:
nDCG@10 with scikit-learn's, and all three with torchmetrics' (its means are float32).

Run: ``python benchmarks/run_dense.py [--repeats 3]`` (torch and torchmetrics: the
machine's local wheel folder has a CPU torch for Python 3.11).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_peers import EXIT_UNAVAILABLE, _fmt_time, run_process, worker_result  # noqa: E402

SHAPES = ((8000, 40), (100_000, 100))
TOOLS = ("cumgain", "torchmetrics", "sklearn")


def _arrays(rows: int, columns: int):
    import numpy as np
    rng = np.random.default_rng(0)
    return rng.integers(0, 4, (rows, columns)), rng.random((rows, columns))


def worker(tool: str, rows: int, columns: int) -> dict:
    labels, scores = _arrays(rows, columns)
    if tool == "cumgain":
        import cumgain
        start = time.perf_counter()
        means = cumgain.evaluate_dense(labels, scores, ["ndcg_cut.10", "map", "RR@10"]).means
        seconds = time.perf_counter() - start
        means = {"ndcg@10": means["ndcg_cut_10"], "map": means["map"], "mrr@10": means["RR@10"]}
    elif tool == "sklearn":
        from sklearn.metrics import ndcg_score
        start = time.perf_counter()
        means = {"ndcg@10": float(ndcg_score(labels, scores, k=10))}
        seconds = time.perf_counter() - start
    else:
        try:
            import torch
            from torchmetrics.retrieval import (RetrievalMAP, RetrievalMRR,
                                                RetrievalNormalizedDCG)
        except ImportError as error:
            print(json.dumps({"unavailable": str(error)}))
            sys.exit(EXIT_UNAVAILABLE)
        preds, target = torch.from_numpy(scores).flatten(), torch.from_numpy(labels).flatten()
        indexes = torch.arange(rows).repeat_interleave(columns)
        start = time.perf_counter()
        means = {"ndcg@10": float(RetrievalNormalizedDCG(top_k=10)(preds, target,
                                                                  indexes=indexes)),
                 "map": float(RetrievalMAP()(preds, target > 0, indexes=indexes)),
                 "mrr@10": float(RetrievalMRR(top_k=10)(preds, target > 0, indexes=indexes))}
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "means": means}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        tool, rows, columns = args.worker
        print(json.dumps(worker(tool, int(rows), int(columns))))
        return
    tools = args.tools.split(",")
    print(f"{'shape':<14}{'tool':<14}{'time':>10}{'ratio':>9}  means (max |diff| to cumgain)")
    for rows, columns in SHAPES:
        results = {tool: [] for tool in tools}
        for _ in range(args.repeats):
            for tool in tools:
                cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", tool,
                       str(rows), str(columns)]
                results[tool].append(worker_result(run_process(cmd, args.timeout)))
        ours = [r for r in results.get("cumgain", []) if "seconds" in r]
        base = statistics.median(r["seconds"] for r in ours) if ours else None
        for tool in tools:
            ok = [r for r in results[tool] if "seconds" in r]
            if not ok:
                first = results[tool][0]
                print(f"{rows}x{columns:<8}{tool:<14}{first.get('unavailable') or first.get('error')}")
                continue
            seconds = statistics.median(r["seconds"] for r in ok)
            ratio = f"{seconds / base:.1f}x" if base else "-"
            diff = max((abs(value - ours[0]["means"][name])
                        for name, value in ok[0]["means"].items()), default=0.0) if ours else None
            means = ", ".join(f"{k} {v:.6f}" for k, v in ok[0]["means"].items())
            print(f"{rows}x{columns:<8}{tool:<14}{_fmt_time(seconds):>10}{ratio:>9}  {means}"
                  f" ({diff:.1e})")


if __name__ == "__main__":
    main()
