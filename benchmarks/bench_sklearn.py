"""Benchmark: the scikit-learn drop-in vs scikit-learn, ``ndcg_score(k=10)`` on a dense matrix.

6,980 samples x 1,000 labels (MS MARCO dev-sized), seeded. Gains are graded
levels 0-3 (mostly 0). Scores are normal draws rounded to 2 decimals, so they
tie (about 370 distinct values per row, so 2.7 labels per value on average, and
more near 0): scikit-learn's default tie-averaging path does real work. Prints the median wall time of repeated
runs of each implementation, the ratio scikit-learn / cumgain (> 1 means
cumgain is faster) and the two results, which must agree.

Run: ``python benchmarks/bench_sklearn.py [--samples N --labels N --k K --repeats R]``
(``--ignore-ties`` times that mode instead).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from cumgain.compat import sklearn as cumgain_sklearn


def make_matrices(n_samples: int, n_labels: int, seed: int = 20021001):
    rng = np.random.default_rng(seed)
    y_true = rng.choice(4, size=(n_samples, n_labels), p=[0.85, 0.08, 0.05, 0.02])
    y_score = np.round(rng.normal(size=(n_samples, n_labels)), 2)
    return y_true, y_score


def median_time(function, repeats: int) -> tuple[float, float]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=6980)
    parser.add_argument("--labels", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ignore-ties", action="store_true")
    args = parser.parse_args(argv)

    from sklearn import metrics  # a test/benchmark dependency only

    y_true, y_score = make_matrices(args.samples, args.labels)
    kwargs = {"k": args.k, "ignore_ties": args.ignore_ties}
    distinct = np.mean([len(np.unique(row)) for row in y_score[:100]])
    print(f"ndcg_score(k={args.k}, ignore_ties={args.ignore_ties}) on "
          f"{args.samples} x {args.labels}; about {distinct:.0f} distinct scores per row; "
          f"median of {args.repeats} runs")

    # cumgain first: scikit-learn's BLAS calls leave OpenBLAS threads spinning
    # for a while, which would slow whatever runs next on a small machine.
    t_cg, v_cg = median_time(lambda: cumgain_sklearn.ndcg_score(y_true, y_score, **kwargs),
                             args.repeats)
    t_sk, v_sk = median_time(lambda: metrics.ndcg_score(y_true, y_score, **kwargs),
                             args.repeats)
    print(f"  scikit-learn  {t_sk * 1000:9.1f} ms   {v_sk!r}")
    print(f"  cumgain       {t_cg * 1000:9.1f} ms   {v_cg!r}")
    print(f"  ratio (scikit-learn / cumgain): {t_sk / t_cg:.1f}x")
    if abs(v_sk - v_cg) > 1e-12 * abs(v_sk):
        raise SystemExit(f"the results differ: {v_sk!r} vs {v_cg!r}")


if __name__ == "__main__":
    main()
