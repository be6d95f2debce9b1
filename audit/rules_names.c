/* Names that deceive: a metadata key or tensor name holding characters that display as nothing (zero-width
 * spaces, bidi controls, tags) prints exactly like another name. A file with 'general.architecture' and
 * 'general.architecture' + U+200B shows one key twice with two values; an engine reads one, a person checks
 * the other. GGUF keys are ASCII by the format's own rule (docs/gguf.md: "It must be a valid ASCII string"). */
#include "rules.h"

#include <stdlib.h>
#include <string.h>

/* name without its invisible code points (joiners included), malloc'd; NULL when it has none (or no memory). */
static char *visible_form(const char *name)
{
    size_t len = strlen(name), o = 0;
    char *out = malloc(len + 1);
    bool dropped = false;
    for (size_t i = 0; out && i < len;) {
        uint32_t cp;
        size_t n = gguf_utf8_next(name + i, len - i, &cp);
        if (n && gguf_codepoint_invisible(cp, true)) {
            dropped = true;
        } else {
            n = n ? n : 1;
            memcpy(out + o, name + i, n);
            o += n;
        }
        i += n;
    }
    if (!out || !dropped) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    return out;
}

static bool is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80 || (unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

/* The name a key or tensor displays as, when that is another one's: an error naming both. */
static void confusable(findings *fs, const char *kind, const char *name, const char *looks_like)
{
    audit_finding *x = finding_add(fs, AUDIT_ERROR, "name-confusable", name);
    if (!x)
        return;
    FSET(x->measured, "%s '%s' holds characters that display as nothing: it prints as '%s'", kind, name, looks_like);
    FSET(x->expected, "names that look different when they are different");
    FSET(x->meaning, "a reader asking for '%s' and a person reading the listing see different entries: a spoofed "
                     "%s hides a value from inspection", looks_like, kind);
}

static void key_rules(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    for (size_t i = 0; i < gguf_kv_count(f); i++) {
        const char *key = gguf_kv_at(f, i)->key;
        if (is_ascii(key))
            continue;
        char *shown = visible_form(key);
        const size_t arch_len = strlen(hp->g.arch_name);
        const bool known_family = shown && (!strncmp(shown, "general.", 8) || !strncmp(shown, "tokenizer.", 10) ||
                                            (arch_len && !strncmp(shown, hp->g.arch_name, arch_len)));
        if (shown && (gguf_find_kv(f, shown) || known_family)) {
            confusable(fs, "key", key, shown);
        } else {
            audit_finding *x = finding_add(fs, AUDIT_WARNING, "key-not-ascii", key);
            if (x) {
                FSET(x->measured, "key '%s' holds bytes outside printable ASCII", key);
                FSET(x->expected, "ASCII keys (the GGUF format's rule)");
                FSET(x->meaning, "llama.cpp and gguf-py read it, but no converter writes such a key: an edited or "
                                 "hand-made file");
            }
        }
        free(shown);
    }
}

static void tensor_rules(const gguf_file *f, findings *fs)
{
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const char *name = gguf_tensor_at(f, i)->name;
        if (is_ascii(name))
            continue;
        char *shown = visible_form(name);
        int64_t layer;
        if (shown && (gguf_tensor_by_name(f, shown) || model_role_of_name(shown, &layer) != MODEL_ROLE_COUNT))
            confusable(fs, "tensor", name, shown);
        free(shown);
    }
}

void rules_names(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    key_rules(f, hp, fs);
    tensor_rules(f, fs);
}
