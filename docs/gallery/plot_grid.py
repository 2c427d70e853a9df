"""CG, DCG, nCG and nDCG in one grid
`curves.compute_many` computes the four measures at once and `plot.plot_grid` draws
them in a 2 x 2 grid with one legend below (what `cumgain curves -m all` and
`cumgain demo` draw).
"""
from cumgain import curves, plot

runs = {"good": "good.run", "fair": "fair.run", "poor": "poor.run"}
four = curves.compute_many("qrels.txt", runs, depth=50, gains="0-1-2-3")
figure = plot.plot_grid(four)
