/* gguf-run's parts: options, the start-up report, and the outputs. */
#ifndef GGUFSCOPE_TOOLS_RUN_H
#define GGUFSCOPE_TOOLS_RUN_H

#include "color.h"
#include "engine.h"

#include <stdio.h>

typedef struct run_opts {
    const char *model, *prompt, *backend, *logits_out, *trace_file;
    const char *prompt_file;  /* -f FILE, else NULL */
    const char *compare[2];   /* --compare A,B: the two backends, else NULL */
    const char *fault;        /* --debug-fault: the deliberate bug, in the run's backend or compare side B */
    const char *chat_template; /* --chat-template NAME: the chat format to use, else NULL (the file's own) */
    int n_predict, n_threads, n_ctx;
    int spot_rows;            /* lm_head rows spot-checked per forward pass (0: off) */
    float tolerance;          /* --compare: relative difference that counts as a divergence */
    engine_sampler_params sampler;
    bool json, tokenize, trace, smoke, quiet;
    bool dry_run;             /* --dry-run: load, say what the run would hold, stop */
    bool chat;                /* --chat: the prompt is one user message in the model's chat format */
    bool special;             /* --special: special-token text in a plain prompt becomes the token */
    color_mode color;         /* --color */
    const char *against;      /* --against THEIRS.json: another engine's trace to hold ours to */
    const char *plot;         /* --plot F.svg */
    const char *against_logits; /* --against-logits THEIRS.npy: their prompt logits (n_prompt, n_vocab) */
    const char *against_full; /* --against DUMP (.npz, .safetensors, a folder of .npy): their hidden states whole */
    const char *trace_full;   /* --trace-full=F.npz|.safetensors: ours whole */
    bool trace_full_ops;      /* --trace-full-ops: every op's output too, under llama.cpp's names */
    struct tensor_dump *against_dump; /* the dump --against names, read before the run (NULL: unreadable) */
    char against_dump_why[600];
    kern_numerics numerics;   /* --numerics: how the CPU backend rounds activations */
    struct cJSON *against_doc; /* it, parsed */
    bool n_predict_given;     /* -n was given (else --against takes their greedy length) */
    bool tokens_from_against; /* --tokens-from: run their prompt_tokens as they are */
    bool tolerance_given;     /* --tolerance was given (else --against may take the architecture's) */
    const char *tolerance_why; /* why the tolerance is not the default, for the report (NULL: it is) */
    float massive_tolerance;  /* > 0: the tolerance at positions carrying massive activations (gemma) */
} run_opts;

/* The command line into o (options.c): 0, or the exit status after a message (--help and --version exit). */
int run_parse_args(int argc, char **argv, run_opts *o);

/* The batch gguf-run's contexts are made for. */
#define RUN_MAX_BATCH 256

/* What a run will hold (memory.c). */
typedef struct run_memory {
    uint64_t loaded;          /* private bytes with the model and vocabulary loaded, before the context */
    engine_ctx_memory ctx;    /* what the context will allocate */
    int n_ctx;
} run_memory;
engine_status run_memory_measure(run_memory *rm, const engine_model *m, int n_ctx, engine_error *e);
/* The private bytes expected once `positions` have been used with batches of at most `batch` tokens: the pages
 * the context's buffers commit for them, as the CPU backend allocates them. */
uint64_t run_memory_expected(const run_memory *rm, int positions, int batch);
/* --dry-run: ours, then llama.cpp's CPU buffers for the same context; returns the exit status. */
int run_memory_dry_run(FILE *out, const gguf_file *f, const run_memory *rm, const char *label, bool json);

/* Everything a finished run produced, for the reports. */
typedef struct run_result {
    const run_opts *o;
    const engine_model *model;
    const tok_vocab *vocab;
    const int32_t *prompt;
    size_t n_prompt;
    engine_gen_result gen;
    const engine_trace *trace;
    engine_verdict verdict;
    char *text;            /* the continuation, valid UTF-8 */
    uint64_t bytes_per_token;
    uint64_t ctx_bytes;        /* KV cache + activations */
    uint64_t private_bytes;    /* resident anonymous memory at the end */
    uint64_t expected_bytes;   /* run_memory_expected for the positions the run reached (0: not estimated) */
    uint64_t expected_full_bytes; /* ... and for a full context */
    int positions, n_ctx;      /* the positions the run reached, of its context's */
    int exit_status;           /* what the run exits with (the JSON document says it too) */
} run_result;

/* --against (against.c): loads their trace (prompt and length from it unless given); checks their prompt tokens
 * are ours (else prints both: exit 2); compares the traces, printing the grid; returns 0 agree, 1 departs. */
int run_against_load(run_opts *o, char *why, size_t why_len);
int run_against_tokens(const run_opts *o, const int32_t *ids, size_t n);
/* --tokens-from: their prompt_tokens as ids of an n_vocab vocabulary (malloc'd); 2 with the reason when unusable. */
int run_against_their_tokens(const run_opts *o, int32_t **ids, size_t *n, int n_vocab, char *why, size_t why_len);
/* What the comparisons found together: the exit status (0 agree, 1 depart, 2 cannot compare), the first departure
 * (the earliest layer; for --plot) in words, and what each part said (-1: not run). */
typedef struct run_against_result {
    int rc, mark_layer, mark_pos;
    int layers_rc, full_rc, logits_rc;
    char summary[200];
} run_against_result;
/* Folds one part's finding into res: a departure at an earlier layer (or one after none) becomes the summary. */
void run_against_merge(run_against_result *res, int rc, int layer, int pos, const char *summary);
/* The layers' statistics (--against THEIRS.json), into res. */
int run_against_report(FILE *out, const run_opts *o, const run_result *r, run_against_result *res);
/* Reads --against's dump and has the trace keep every op it names (whole tensors of ours to compare with), and
 * --trace-full-ops's; before the run. A dump that cannot be read is said by run_against_full. */
void run_against_full_prepare(run_opts *o, engine_trace *trace, const engine_hparams *hp);
/* Their hidden states whole (--against DUMP), element by element against ours (kept by the trace), into res. */
int run_against_full(FILE *out, const run_opts *o, const run_result *r, run_against_result *res);
/* --against-logits: their prompt logits against ours ((n_prompt, n_vocab), a leading batch axis of 1 dropped; f16,
 * bf16, f32 or f64), into res. */
int run_against_logits(FILE *out, const run_opts *o, const float *ours, size_t n_prompt, int n_vocab,
                       run_against_result *res);
/* Marks in massive[0..n_pos) the positions whose row RMS (rms) is over 4 times the layer's median, and the
 * position after each, where o->massive_tolerance > 0 (gemma: its GELU table's steps magnify the order of
 * summation there; those positions are held by their RMS alone, to that tolerance). */
void run_mark_massive(const run_opts *o, const double *rms, int n_pos, bool *massive);
/* The one final verdict line over every part that ran; its word matches res->rc. */
void run_against_verdict(FILE *out, const run_opts *o, const run_against_result *res);
/* --trace-full: ours whole (l_out-N, result_norm: n_prompt x n_embd each) as .npz or .safetensors. */
int run_write_trace_full(const char *path, const run_result *r, char *why, size_t why_len);
/* --plot F.svg (plot.c): RMS after every layer across the prompt positions, theirs dashed when given (their
 * prompt_trace), the first departure ringed (mark_layer -1: none); written atomically. */
int run_write_plot(const char *path, const run_result *r, const struct cJSON *theirs_trace, int mark_layer,
                   int mark_pos, char *err, size_t err_len);
/* --compare with --plot: both backends' lines (A solid, B dashed) over prompt and decode, the first divergence
 * ringed at its layer. */
int run_write_compare_plot(const char *path, const engine_comparison *c, const char *legend, char *err,
                           size_t err_len);

/* The backends by name: for messages. */
#define RUN_BACKEND_NAMES "cpu, cpu:ggml, cuda"
/* Whether name is one of them ("cpu:exact" is "cpu"). */
bool run_backend_known(const char *name);
/* A backend by name ("cpu", "cpu:ggml", "cuda"), wrapped in the debug fault when one is
 * named. NULL with the reason in why. */
kern_backend *run_backend_create(const char *name, int n_threads, const char *fault, char *why, size_t why_len);

/* --compare: both backends on the prompt and -n greedy steps, every op
 * compared; the report on stdout (text or JSON). Returns the exit status. */
int run_compare(const run_opts *o, const gguf_file *f, const int32_t *ids, size_t n_ids, int n_ctx);

/* --chat: the prompt as one user message in the chat format (--chat-template's, else the one
 * tokenizer.chat_template is recognized as); *text malloc'd, *family its name. Returns 0, or
 * the exit status (2) after saying why on stderr. */
int run_chat_prompt(const run_opts *o, const gguf_file *f, char **text, const char **family);

/* Start-up report on stderr: the model and the choices made for it. */
void run_print_setup(FILE *out, const gguf_file *f, const engine_model *m, const tok_vocab *v,
                     const run_opts *o, int n_ctx);
/* The end-of-run summary (timings, verdict) on stderr. */
void run_print_summary(FILE *out, const run_result *r);
/* Prompt and generation tokens/s; the smoke verdict's line as the exit status reads it (buf: room for a rewording). */
void run_rates(const run_result *r, double *pps, double *gps);
const char *run_verdict_line(const run_result *r, char *buf, size_t len);
/* The aligned trace tables. */
void run_print_trace(FILE *out, const run_result *r);
/* The --json document (stdout). Returns 0, or -1 when out of memory. */
int run_print_json(FILE *out, const run_result *r);
/* --trace=F: the trace as JSON, written atomically. */
int run_write_trace_json(const char *path, const run_result *r, char *err, size_t err_len);
struct cJSON;
/* A JSON number, or null for NaN/Inf (which JSON cannot hold). */
struct cJSON *run_json_number(double v);
/* The piece of a token as text for tables ("'\n'" escaped, control tokens by name). */
void run_token_label(const tok_vocab *v, int32_t id, char *buf, size_t cap);

#endif
