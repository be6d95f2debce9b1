#!/usr/bin/env python3
"""Dumps what the reference `gguf` package reads from a GGUF file, as JSON,
for tests that compare it with our reader. Strings are hex (any bytes);
non-finite floats are strings ("nan", "inf", "-inf")."""
import json
import math
import sys

import gguf
from gguf import GGUFValueType as VT


def scalar(x):
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def field_value(f):
    t = f.types
    if t[0] == VT.STRING:
        return f.parts[f.data[0]].tobytes().hex()
    if t[0] != VT.ARRAY:
        return scalar(f.parts[f.data[0]][0])
    if len(t) > 1 and t[1] == VT.STRING:
        return [f.parts[i].tobytes().hex() for i in f.data]
    if len(t) > 1 and t[1] == VT.ARRAY:
        return None  # gguf-py does not decode nested arrays; counts are compared instead
    return [scalar(f.parts[i][0]) for i in f.data]


def main() -> int:
    r = gguf.GGUFReader(sys.argv[1])
    out = {"alignment": int(r.alignment), "data_offset": int(r.data_offset), "fields": [], "tensors": []}
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            if key == "GGUF.version":
                out["version"] = scalar(f.parts[f.data[0]][0])
            continue
        out["fields"].append({"key": key, "offset": f.offset, "types": [int(x) for x in f.types],
                              "count": len(f.data), "value": field_value(f)})
    for t in r.tensors:
        out["tensors"].append({"name": t.name, "type": int(t.tensor_type), "shape": [int(x) for x in t.shape],
                               "n_elements": int(t.n_elements), "n_bytes": int(t.n_bytes),
                               "data_offset": int(t.data_offset)})
    out["quant_sizes"] = {str(int(k)): list(v) for k, v in gguf.GGML_QUANT_SIZES.items()}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
