#!/usr/bin/env python3
"""Reference numbers from the `gguf` package for the quant tests.

  quant_ref.py deq TYPE_ID IN.bin OUT.f32     dequantize raw blocks to raw float32
  quant_ref.py quant TYPE_ID IN.f32 OUT.bin   quantize raw float32 to raw blocks
  quant_ref.py model FILE.gguf OUT.f32        every tensor of FILE, dequantized, concatenated in file order
  quant_ref.py f16 OUT.f32                    all 65536 f16 bit patterns as float32 (numpy's conversion)

Q8_1 and Q8_K, which gguf-py does not dequantize, are computed here with the
formula from ggml's block layout (x = d * q), written independently of ours.
"""
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T


def deq(qtype: T, raw: np.ndarray) -> np.ndarray:
    bs, ts = gguf.GGML_QUANT_SIZES[qtype] if qtype != T.Q8_1 else (32, 36)
    blocks = raw.reshape(-1, ts)
    if qtype == T.Q8_1:  # [d:f16][s:f16][qs:32 int8]
        d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
        return (blocks[:, 4:].view(np.int8).astype(np.float32) * d).reshape(-1)
    if qtype == T.Q8_K:  # [d:f32][qs:256 int8][bsums:16 int16]
        d = blocks[:, 0:4].copy().view(np.float32)
        return (d * blocks[:, 4:260].view(np.int8).astype(np.float32)).reshape(-1)
    return gguf.quants.dequantize(raw.reshape(-1, ts), qtype).reshape(-1).astype(np.float32)


def main() -> int:
    mode = sys.argv[1]
    if mode == "deq":
        qtype = T(int(sys.argv[2]))
        raw = np.fromfile(sys.argv[3], dtype=np.uint8)
        deq(qtype, raw).astype(np.float32).tofile(sys.argv[4])
    elif mode == "quant":
        qtype = T(int(sys.argv[2]))
        x = np.fromfile(sys.argv[3], dtype=np.float32)
        bs, _ = gguf.GGML_QUANT_SIZES[qtype]
        gguf.quants.quantize(x.reshape(-1, bs), qtype).tofile(sys.argv[4])
    elif mode == "model":
        r = gguf.GGUFReader(sys.argv[2])
        with open(sys.argv[3], "wb") as out:
            for t in r.tensors:
                raw = np.asarray(t.data).view(np.uint8).reshape(-1)
                if t.tensor_type in (T.F32,):
                    vals = raw.view(np.float32)
                elif t.tensor_type == T.F16:
                    vals = raw.view(np.float16).astype(np.float32)
                else:
                    vals = deq(t.tensor_type, raw)
                vals.astype(np.float32).tofile(out)
    elif mode == "f16":
        np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32).tofile(sys.argv[2])
    else:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
