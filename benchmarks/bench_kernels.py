"""Kernel benchmark: cumgain's compiled vectors vs a plain numpy implementation.

10,000 topics x 1,000 ranks of graded gains (levels 0-3), recall bases of 20-200
judgments per topic. Reports the median wall time of repeated runs and the ratio
numpy / cumgain (> 1 means cumgain is faster). Also checks that both give the
same numbers. Run: ``python benchmarks/bench_kernels.py [--topics N --ranks N]``.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import cumgain
from cumgain import Ragged


def make_collection(n_topics: int, n_ranks: int, seed: int = 20021001):
    rng = np.random.default_rng(seed)
    run = rng.choice(4, size=(n_topics, n_ranks), p=[0.85, 0.08, 0.05, 0.02]).astype(float)
    lengths = rng.integers(20, 201, size=n_topics)
    judged_values = rng.integers(0, 4, size=int(lengths.sum())).astype(float)
    offsets = np.zeros(n_topics + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return run, Ragged(judged_values, offsets)


def numpy_ideal(judged: Ragged, depth: int) -> np.ndarray:
    width = int(judged.lengths.max())
    dense = np.zeros((len(judged), max(width, depth)))
    rows = np.repeat(np.arange(len(judged)), judged.lengths)
    columns = np.arange(len(judged.values)) - np.repeat(judged.offsets[:-1], judged.lengths)
    dense[rows, columns] = np.where(judged.values > 0, judged.values, 0)
    return -np.sort(-dense, axis=1)[:, :depth]


def numpy_ndcg(run: np.ndarray, judged: Ragged, divisors: np.ndarray) -> np.ndarray:
    depth = run.shape[1]
    dcg = np.cumsum(run / divisors, axis=1)
    ideal = np.cumsum(numpy_ideal(judged, depth) / divisors, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, dcg / ideal, 0.0)


def numpy_ndcg_at(run: np.ndarray, judged: Ragged, divisors: np.ndarray, k: int) -> np.ndarray:
    dcg = (run[:, :k] / divisors[:k]).sum(axis=1)
    ideal = (numpy_ideal(judged, k) / divisors[:k]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, dcg / ideal, 0.0)


def median_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--ranks", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    run, judged = make_collection(args.topics, args.ranks)
    depth = args.ranks
    divisors = cumgain.discount_divisors("tois", 2.0, depth)

    cases = [
        ("CG vectors", lambda: cumgain.cg(run), lambda: np.cumsum(run, axis=1)),
        ("DCG vectors (TOIS b=2)", lambda: cumgain.dcg(run),
         lambda: np.cumsum(run / divisors, axis=1)),
        ("ideal gain vectors", lambda: cumgain.ideal_gains(judged, depth),
         lambda: numpy_ideal(judged, depth)),
        ("nDCG vectors", lambda: cumgain.ndcg(run, judged, depth),
         lambda: numpy_ndcg(run, judged, divisors)),
        ("nDCG@10 scalars", lambda: cumgain.ndcg_at(run, judged, 10),
         lambda: numpy_ndcg_at(run, judged, divisors, 10)),
    ]
    print(f"{args.topics:,} topics x {args.ranks:,} ranks; median of {args.repeats} runs")
    print(f"{'kernel':<26}{'cumgain s':>12}{'numpy s':>12}{'numpy/cumgain':>15}  same numbers")
    for name, ours, theirs in cases:
        ours_result, theirs_result = ours(), theirs()
        same = np.allclose(ours_result, theirs_result, rtol=1e-12, atol=1e-12)
        ours_time = median_time(ours, args.repeats)
        theirs_time = median_time(theirs, args.repeats)
        print(f"{name:<26}{ours_time:>12.4f}{theirs_time:>12.4f}{theirs_time / ours_time:>14.1f}x"
              f"  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
