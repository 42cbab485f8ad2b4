"""Rank r's inputs in the collectives' test (imported by the script and by the test)."""
import numpy as np


def inputs(r: int, n: int) -> dict:
    g = np.random.default_rng(100 + r)
    nan = g.standard_normal(5)
    if r == 1:
        nan[2] = np.nan
    return {
        "float32": g.standard_normal((3, 4)).astype(np.float32),
        "float64": g.standard_normal(7),
        "int64": g.integers(-5, 6, size=(2, 3)).astype(np.int64),
        "int32": g.integers(1, 4, size=5).astype(np.int32),
        "float16": g.standard_normal(6).astype(np.float16),
        "bool": g.random(8) < 0.3,
        "nan": nan,
        "float64_2d": g.standard_normal((4, 5)),
        "rs": g.standard_normal((2 * n, 4)),
    }
