"""``cumgain demo``: the paper's worked example, then a generated test collection
(50 topics, three runs) evaluated end to end; the averaged curves go to a PNG if
matplotlib is there."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Optional

import numpy as np

from cumgain.cli.base import EXIT_USAGE, Failure, refuse_existing
from cumgain.exceptions import InputError, MissingDependencyError

HELP = "the paper's worked example and a generated test collection"
DESCRIPTION = ("Print the paper's worked example, then evaluate a generated test "
               "collection (50 topics, three runs) and plot its curves.")

# The worked example of Jarvelin & Kekalainen (2002), section 2.
PAPER_LEVELS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
PAPER_RECALL_BASE = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
DEMO_RANKS = (1, 5, 10, 20, 50)
DEMO_SCHEMES = ("0-1-1-1", "0-1-2-3", "0-1-10-100")
DEMO_PLOT_NAME = "cumgain-demo-curves.png"      # in a new folder from tempfile.mkdtemp


def _format_vector(vector: np.ndarray) -> str:
    return " ".join(f"{value:6.2f}" for value in vector)


def _demo_paper(out) -> None:
    import cumgain

    print("1. The worked example of Jarvelin & Kekalainen (2002), section 2", file=out)
    print(f"\nG'  = {PAPER_LEVELS}  (gain = relevance level 0-3)", file=out)
    ideal = cumgain.ideal_gains(PAPER_RECALL_BASE, depth=10)
    rows = [
        ("CG'", cumgain.cg(PAPER_LEVELS)),
        ("DCG' (b=2)", cumgain.dcg(PAPER_LEVELS, base=2)),
        ("CG_I'", cumgain.cg(ideal)),
        ("DCG_I' (b=2)", cumgain.dcg(ideal, base=2)),
        ("nCG'", cumgain.ncg(PAPER_LEVELS, PAPER_RECALL_BASE)),
        ("nDCG' (b=2)", cumgain.ndcg(PAPER_LEVELS, PAPER_RECALL_BASE, base=2)),
    ]
    print(f"{'rank':<14}" + " ".join(f"{rank:6d}" for rank in range(1, 11)), file=out)
    for name, vector in rows:
        print(f"{name:<14}{_format_vector(vector)}", file=out)


def _demo_measure(kind: str, k: int) -> str:
    return {"CG": f"CG@{k}", "DCG": f"DCG@{k}(discount=tois,base=2)", "nCG": f"nCG@{k}",
            "nDCG": f"nDCG@{k}(discount=tois,base=2)"}[kind]


def _demo_collection(out) -> dict:
    """Evaluate the generated collection; print the tables; return the results."""
    from cumgain.datasets import RUN_DEPTH, demo_collection
    from cumgain.engine.evaluator import evaluate

    collection = demo_collection()
    levels = [level for topic in collection.topics for level in collection.qrels[topic].values()]
    counts = np.bincount(levels, minlength=4)
    print(f"\n2. A generated test collection (cumgain.datasets.demo_collection): "
          f"{len(collection.topics)} topics, {len(levels)} judgments graded 0-3 "
          f"({', '.join(f'level {i}: {n}' for i, n in enumerate(counts))}), and three runs "
          f"of {RUN_DEPTH} documents per topic (some never judged): good, fair and poor.",
          file=out)
    kinds = ("CG", "DCG", "nCG", "nDCG")
    spellings = [_demo_measure(kind, k) for kind in kinds for k in DEMO_RANKS]
    spellings += [f"nDCG@10(discount=tois,base=2,gains={scheme})" for scheme in DEMO_SCHEMES]
    spellings.append("ndcg_cut_10")
    results = {run: evaluate(collection.qrels, collection.runs[run], spellings, warn=False)
               for run in collection.runs}

    print(f"\nMeans over the {len(collection.topics)} topics (gain = relevance level; DCG "
          "with the paper's discount, b = 2):", file=out)
    print(f"{'run':<6}{'measure':<9}" + "".join(f"{'@' + str(k):>9}" for k in DEMO_RANKS),
          file=out)
    for run, result in results.items():
        for i, kind in enumerate(kinds):
            values = [result.means[_demo_measure(kind, k)] for k in DEMO_RANKS]
            print(f"{run if i == 0 else '':<6}{kind:<9}"
                  + "".join(f"{value:9.4f}" if kind.startswith("n") else f"{value:9.2f}"
                            for value in values), file=out)

    print("\nnDCG@10 under the paper's gain schemes (its discount, b = 2), and trec_eval's "
          "ndcg_cut_10 (gain = level, 1/log2(i+1)):", file=out)
    headers = list(DEMO_SCHEMES) + ["ndcg_cut_10"]
    print(f"{'run':<6}" + "".join(f"{header:>13}" for header in headers), file=out)
    for run, result in results.items():
        values = [result.means[f"nDCG@10(discount=tois,base=2,gains={scheme})"]
                  for scheme in DEMO_SCHEMES] + [result.means["ndcg_cut_10"]]
        print(f"{run:<6}" + "".join(f"{value:13.4f}" for value in values), file=out)
    return results


def demo_curves(collection=None, depth: Optional[int] = None) -> dict:
    """The averaged CG, DCG, nCG and nDCG curves (gain = level; the paper's discount,
    b = 2; normalised per topic, then averaged) of the demo runs, with the ideal:
    ``{measure: cumgain.curves.Curves}``, over ranks 1..depth (default: the run depth)."""
    from cumgain import curves
    from cumgain.datasets import RUN_DEPTH, demo_collection

    collection = collection or demo_collection()
    return curves.compute_many(collection.qrels, collection.runs, curves.MEASURES,
                               depth=depth or RUN_DEPTH, discount="tois", base=2, warn=False)


def _plot_curves(path: Optional[Path], overwrite: bool) -> Path:
    """Write the four measures' curves (a 2 x 2 grid) to ``path`` (None: into a new
    private folder made by :func:`tempfile.mkdtemp`); return where. Without matplotlib,
    a :class:`MissingDependencyError`."""
    from cumgain import plot
    figure = plot.plot_grid(demo_curves())
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="cumgain-demo-")) / DEMO_PLOT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    return plot.save(figure, path, overwrite=overwrite)


def _check_demo_outputs(plot: Optional[Path], data_dir: Optional[Path], overwrite: bool) -> None:
    """Refuse, before any work, an output the demo may not write."""
    from cumgain.datasets import demo_collection
    from cumgain.plot import output_format
    if plot is not None:
        try:
            output_format(plot)
        except InputError as error:
            raise Failure(EXIT_USAGE, str(error)) from None
        refuse_existing(plot, overwrite)
    if data_dir is not None:
        for path in demo_collection().trec_paths(data_dir).values():
            refuse_existing(path, overwrite)


def run_demo(out=None, plot: Optional[Path] = None, data_dir: Optional[Path] = None, *,
             draw: bool = True, overwrite: bool = False) -> None:
    """Print the paper's worked example, then evaluate the generated collection.

    ``draw``: plot the curves, to ``plot`` (default: a new private temporary folder).
    ``data_dir``: also write the collection there as TREC files. Existing files are
    replaced only with ``overwrite``; every file is written atomically.
    """
    out = sys.stdout if out is None else out
    _check_demo_outputs(plot if draw else None, data_dir, overwrite)
    print("cumgain demo: cumulated gain (CG, DCG, nCG, nDCG)\n", file=out)
    _demo_paper(out)
    _demo_collection(out)
    if draw:
        try:
            written = _plot_curves(None if plot is None else Path(plot), overwrite)
        except MissingDependencyError as error:
            print(f"\nCurves: {error} - no PNG written", file=out)
        else:
            print(f"\nCurves (mean CG, DCG, nCG and nDCG by rank, per run, and the ideal): "
                  f"wrote {written}", file=out)
    if data_dir is not None:
        from cumgain.datasets import demo_collection
        paths = demo_collection().write_trec(data_dir, overwrite=overwrite)
        runs = " ".join(str(paths[name]) for name in paths if name != "qrels")
        print(f"\nThe collection as TREC files: {data_dir}. Try:\n"
              f"  cumgain evaluate {paths['qrels']} {runs} -m nDCG@10 -m P@10 -g 0-1-2-3 "
              f"-g 0-1-10-100", file=out)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plot", type=Path, metavar="PNG",
                        help="where to write the curves if matplotlib is installed "
                             f"(default: {DEMO_PLOT_NAME} in a new private temporary folder)")
    parser.add_argument("--no-plot", dest="draw", action="store_false",
                        help="do not write the curves")
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="also write the generated collection there as TREC files")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the plot and the TREC files if they exist")
    parser.set_defaults(handler=lambda args: run_demo(
        plot=args.plot, data_dir=args.data_dir, draw=args.draw, overwrite=args.overwrite))
