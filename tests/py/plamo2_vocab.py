"""A vocabulary as convert_hf_to_gguf.py's _set_vocab_plamo writes one (tokenizer.ggml.model "plamo2", pre "default":
the entries of PLaMo's tokenizer.jsonl with their scores and types, its <|plamo:*|> tokens CONTROL and <|plamo:unk|>
UNKNOWN, the 256 <0xXX> byte tokens BYTE, the pieces NORMAL, [PADn] fillers scored -1000 UNUSED where the config's
vocab_size asks for more; bos, eos, pad and unk ids, eot 4). Its pieces are learned from the license texts every
Debian system carries, as gemma4_vocab.py's (spaces as themselves: PLaMo's pieces hold them), scored down the order
they were learned in, with a few CJK pieces and a piece whose score equals its halves' (the longest entry wins a tie).
Deterministic.

    from plamo2_vocab import add_plamo2_vocab; add_plamo2_vocab(writer, n_vocab)
    plamo2_vocab.py OUT.gguf [B]  (a vocabulary-only plamo3 file, for llama.cpp's tok.c; B: byte B's token typed
                                  NORMAL, not BYTE, which llama.cpp's loader refuses)"""
import os
import sys

SPECIALS = [('<|plamo:unk|>', 2), ('<|plamo:bos|>', 3), ('<|plamo:eos|>', 3), ('<|plamo:pad|>', 3),
            ('<|plamo:op|>', 3)]
# pieces the license texts lack, with scores (a multiple of 1e-3 each, so that sums round as the table rounds them)
EXTRA = [('日本', -6.5), ('日本語', -7.0), ('語', -8.0), ('の', -5.5), ('テキスト', -7.5), ('テ', -9.0), ('キ', -9.0),
         ('ス', -9.0), ('ト', -9.0), ('中文', -7.25), ('字符', -7.75), ('你好', -8.5), ('世界', -8.25)]


def plamo2_vocab(n_vocab, n_pad=2, not_byte=None):
    from gemma4_vocab import SPACE, train
    toks = [t for t, _ in SPECIALS]
    types = [k for _, k in SPECIALS]
    scores = [0.0] * len(toks)
    toks += [f'<0x{b:02X}>' for b in range(256)]
    types += [1 if b == not_byte else 6 for b in range(256)]
    scores += [0.0] * 256
    seen = set(toks)

    def add(piece, score):
        seen.add(piece)
        toks.append(piece)
        types.append(1)
        scores.append(score)

    chars, merges = train(n_vocab)
    for k, c in enumerate(chars):
        c = c.replace(SPACE, ' ')
        if c not in seen and (c.isprintable() or c == ' ') and len(toks) < n_vocab // 3:
            add(c, round(-4.0 - 0.01 * k, 3))
    for piece, score in EXTRA:
        add(piece, score)
    # a tie: 'qz' costs what 'q' and 'z' cost apart
    sq = scores[toks.index('q')] if 'q' in seen else -5.0
    sz = scores[toks.index('z')] if 'z' in seen else -5.0
    for piece, score in (('q', sq), ('z', sz)):
        if piece not in seen:
            add(piece, score)
    add('qz', round(sq + sz, 3))
    for k, (a, b) in enumerate(merges):
        piece = (a + b).replace(SPACE, ' ')
        if len(toks) >= n_vocab - n_pad - 1:
            break
        if piece not in seen:
            add(piece, round(-3.0 - 0.004 * k - 0.5 * len(piece) ** 0.5, 3))
    while len(toks) < n_vocab:
        toks.append(f'[PAD{len(toks) - (n_vocab - n_pad) + 1}]')
        types.append(5)
        scores.append(-1000.0)
    return toks, types, scores


def add_plamo2_vocab(w, n_vocab, not_byte=None):
    toks, types, scores = plamo2_vocab(n_vocab, not_byte=not_byte)
    w.add_tokenizer_model('plamo2')
    w.add_tokenizer_pre('default')
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(toks.index('<|plamo:bos|>'))
    w.add_eos_token_id(toks.index('<|plamo:eos|>'))
    w.add_pad_token_id(toks.index('<|plamo:pad|>'))
    w.add_unk_token_id(toks.index('<|plamo:unk|>'))
    w.add_eot_token_id(4)  # <|plamo:op|>, as the converter writes it


if __name__ == '__main__':
    here = os.path.dirname(os.path.abspath(__file__))  # and synth_model.py in ../shared/tools, as heldout_arch.py
    sys.path[0:0] = [here, os.path.join(here, '..', '..', '..', 'shared', 'tools')]
    from plamo3_arch import write_plamo3
    write_plamo3(sys.argv[1], vocab='plamo2', weights=False, not_byte=int(sys.argv[2]) if len(sys.argv) > 2 else None)
