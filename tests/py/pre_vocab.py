#!/usr/bin/env python3
"""Writes, for each NAME, OUTDIR/NAME.gguf: the vocabulary of IN (its tokenizer.* keys and the hyperparameters
llama.cpp reads before them; no tensors) with tokenizer.ggml.pre set to NAME and tokenizer.ggml.add_bos_token
left out, so that the pre-tokenizer's expressions and the defaults llama.cpp gives that name (BOS, merges) decide
the tokens. tests/data/golden/tokenize/pre-NAME.jsonl is llama.cpp's tokenization of tests/data/pretok_strings.txt
with each (scripts/pretok-reference.sh). Usage: pre_vocab.py IN.gguf OUTDIR NAME..."""
import os
import sys

from gguf import GGUFReader, GGUFValueType, GGUFWriter


def main():
    src, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    r = GGUFReader(src)
    arch = r.get_field("general.architecture").contents()
    keep = []
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", "tokenizer.ggml.pre",
                                                 "tokenizer.ggml.add_bos_token", "tokenizer.chat_template"):
            continue
        if name.startswith("tokenizer.") or name.startswith(arch + "."):
            keep.append((name, field.types[0], field.contents()))
    for pre in names:
        w = GGUFWriter(os.path.join(out, pre + ".gguf"), arch)
        for name, vt, value in keep:
            if vt == GGUFValueType.ARRAY:
                w.add_array(name, value)
            else:
                w.add_key_value(name, value, vt)
        w.add_tokenizer_pre(pre)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()


if __name__ == "__main__":
    main()
