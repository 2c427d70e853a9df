"""nDCG curves of three runs, as in the paper's Figure 4
The averaged nDCG vectors of the demo collection's three runs to rank 100, under the
paper's 0-1-10-100 gains and discount (b = 2), averaged then normalised as in the
paper's figures; the ideal curve is the dashed line at 1.
"""
from cumgain import curves, plot

runs = {"good": "good.run", "fair": "fair.run", "poor": "poor.run"}
ndcg = curves.compute("qrels.txt", runs, "nDCG", depth=100, gains="0-1-10-100",
                      discount="tois", base=2, order="average_then_normalise")
figure = plot.plot_curves(ndcg)          # plot.plot_curves(ndcg, "ndcg.png") writes a file
