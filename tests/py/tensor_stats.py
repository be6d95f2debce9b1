#!/usr/bin/env python3
"""Per-tensor statistics of a GGUF file by numpy over the gguf package's
dequantization (float64 arithmetic), as JSON lines, for the audit tests.

  tensor_stats.py FILE.gguf
"""
import json
import sys

import numpy as np
import gguf


def main() -> None:
    r = gguf.GGUFReader(sys.argv[1])
    for t in r.tensors:
        x = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64).reshape(-1)
        fin = x[np.isfinite(x)]
        out = {
            "name": t.name,
            "count": int(x.size),
            "nan": int(np.isnan(x).sum()),
            "pos_inf": int(np.isposinf(x).sum()),
            "neg_inf": int(np.isneginf(x).sum()),
            "zeros": int((fin == 0).sum()),
            "min": float(fin.min()) if fin.size else 0.0,
            "max": float(fin.max()) if fin.size else 0.0,
            "mean": float(fin.mean()) if fin.size else 0.0,
            "std": float(fin.std()) if fin.size else 0.0,
            "rms": float(np.sqrt((fin * fin).mean())) if fin.size else 0.0,
            "max_abs": float(np.abs(fin).max()) if fin.size else 0.0,
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
