#!/usr/bin/env python3
"""Writes IN (a phi3 GGUF without LongRoPE, such as synth_arch.py's tiny-phi3) as a phi3 128k-style file: the same
metadata and tensors plus rope_factors_long.weight and rope_factors_short.weight (n_rot / 2 F32 divisors each, as
Phi-3-mini-128k's converter writes them), phi3.rope.scaling.original_context_length ORIG and
phi3.rope.scaling.attn_factor sqrt(1 + ln(context_length / ORIG) / ln(ORIG)) (the converter's formula), written by
the gguf package: llama.cpp picks the long divisors for a context (padded to 256) past ORIG, the short ones
within it. Usage: phi3_longrope.py IN.gguf OUT.gguf ORIG"""
import math
import sys

import numpy as np
from gguf import GGUFReader

from gguf_copy import numpy_shape, write_out, writer_with_metadata


def main():
    src, dst, orig = sys.argv[1], sys.argv[2], int(sys.argv[3])
    r = GGUFReader(src)
    arch = r.get_field("general.architecture").contents()
    w = writer_with_metadata(r, dst)
    n_ctx = int(r.get_field(f"{arch}.context_length").contents())
    w.add_uint32(f"{arch}.rope.scaling.original_context_length", orig)
    w.add_float32(f"{arch}.rope.scaling.attn_factor",
                  math.sqrt(1 + math.log(n_ctx / orig) / math.log(orig)) if n_ctx > orig else 1.0)
    n_rot = int(r.get_field(f"{arch}.rope.dimension_count").contents())
    half = np.arange(n_rot // 2, dtype=np.float32)
    # divisors growing along the pairs as a long-context model's do (the slow pairs slowed most)
    w.add_tensor("rope_factors_long.weight", (1.0 + 0.75 * half).astype(np.float32))
    w.add_tensor("rope_factors_short.weight", (1.0 + 0.06 * half).astype(np.float32))
    for t in r.tensors:
        w.add_tensor(t.name, np.array(t.data).reshape(numpy_shape(t)), raw_dtype=t.tensor_type)
    write_out(w)


if __name__ == "__main__":
    main()
