#!/usr/bin/env python3
"""Writes a GGUF file with every tensor of IN dequantized to F32 by the gguf package (gguf-py, llama.cpp's own
Python side), its metadata kept (general.file_type set to ALL_F32): the base that quantizations of IN are held to,
made by a reference that is not ours. Usage: dequantize_to_f32.py IN.gguf OUT.gguf"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType, LlamaFileType
from gguf.quants import dequantize

from gguf_copy import numpy_shape, write_out, writer_with_metadata


def main():
    src, dst = sys.argv[1], sys.argv[2]
    r = GGUFReader(src)
    w = writer_with_metadata(r, dst, replace={"general.file_type": (int(LlamaFileType.ALL_F32), GGUFValueType.UINT32)})
    for t in r.tensors:
        data = dequantize(t.data, t.tensor_type).astype(np.float32)
        w.add_tensor(t.name, data.reshape(numpy_shape(t)))
    write_out(w)


if __name__ == "__main__":
    main()
