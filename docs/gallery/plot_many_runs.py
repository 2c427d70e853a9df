"""Many runs, the best highlighted
Twelve runs made by blending the good and the poor run's scores; each run keeps its
own colour, line style and marker (`plot.run_style`), the legend sits beside the
axes, and `highlight=plot.best_runs(...)` draws the three curves that end highest
thick and the others faded (`cumgain curves --top 3`).
"""
from cumgain import curves, plot
from cumgain.trec_io import load_run

good, poor = load_run("good.run").to_dict(), load_run("poor.run").to_dict()


def blend(w):
    """Each topic's documents of both runs, scored w * good + (1 - w) * poor."""
    return {topic: {doc: w * good[topic].get(doc, 0.0) + (1 - w) * poor[topic].get(doc, 0.0)
                    for doc in good[topic].keys() | poor[topic].keys()}
            for topic in good}


runs = {f"blend {w:.2f}": blend(w) for w in [i / 11 for i in range(12)]}
ndcg = curves.compute("qrels.txt", runs, "nDCG", depth=100, warn=False)
figure = plot.plot_curves(ndcg, size=(8, 4.8), highlight=plot.best_runs(ndcg, 3))
