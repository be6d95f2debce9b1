"""A vocabulary as convert_hf_to_gguf.py's Gemma4Model writes one (tokenizer.ggml.model "gemma4": BPE with merges over
the text's own characters, spaces as U+2581, <0xXX> byte tokens for what no merge reaches, no pre-tokenizer key, BOS
added, no space prefix), learned from the license texts every Debian system carries, as synth_model.py's vocabularies
are. Deterministic.

    from gemma4_vocab import add_gemma4_vocab; add_gemma4_vocab(writer, n_vocab)
    gemma4_vocab.py OUT.gguf      (a vocabulary-only gemma4 file, for llama.cpp's tok.c)"""
import os
import re
import sys
from collections import Counter

SPACE = '\u2581'
# Gemma 4's own control and user-defined tokens (the converter makes the chat markers USER_DEFINED)
SPECIALS = [('<pad>', 3), ('<eos>', 3), ('<bos>', 3), ('<unk>', 2), ('<start_of_turn>', 3), ('<end_of_turn>', 3),
            ('<|channel>', 4), ('<channel|>', 4)]


def train(n_merges):
    """Merges learned over words that start at a space (its U+2581 kept), and the characters they start from."""
    from synth_model import CORPUS
    text = ' '.join(open(f, encoding='utf-8', errors='replace').read() for f in CORPUS).replace(' ', SPACE)
    words = Counter(re.findall(SPACE + '?[^' + SPACE + '\\s]+|' + SPACE + '+', text))
    chars = Counter()
    for w, n in words.items():
        for c in w:
            chars[c] += n
    seqs = {w: list(w) for w in words}
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        for w in words:
            s, i, out = seqs[w], 0, []
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    return sorted(chars, key=lambda c: (-chars[c], c)), merges


def gemma4_vocab(n_vocab):
    toks, types = [t for t, _ in SPECIALS], [k for _, k in SPECIALS]
    toks += [f'<0x{b:02X}>' for b in range(256)]
    types += [6] * 256
    toks += ['\n', '\n\n', '\n\n\n']  # runs of line breaks are tokens of their own
    types += [1, 1, 1]
    chars, merges = train(n_vocab)
    seen = set(toks)
    for c in chars:
        if len(toks) < n_vocab and c not in seen and c.isprintable():
            seen.add(c)
            toks.append(c)
            types.append(1)
    kept = []
    for a, b in merges:
        if len(toks) >= n_vocab:
            break
        if a in seen and b in seen and a + b not in seen:
            seen.add(a + b)
            toks.append(a + b)
            types.append(1)
            kept.append(f'{a} {b}')
    while len(toks) < n_vocab:
        toks.append(f'<unused{len(toks)}>')
        types.append(5)
    return toks, types, kept


def add_gemma4_vocab(w, n_vocab):
    toks, types, merges = gemma4_vocab(n_vocab)
    w.add_tokenizer_model('gemma4')
    w.add_token_list(toks)
    w.add_token_scores([0.0] * len(toks))
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(toks.index('<bos>'))
    w.add_eos_token_id(toks.index('<eos>'))
    w.add_unk_token_id(toks.index('<unk>'))
    w.add_pad_token_id(toks.index('<pad>'))
    w.add_add_space_prefix(False)
    w.add_add_bos_token(True)


if __name__ == '__main__':
    here = os.path.dirname(os.path.abspath(__file__))  # and synth_model.py in ../shared/tools, as heldout_arch.py
    sys.path[0:0] = [here, os.path.join(here, '..', '..', '..', 'shared', 'tools')]
    from gemma4_arch import write_gemma4
    write_gemma4(sys.argv[1], vocab='gemma4', weights=False)
