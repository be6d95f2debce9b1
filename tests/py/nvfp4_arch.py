"""Writes NVFP4 files as NVIDIA's FP4 conversions lay them out for llama.cpp (convert_hf_to_gguf.py's ModelOpt path):
every matrix whose rows are a multiple of 64 values wide (token_embd.weight aside) in NVFP4 blocks (four sub-blocks of
16 values, each an unsigned E4M3 scale and 16 E2M1 values: ggml-common.h's block_nvfp4), each with its second,
per-tensor scale beside it as blk.N.W.scale, which llama.cpp's loader takes and its graphs multiply the products by.
The base is ../shared/tools/synth_model.py's tiny-llama; each matrix is divided by its scale before it is rounded, so
that the scale puts it back. The rounding is ggml's reference quantizer's (quantize_row_nvfp4_ref): the sub-block's
largest magnitude over 6 to E4M3, then each value to the nearest E2M1 level, the first of equals. llama-quantize does
not write NVFP4, so this writer is the only source of the files. Deterministic, as synth_model.py is.

    from nvfp4_arch import write_nvfp4; write_nvfp4(path)"""
import os
import tempfile

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType
from gguf.quants import NVFP4

from gguf_copy import numpy_shape, write_out, writer_with_metadata
from renamed_arch import write_base

# E2M1's levels doubled, as ggml's kvalues_mxfp4 (its E4M3 scales are halved to match)
LEVELS = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=np.float32)


def quantize_nvfp4(a):
    """(rows, n) float32, n a multiple of 64 -> (rows, n / 64 * 36) bytes of NVFP4 blocks."""
    rows, n = a.shape
    sub = a.astype(np.float32).reshape(rows, n // 64, 4, 16)
    amax = np.abs(sub).max(axis=-1)
    d_bytes = NVFP4.fp32_to_ue4m3((amax / np.float32(6.0)).astype(np.float32)).astype(np.uint8)
    d = NVFP4.ue4m3_to_fp32(d_bytes).astype(np.float32)[..., None, None]
    err = np.abs(LEVELS * d - sub[..., None])  # (..., 16 values, 16 levels)
    idx = err.argmin(axis=-1).astype(np.uint8)  # the first of equal errors, as ggml's loop keeps it
    qs = idx[..., :8] | (idx[..., 8:] << 4)  # value j in the low nibble of byte j, value j + 8 in its high nibble
    return np.concatenate([d_bytes[..., None].repeat(1, axis=-1).reshape(rows, n // 64, 4),
                           qs.reshape(rows, n // 64, 32)], axis=-1).reshape(rows, n // 64 * 36)


def write_nvfp4(out, preset='tiny-llama', seed=7301, output_scale=False):
    """output_scale: output.weight's second scale written as output.scale (the loader takes it beside an NVFP4 output,
    and most graphs multiply the logits by it), not folded into the blocks."""
    rs = np.random.RandomState(seed)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'base.gguf')
        write_base('synth_model', preset, None, src)
        r = GGUFReader(src)
        # llama.cpp's LLAMA_FTYPE_MOSTLY_NVFP4
        w = writer_with_metadata(r, out, replace={'general.file_type': (39, GGUFValueType.UINT32)})
        for t in r.tensors:
            a = np.array(t.data).reshape(numpy_shape(t)).astype(np.float32)
            if a.ndim != 2 or a.shape[-1] % 64 or t.name == 'token_embd.weight':
                w.add_tensor(t.name, a)
                continue
            scale = np.float32(rs.uniform(0.5, 2.0))
            sidecar = t.name.startswith('blk.') or (output_scale and t.name == 'output.weight')
            q = quantize_nvfp4(a / scale)
            w.add_tensor(t.name, q, raw_shape=q.shape, raw_dtype=GGMLQuantizationType.NVFP4)
            if sidecar:
                w.add_tensor(t.name[:-len('weight')] + 'scale', np.array([scale], dtype=np.float32))
        write_out(w)


if __name__ == '__main__':
    import sys
    write_nvfp4(sys.argv[1])
