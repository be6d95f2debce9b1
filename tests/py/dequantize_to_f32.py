#!/usr/bin/env python3
"""Writes a GGUF file with every tensor of IN dequantized to F32 by the gguf package (gguf-py, llama.cpp's own
Python side), its metadata kept (general.file_type set to ALL_F32): the base that quantizations of IN are held to,
made by a reference that is not ours. Usage: dequantize_to_f32.py IN.gguf OUT.gguf"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType, LlamaFileType
from gguf.quants import dequantize


def main():
    src, dst = sys.argv[1], sys.argv[2]
    r = GGUFReader(src)
    arch = r.get_field("general.architecture").contents()
    w = GGUFWriter(dst, arch)
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        if name == "general.file_type":
            w.add_uint32(name, int(LlamaFileType.ALL_F32))
            continue
        vt = field.types[0]
        if vt == GGUFValueType.ARRAY:
            w.add_array(name, field.contents())
        else:
            w.add_key_value(name, field.contents(), vt)
    for t in r.tensors:
        data = dequantize(t.data, t.tensor_type).astype(np.float32)
        # gguf-py's shapes are GGUF order (ne0 first); numpy's are the reverse
        w.add_tensor(t.name, data.reshape(list(reversed([int(x) for x in t.shape]))))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
