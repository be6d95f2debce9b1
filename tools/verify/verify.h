/* gguf-verify's shared state: what was checked and what was found. */
#ifndef GGUFSCOPE_VERIFY_H
#define GGUFSCOPE_VERIFY_H

#include "audit.h"
#include "color.h"
#include "gguf.h"

#include <stdio.h>

typedef struct verify_opts {
    const char *path;
    const char *manifest;        /* --manifest FILE */
    const char *sha256;          /* --sha256 HEX */
    const char *write_manifest;  /* --write-manifest[=FILE]: "-" is stdout */
    const char *repair_from;     /* --repair-from URL */
    const char *repair_to;       /* --repair-to FILE (default: FILE.repaired.gguf beside it) */
    bool uuid;                   /* --uuid */
    unsigned hashes;             /* --hashes LIST; 0: the default for the task */
    bool no_audit, json;
    bool strict;                 /* --strict: warnings fail the file too */
    color_mode color;            /* --color */
    int threads;
} verify_opts;

typedef enum verdict { VERDICT_OK = 0, VERDICT_PROBLEMS = 1, VERDICT_CANNOT_CHECK = 2 } verdict;

typedef struct verify_result {
    const verify_opts *o;
    gguf_file *f;                /* NULL when the file could not be opened */
    gguf_error open_err;         /* why it could not be opened, or why it is truncated */
    uint64_t missing_bytes;      /* a truncated file (opened with gguf_open_partial): what it lacks */
    uint64_t file_size;
    gguf_coverage cov;
    gguf_hashes hashes;
    bool hashed;
    unsigned tensor_kinds, model_kinds;
    double hash_seconds, audit_seconds;
    gguf_digest sha256;          /* of the whole file, when asked */
    bool sha256_checked, sha256_ok;
    gguf_manifest *manifest;
    gguf_check_report check;
    bool manifest_checked;
    audit_stats *stats;          /* (n_tensors) when audited */
    audit_report audit;
    bool audited;
    audit_findings integrity;    /* structure, coverage, checksums */
    verdict verdict;
    char trouble[GGUF_ERROR_MESSAGE_SIZE + 512]; /* why the file cannot be checked (a manifest's path, then a message) */
    /* a URL: read by range requests, its header and its one-dimensional tensors only */
    bool remote;
    uint64_t remote_read, remote_size, remote_unread_bytes;
    unsigned remote_requests;
    size_t remote_fetched, remote_unread;
} verify_result;

/* Structure, coverage, sha256 and manifest findings; returns false on trouble (fills r->trouble).
 * extra_kinds are digests to compute besides the ones the checks need (for --write-manifest=F). */
bool verify_integrity(verify_result *r, unsigned extra_kinds);

/* gguf-run's (llama.cpp's) load checks: an error finding "refused" when it would refuse the file as
 * malformed, a note when it cannot run it (engine_check.c). */
void verify_engine_check(verify_result *r);

/* The metadata that breaks generation though the file loads: pre-tokenizer, special-token ids, the chat
 * template's end of turn, BOS, a missing template (generation_check.c). */
void verify_generation_check(verify_result *r);

/* The role table's rows, at most: a model has a few dozen roles; a file of a million oddly named tensors has a
 * role each, and the report stays the size of what it says (the rest counted, not listed). */
enum { VERIFY_ROLES_SHOWN = 256 };

/* Findings of a severity, the integrity's and the audit's. */
size_t verify_count(const verify_result *r, audit_severity sev);
/* The verdict's word: OK, WARNINGS (warnings alone: exit 0 unless --strict), PROBLEMS, CANNOT CHECK. */
const char *verify_verdict_name(const verify_result *r);

void verify_print_text(FILE *out, const verify_result *r);
/* --repair-from: re-reads from url the tensors the manifest check found damaged (or a truncated file lacks) into
 * a copy written atomically to out, then checks that copy against the manifest; a line on report. Returns 0 when
 * the copy matches, 1 when it still does not, 2 when it could not be made (said on stderr). */
int verify_repair(verify_result *r, const char *url, const char *out, FILE *report);
int verify_print_json(FILE *out, const verify_result *r);

#endif
