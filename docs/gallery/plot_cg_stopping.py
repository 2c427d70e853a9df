"""CG curves with the ideal and its stopping rank
Averaged cumulated gain to rank 200 (levels as gains). The ideal curve turns
horizontal where the topic with the most relevant judgments runs out of them: the
dotted line marks that stopping rank (`curves.stopping_rank`).
"""
from cumgain import curves, plot

runs = {"good": "good.run", "fair": "fair.run", "poor": "poor.run"}
cg = curves.compute("qrels.txt", runs, "CG", depth=200)
print("stopping rank:", curves.stopping_rank(cg))
print("horizontal reading at 10:", curves.horizontal_reading(cg, 10))
figure = plot.plot_curves(cg)
