"""Memory across repeated evaluations in one process: no leak, no growth.

Evaluates the same collection N times (files -> per-topic values and means, the
benchmark's measure bundle) and prints the resident set size after each repetition,
with the peak. A leak in the compiled core (a buffer not freed, a reference not
dropped) shows as RSS rising with every repetition.

Run: ``python benchmarks/memory_repeat.py [--size L] [--repeats 20]`` (generates the
collection with benchmarks/generate.py if it is missing). Also ``--dicts`` to go
through the pytrec_eval drop-in with loaded dicts.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURES = ["ndcg", "ndcg_cut_10", "map", "P_10", "recip_rank"]


def rss_mb() -> float:
    """The current resident set size (Linux /proc), in MB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 1e6


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def heap_in_use_mb() -> float:
    """Bytes malloc has handed out and not had back (glibc mallinfo2: uordblks + hblkhd),
    in MB; NaN where glibc's mallinfo2 is unavailable. Unlike RSS, this does not
    depend on how the allocator keeps freed pages, so a leak shows as steady growth."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return float("nan")
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 1e6


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="L", choices=("S", "M", "L"))
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--dicts", action="store_true",
                        help="evaluate loaded dicts through the pytrec_eval drop-in")
    args = parser.parse_args(argv)

    data = HERE / "data" / args.size
    if not (data / "run.txt").exists():
        sys.path.insert(0, str(HERE))
        import generate
        generate.main(["--sizes", args.size])
    import cumgain
    from cumgain.compat import pytrec_eval as compat

    print(f"collection {args.size}: {data}; {args.repeats} repetitions; "
          f"{'dicts via the pytrec_eval drop-in' if args.dicts else 'files -> means'}")
    print(f"RSS before: {rss_mb():.1f} MB")
    if args.dicts:
        with open(data / "qrels.txt") as qrels_file, open(data / "run.txt") as run_file:
            qrels, run = compat.parse_qrel(qrels_file), compat.parse_run(run_file)
        print(f"RSS with the dicts loaded: {rss_mb():.1f} MB")
    readings, heap = [], []
    for i in range(1, args.repeats + 1):
        start = time.perf_counter()
        if args.dicts:
            result = compat.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
            value = len(result)
        else:
            result = cumgain.evaluate(data / "qrels.txt", data / "run.txt", MEASURES,
                                      warn=False)
            value = result.means["ndcg"]
        del result
        gc.collect()
        readings.append(rss_mb())
        heap.append(heap_in_use_mb())
        print(f"rep {i:3d}: {time.perf_counter() - start:6.2f} s   RSS {readings[-1]:8.1f} MB"
              f"   malloc in use {heap[-1]:8.2f} MB   ({value})", flush=True)
    settled = readings[min(2, len(readings) - 1)]
    print(f"RSS after rep 3: {settled:.1f} MB; after rep {len(readings)}: {readings[-1]:.1f} MB "
          f"(change {readings[-1] - settled:+.1f} MB); max over reps {max(readings):.1f} MB; "
          f"peak (ru_maxrss) {peak_mb():.1f} MB")
    print(f"malloc in use after rep 3: {heap[min(2, len(heap) - 1)]:.2f} MB; after rep "
          f"{len(heap)}: {heap[-1]:.2f} MB (change {heap[-1] - heap[min(2, len(heap) - 1)]:+.2f} MB)")


if __name__ == "__main__":
    main()
