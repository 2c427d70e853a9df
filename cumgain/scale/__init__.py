"""Past one process: Dask's judgments and vectors, the Parquet dataset manifest. (The
faces: cumgain.stream, cumgain.dask, cumgain.convert.)
"""
