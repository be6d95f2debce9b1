#!/usr/bin/env python3
"""Writes OUTDIR/{harmony,harmony-no-call,keyed}.gguf: vocabulary-only files (a byte-level BPE vocabulary: the 256
byte tokens, one merge, then special tokens) that trip each rule llama.cpp's vocabulary loader applies after reading
the file (src/llama-vocab.cpp, llama_vocab::impl::load): fill-in-the-middle tokens found by their text, end-of-
generation texts, gpt-oss's always-printed tokens, o200k_harmony's <|end|> that does not end generation (and
solar-open's), gemma4's ordinary </s>, and keys that name a token where the text would pick another. One candidate
text per role, so that llama.cpp's choice does not depend on its hash map's order. tests/data/llama_vocab_rules.jsonl
is what llama.cpp made of these files (scripts/llama-vocab-reference.sh). Usage: vocab_rules.py OUTDIR"""
import os
import sys

from gguf import GGUFWriter, TokenType

N, C, U = TokenType.NORMAL, TokenType.CONTROL, TokenType.USER_DEFINED

# (name, [(text, type)], {key: value})
VARIANTS = [
    ("harmony", [("<|startoftext|>", C), ("<|endoftext|>", C), ("<|start|>", C), ("<|channel|>", C),
                 ("<|message|>", C), ("<|constrain|>", C), ("<|end|>", C), ("<|return|>", C), ("<|call|>", C),
                 ("<|im_end|>", N), ("<|fim_pad|>", N), ("<|repo_name|>", C), ("<|file_sep|>", C),
                 ("<|fim_prefix|>", N), ("<|fim_suffix|>", U), ("<|fim_middle|>", C)],
     {"bos": "<|startoftext|>", "eos": "<|return|>"}),
    # without <|call|>, <|end|> still ends generation
    ("harmony-no-call", [("<|startoftext|>", C), ("<|start|>", C), ("<|channel|>", N), ("<|message|>", C),
                         ("<|end|>", C), ("<|return|>", C)],
     {"bos": "<|startoftext|>", "eos": "<|return|>"}),
    # keys name tokens where the text would find others; solar-open's <|calls|> and <|flush|>; gemma4's </s>
    ("keyed", [("<|fim_pad|>", C), ("<fim_prefix>", N), ("<|eot_id|>", U), ("</s>", C), ("<|tool_response>", C),
               ("<|end|>", C), ("<|calls|>", C), ("<|flush|>", C), ("<eos>", C), ("<unused0>", C)],
     {"eos": "<eos>", "fim_pad": "he", "prefix": "wo", "eot": "rd"}),
]

KEYS = {"bos": "tokenizer.ggml.bos_token_id", "eos": "tokenizer.ggml.eos_token_id",
        "eot": "tokenizer.ggml.eot_token_id", "fim_pad": "tokenizer.ggml.fim_pad_token_id",
        "prefix": "tokenizer.ggml.prefix_token_id"}


def byte_level_chars():
    """GPT-2's printable stand-in for each byte, in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return [out[b] for b in range(256)]


def write(path, specials, keys):
    tokens = byte_level_chars() + ["he", "wo", "rd"] + [t for t, _ in specials]
    types = [N] * (256 + 3) + [ty for _, ty in specials]
    w = GGUFWriter(path, "llama")
    # the hyperparameters llama.cpp reads before the vocabulary (vocab_only skips the tensors)
    w.add_context_length(64)
    w.add_embedding_length(8)
    w.add_block_count(1)
    w.add_feed_forward_length(16)
    w.add_head_count(1)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-4o")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(["h e"])
    for k, text in keys.items():
        w.add_uint32(KEYS[k], tokens.index(text))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = sys.argv[1]
    for name, specials, keys in VARIANTS:
        write(os.path.join(out, name + ".gguf"), specials, keys)


if __name__ == "__main__":
    main()
