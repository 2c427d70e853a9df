"""cumgain.dask on a LocalCluster: rows per second on 1 and 2 workers, peak memory per
worker; and the single-machine modes (cumgain.evaluate, cumgain.stream) on the same data.

The collection comes from ``generate.py``'s generator (topics x documents per topic,
graded judgments, many tied scores). It is written three ways, in a temporary folder:

* ``shuffle``: Parquet in 8 files with the rows of all topics interleaved (a topic is
  spread over every file), so cumgain.dask must shuffle on query_id;
* ``by-topic``: Parquet partitioned by topic (``cumgain.dask.write_parquet``, what
  ``cumgain convert --partition-by-topic`` writes): no shuffle;
* a TREC run file, for ``cumgain.evaluate`` (native reader) and
  ``cumgain.stream.evaluate_stream``.

The qrels are given to cumgain.dask two ways (``--qrels``): ``parquet``
(``cumgain convert --qrels``'s layout: read natively on the client) and ``trec`` (the
TREC file: read by the reference reader on the client, ~1 us per judgment).

Each measurement runs in fresh processes (a new LocalCluster with ``processes=True,
threads_per_worker=1``, or a new interpreter), so peak RSS (``ru_maxrss``) belongs to
that measurement alone (read as ``VmHWM`` from ``/proc/self/status``, Linux only:
``ru_maxrss`` would carry the parent's peak over ``exec``). Every result is checked against cumgain.evaluate (per-topic
values and means equal). Times are wall clock for the whole job (reading the files
included, starting the cluster excluded), the fastest of ``--repeats`` runs in the same
processes (the machine this was written on is shared, so single runs are noisy); peak RSS
is over all of them. "per worker" is rows/s divided by the workers; "of evaluate" is
that against ``cumgain.evaluate`` in one process (its default threads;
``evaluate(threads=1)`` is printed too, what one core does) on the same rows, two ways:
the TREC file (native reader), and the by-topic dataset's Parquet files (read by pyarrow
in that process, as a table: the files cumgain.dask reads).

Run: ``python benchmarks/bench_dask.py [--topics 2000] [--docs 1000] [--workers 1,2]
[--repeats 3] [--qrels parquet,trec]``
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate

MEASURES = ["ndcg_cut_10", "map", "P_10", "recip_rank", "nDCG@20(discount=tois, gains=0-1-10-100)"]


def write_inputs(folder: Path, n_topics: int, docs: int, seed: int) -> dict:
    import pandas as pd

    import cumgain.dask as cgd
    from cumgain.trec_io import load_qrels, read_run

    qids, run_docs, cents, q_topic, q_docs, q_levels = generate.make_collection(
        n_topics, docs, seed, generate.N_PASSAGES)
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    generate.write_run(run_path, qids, run_docs, cents, "", generate.N_PASSAGES)
    generate.write_qrels(qrels_path, qids, q_topic, q_docs, q_levels, "", generate.N_PASSAGES)

    frame = pd.DataFrame({
        "query_id": pd.array(np.repeat(qids, docs).astype(str), dtype=str),
        "doc_id": pd.array(run_docs.ravel().astype(str), dtype=str),
        "score": cents.ravel() / 100})
    interleaved = frame.iloc[np.argsort(np.tile(np.arange(docs), n_topics), kind="stable")]
    (folder / "shuffle").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(interleaved)), 8)):
        interleaved.iloc[rows].to_parquet(folder / "shuffle" / f"part-{i:02d}.parquet",
                                          index=False)
    cgd.write_parquet(read_run(run_path), folder / "by-topic", partition_by_topic=True,
                      rows_per_file=max(len(frame) // 16, 1))
    cgd.write_parquet(load_qrels(qrels_path), folder / "qrels-parquet")
    return {"run": run_path, "qrels": qrels_path, "rows": len(frame),
            "shuffle": folder / "shuffle", "by-topic": folder / "by-topic",
            "qrels-parquet": folder / "qrels-parquet"}


# ---------------------------------------------------------------- one measurement each

CLUSTER_JOB = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from distributed import Client, LocalCluster
import cumgain, cumgain.dask as cgd

def peak_rss_mb():
    # VmHWM: this process image's peak RSS (ru_maxrss would carry the parent's over exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024

if __name__ == "__main__":
    qrels, run, trec_run = sys.argv[1], sys.argv[2], sys.argv[3]
    workers, measures, repeats = int(sys.argv[4]), json.loads(sys.argv[5]), int(sys.argv[6])
    trec_qrels, trim = sys.argv[7], sys.argv[8]
    if trim == "unset":     # glibc's own malloc policy in the workers (see --malloc-trim)
        import dask
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                      dashboard_address=None, memory_limit="8GiB") as cluster, \
            Client(cluster) as client:
        client.run(lambda: None)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            lazy = cgd.evaluate(qrels, run, measures)
            result = lazy.compute()
            times.append(time.perf_counter() - started)
        seconds = min(times)
        workers_mb = sorted(client.run(peak_rss_mb).values())
    reference = cumgain.evaluate(trec_qrels, trec_run, measures)
    same = result.topics == reference.topics and all(
        np.array_equal(result.values[m], reference.values[m]) and
        result.means[m] == reference.means[m] for m in reference.values)
    print(json.dumps({"seconds": seconds, "workers_mb": workers_mb, "shuffled": lazy.shuffled,
                      "client_mb": peak_rss_mb(), "same": bool(same)}))
"""

LOCAL_JOB = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import cumgain
from cumgain.stream import evaluate_stream
qrels, run, mode = sys.argv[1], sys.argv[2], sys.argv[3]
measures, repeats = json.loads(sys.argv[4]), int(sys.argv[5])
kind, _, number = mode.partition(":")     # evaluate[:threads], parquet[:threads], stream:topics
threads = int(number) if number and kind != "stream" else None
if kind == "parquet":
    import pyarrow.parquet as pq
times = []
for _ in range(repeats):
    started = time.perf_counter()
    if kind == "evaluate":
        result = cumgain.evaluate(qrels, run, measures, threads=threads)
    elif kind == "parquet":               # the dataset's files, read here by pyarrow
        table = pq.read_table(run, columns=["query_id", "doc_id", "score"],
                              read_dictionary=["query_id"], use_threads=threads is None)
        result = cumgain.evaluate(qrels, table, measures, threads=threads)
    else:
        result = evaluate_stream(qrels, run, measures, topics_per_chunk=int(number))
    times.append(time.perf_counter() - started)
seconds = min(times)
means = {name: result.means[name] for name in result.means}
with open("/proc/self/status") as status:
    peak_mb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "means": means}))
"""


def run_job(code: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent),
                                                       os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per measurement in the same processes; the fastest counts")
    parser.add_argument("--qrels", default="parquet,trec",
                        help="how cumgain.dask gets the qrels: parquet, trec or both")
    parser.add_argument("--layouts", default="shuffle,by-topic",
                        help="run layouts to measure: shuffle, by-topic or both")
    parser.add_argument("--malloc-trim", default="dask,unset",
                        help="the workers' MALLOC_TRIM_THRESHOLD_: 'dask' (Dask's default, "
                             "65536, which also fixes glibc's mmap threshold at 128 KiB, so "
                             "every array that big is fresh pages), 'unset' (glibc's "
                             "default), or both")
    parser.add_argument("--no-stream", dest="stream", action="store_false",
                        help="skip cumgain.stream (the reference reader: ~15 s at 10M rows)")
    parser.add_argument("--data", type=Path,
                        help="keep the inputs in this folder (written if it does not "
                             "exist; reused, as written for the same --topics/--docs/--seed, "
                             "if it does)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="cumgain-bench-dask-") as tmp:
        folder = args.data or Path(tmp)
        started = time.perf_counter()
        recorded = folder / "inputs.json"
        numbers = ("rows", "topics", "docs")
        if args.data and recorded.exists():
            inputs = {key: value if key in numbers else Path(value)
                      for key, value in json.loads(recorded.read_text()).items()}
        else:
            folder.mkdir(parents=True, exist_ok=True)
            inputs = write_inputs(folder, args.topics, args.docs, args.seed)
            inputs.update(topics=args.topics, docs=args.docs)
            recorded.write_text(json.dumps({key: value if key in numbers else str(value)
                                            for key, value in inputs.items()}))
        rows = inputs["rows"]
        print(f"{inputs.get('topics', '?'):,} topics x {inputs.get('docs', '?'):,} documents = "
              f"{rows:,} run rows "
              f"({inputs['run'].stat().st_size / 1e6:.0f} MB as TREC text); inputs written "
              f"in {time.perf_counter() - started:.1f} s; measures: {', '.join(MEASURES)}\n")
        measures = json.dumps(MEASURES)
        local = []
        for mode in ("evaluate", "evaluate:1", "parquet", "parquet:1") + (
                ("stream:100", "stream:1000") if args.stream else ()):
            run = inputs["by-topic" if mode.startswith("parquet") else "run"]
            local.append((mode, run_job(LOCAL_JOB, inputs["qrels"], run, mode, measures,
                                        args.repeats)))
        evaluate_rate = rows / local[0][1]["seconds"]
        parquet_rate = rows / local[2][1]["seconds"]
        print("| job | qrels | malloc trim | workers | wall time | rows / s | per worker | "
              "of evaluate (TREC file) | of evaluate (same Parquet) | peak RSS per worker | "
              "client peak | same numbers |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        jobs = itertools.product(args.layouts.split(","), args.qrels.split(","),
                                 args.malloc_trim.split(","),
                                 [int(w) for w in args.workers.split(",")])
        for layout, qrels, trim, workers in jobs:
            out = run_job(CLUSTER_JOB, inputs["qrels-parquet" if qrels == "parquet" else "qrels"],
                          inputs[layout], inputs["run"], workers, measures, args.repeats,
                          inputs["qrels"], trim)
            per_worker = ", ".join(f"{mb:,.0f}" for mb in out["workers_mb"])
            rate = rows / out["seconds"]
            print(f"| cumgain.dask, Parquet {layout}{' (shuffled)' if out['shuffled'] else ''} "
                  f"| {qrels} | {trim} | {workers} | {out['seconds']:.2f} s | {rate:,.0f} | "
                  f"{rate / workers:,.0f} | {rate / workers / evaluate_rate:.0%} | "
                  f"{rate / workers / parquet_rate:.0%} | "
                  f"{per_worker} MB | {out['client_mb']:,.0f} MB | {out['same']} |")
        reference = local[0][1]["means"]
        for mode, out in local:
            label = {"evaluate": "cumgain.evaluate, TREC file (native reader)",
                     "evaluate:1": "cumgain.evaluate(threads=1), TREC file",
                     "parquet": "cumgain.evaluate, the by-topic Parquet files (pyarrow)",
                     "parquet:1": "cumgain.evaluate(threads=1), the by-topic Parquet files"
                     }.get(mode, f"cumgain.stream.evaluate_stream, topics_per_chunk="
                                 f"{mode.split(':')[-1]}")
            print(f"| {label} | trec | | 1 process | {out['seconds']:.2f} s | "
                  f"{rows / out['seconds']:,.0f} | | | | {out['peak_mb']:,.0f} MB | | "
                  f"{out['means'] == reference} |")

if __name__ == "__main__":
    main()
