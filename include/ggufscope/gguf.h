/*
 * gguf.h — the GGUF file format: open (mmap, validate), metadata, tensor views,
 * writer and the ggml type table.
 *
 * Contract for every function here: nothing prints, exits or aborts. Functions
 * that can fail return a gguf_status (GGUF_OK == 0) and, when given a non-NULL
 * gguf_error, fill it with the code, the byte offset in the file the problem
 * concerns, the key or tensor name, and a sentence for a human.
 *
 * Format facts follow the GGUF specification (ggml/docs/gguf.md) and the
 * reference reader in ggml/src/gguf.cpp; no code is taken from either.
 */
#ifndef GGUFSCOPE_GGUF_H
#define GGUFSCOPE_GGUF_H

#include "export.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGUF_MAGIC_BYTES "GGUF"
#define GGUF_ALIGNMENT_DEFAULT 32u
#define GGUF_MAX_DIMS 4
#define GGUF_MAX_ARRAY_DEPTH 8        /* nested arrays deeper than this are refused */
#define GGUF_LLAMA_CPP_MAX_NAME 63    /* llama.cpp's GGML_MAX_NAME (64) minus the NUL */

/* ---- status codes ------------------------------------------------------ */

typedef enum gguf_status {
    GGUF_OK = 0,
    GGUF_E_IO,               /* open/stat/mmap/write failed (errno in message) */
    GGUF_E_NOMEM,
    GGUF_E_INVALID_ARG,      /* caller error, never caused by file contents */
    GGUF_E_BAD_MAGIC,
    GGUF_E_BIG_ENDIAN,       /* a byte-swapped file: recognised, not readable */
    GGUF_E_VERSION,          /* version 1 or unknown */
    GGUF_E_TRUNCATED,        /* a header field runs past the end of the file */
    GGUF_E_TENSOR_COUNT,     /* more tensors than the remaining bytes could describe */
    GGUF_E_KV_COUNT,         /* more key/value pairs than the remaining bytes could hold */
    GGUF_E_STRING_LENGTH,    /* a string's length runs past the end of the file */
    GGUF_E_VALUE_TYPE,       /* a metadata value type id that GGUF does not define */
    GGUF_E_ARRAY_TYPE,       /* an array element type id that GGUF does not define */
    GGUF_E_ARRAY_COUNT,      /* an array longer than the remaining bytes could hold */
    GGUF_E_ARRAY_DEPTH,      /* arrays nested deeper than GGUF_MAX_ARRAY_DEPTH */
    GGUF_E_EMPTY_KEY,
    GGUF_E_DUPLICATE_KEY,
    GGUF_E_EMPTY_NAME,       /* empty tensor name */
    GGUF_E_DUPLICATE_NAME,   /* duplicate tensor name */
    GGUF_E_NUL_IN_NAME,      /* a key or tensor name containing a NUL byte */
    GGUF_E_N_DIMS,           /* 0 or more than 4 dimensions */
    GGUF_E_ZERO_DIM,
    GGUF_E_ELEMENT_OVERFLOW, /* product of the dims does not fit in int64 */
    GGUF_E_SIZE_OVERFLOW,    /* byte size, offset + size or padding overflows */
    GGUF_E_UNKNOWN_TYPE,
    GGUF_E_REMOVED_TYPE,
    GGUF_E_BLOCK_MULTIPLE,   /* first dim not a multiple of the type's block size */
    GGUF_E_MISALIGNED,       /* tensor offset not a multiple of the alignment */
    GGUF_E_DATA_PAST_END,    /* tensor data runs past the end of the file */
    GGUF_E_OVERLAP,          /* two tensors share bytes */
    GGUF_E_ALIGNMENT,        /* general.alignment not a non-zero power of two (or not u32) */
    GGUF_E_KEY_NOT_FOUND,
    GGUF_E_KEY_TYPE,         /* typed getter on a value of another type */
    GGUF_E_TENSOR_NOT_FOUND,
    GGUF_E_SPLIT,            /* a split model's shard is missing, extra, another model's, or inconsistent */
    /* files that are not GGUF, named for what they are (a failed download, an archive, another format) */
    GGUF_E_EMPTY_FILE,       /* 0 bytes */
    GGUF_E_LFS_POINTER,      /* a git LFS pointer: the clone never fetched the model */
    GGUF_E_WEB_PAGE,         /* an HTML, XML or JSON page saved in place of the file */
    GGUF_E_FOREIGN_FORMAT,   /* an archive, safetensors, a pickle */
    GGUF_STATUS_COUNT
} gguf_status;

/* Short stable identifier of a status ("GGUF_E_OVERLAP"), for logs and JSON. */
GGUFSCOPE_API const char *gguf_status_name(gguf_status s);
/* The version of the installed library ("0.1.0"). */
GGUFSCOPE_API const char *ggufscope_library_version(void);

/* Every layer's error record carries its subject and message in these sizes (gguf_error_textv fills them); a message
 * may list every architecture's name (model_arch_names), so it has room for a few hundred more than today's. */
#define GGUF_ERROR_SUBJECT_SIZE 256
#define GGUF_ERROR_MESSAGE_SIZE 1536

typedef struct gguf_error {
    gguf_status code;
    uint64_t offset;        /* byte offset in the file the problem concerns */
    char subject[GGUF_ERROR_SUBJECT_SIZE];      /* key or tensor name, "" when none */
    char message[GGUF_ERROR_MESSAGE_SIZE];      /* one or two sentences: what is wrong and what it means */
} gguf_error;

/* Fills err (when not NULL) with code, offset, subject and the formatted
 * message, and returns code: how every layer that reports in gguf_error's
 * terms (the reader, the writer, quant's model writer) sets one. */
GGUFSCOPE_API gguf_status gguf_fail(gguf_error *err, gguf_status code, uint64_t offset, const char *subject,
                                    const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The text half of an error record, for the layers above whose records share gguf_error's subject and
 * message sizes (model_error, the tokenizer's and the engine's): subject copied ("" for NULL), message
 * formatted, both truncated to fit. */
GGUFSCOPE_API void gguf_error_textv(char subject[GGUF_ERROR_SUBJECT_SIZE], char message[GGUF_ERROR_MESSAGE_SIZE],
                                    const char *subj, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* Bytes [p, p+n) from a file as text for a message: printable ASCII, whitespace runs as one space, any other
 * byte '?', cut with "..." to fit out (cap >= 8 bytes, NUL included). */
GGUFSCOPE_API void gguf_excerpt(const void *p, size_t n, char *out, size_t cap);

/* Grows *items (of *cap elements of elem bytes) to hold at least need, doubling; false (nothing changed)
 * when memory or size_t runs out. The one growable array every layer uses. */
GGUFSCOPE_API bool gguf_reserve(void **items, size_t *cap, size_t need, size_t elem);
/* Whether s[0..len) could name an architecture, tokenizer or pre-tokenizer: 1 to 64 of [A-Za-z0-9_.-]. A
 * name that could is "not supported" (trouble); one that could not is a malformed file. */
GGUFSCOPE_API bool gguf_is_identifier(const char *s, size_t len);

/* Things the GGUF spec allows but llama.cpp refuses: reported, not fatal. */
typedef enum gguf_warning_kind {
    GGUF_W_GAP,          /* bytes between tensors beyond alignment padding */
    GGUF_W_REORDER,      /* tensor data not in the order of the tensor infos */
    GGUF_W_LONG_NAME,    /* tensor name longer than llama.cpp accepts */
} gguf_warning_kind;

typedef struct gguf_warning {
    gguf_warning_kind kind;
    uint64_t offset;
    char subject[GGUF_ERROR_SUBJECT_SIZE];
    char message[512];   /* starts with "llama.cpp would refuse this file because" */
} gguf_warning;

/* ---- the ggml type table ---------------------------------------------- */

typedef enum gguf_type_state {
    GGUF_TYPE_OK,        /* a type ggml can store in a file today */
    GGUF_TYPE_REMOVED,   /* an id ggml defined once and removed from files */
    GGUF_TYPE_UNKNOWN,   /* an id ggml has never defined (as of this build) */
} gguf_type_state;

typedef struct gguf_type_traits {
    const char *name;        /* as ggml names it: "F32", "Q4_K", "IQ2_XXS" */
    uint32_t block_size;     /* elements per block (1 for plain types) */
    uint32_t type_size;      /* bytes per block */
    gguf_type_state state;
    bool quantized;
} gguf_type_traits;

enum {
    GGUF_TENSOR_F32 = 0, GGUF_TENSOR_F16 = 1, GGUF_TENSOR_Q4_0 = 2, GGUF_TENSOR_Q4_1 = 3,
    GGUF_TENSOR_Q5_0 = 6, GGUF_TENSOR_Q5_1 = 7, GGUF_TENSOR_Q8_0 = 8, GGUF_TENSOR_Q8_1 = 9,
    GGUF_TENSOR_Q2_K = 10, GGUF_TENSOR_Q3_K = 11, GGUF_TENSOR_Q4_K = 12, GGUF_TENSOR_Q5_K = 13,
    GGUF_TENSOR_Q6_K = 14, GGUF_TENSOR_Q8_K = 15, GGUF_TENSOR_IQ2_XXS = 16, GGUF_TENSOR_IQ2_XS = 17,
    GGUF_TENSOR_IQ3_XXS = 18, GGUF_TENSOR_IQ1_S = 19, GGUF_TENSOR_IQ4_NL = 20, GGUF_TENSOR_IQ3_S = 21,
    GGUF_TENSOR_IQ2_S = 22, GGUF_TENSOR_IQ4_XS = 23, GGUF_TENSOR_I8 = 24, GGUF_TENSOR_I16 = 25,
    GGUF_TENSOR_I32 = 26, GGUF_TENSOR_I64 = 27, GGUF_TENSOR_F64 = 28, GGUF_TENSOR_IQ1_M = 29,
    GGUF_TENSOR_BF16 = 30, GGUF_TENSOR_TQ1_0 = 34, GGUF_TENSOR_TQ2_0 = 35, GGUF_TENSOR_MXFP4 = 39,
    GGUF_TENSOR_NVFP4 = 40, GGUF_TENSOR_Q1_0 = 41,
    GGUF_TENSOR_COUNT = 42
};

/* A byte count for humans ("4.20 MiB", "512 B") into buf. */
GGUFSCOPE_API void gguf_format_size(uint64_t bytes, char *buf, size_t n);

/* Traits of a type id. Never NULL: ids past the table give an UNKNOWN record. */
GGUFSCOPE_API const gguf_type_traits *gguf_type_traits_of(uint32_t type_id);
/* Type id for a ggml name ("q4_k" or "Q4_K"), or -1. */
GGUFSCOPE_API int gguf_type_from_name(const char *name);

/* ---- metadata values --------------------------------------------------- */

typedef enum gguf_value_type {
    GGUF_VT_UINT8 = 0, GGUF_VT_INT8 = 1, GGUF_VT_UINT16 = 2, GGUF_VT_INT16 = 3,
    GGUF_VT_UINT32 = 4, GGUF_VT_INT32 = 5, GGUF_VT_FLOAT32 = 6, GGUF_VT_BOOL = 7,
    GGUF_VT_STRING = 8, GGUF_VT_ARRAY = 9, GGUF_VT_UINT64 = 10, GGUF_VT_INT64 = 11,
    GGUF_VT_FLOAT64 = 12,
    GGUF_VT_COUNT = 13
} gguf_value_type;

/* "u32", "string", "array", …; "?" for an invalid id. */
GGUFSCOPE_API const char *gguf_value_type_name(uint32_t vt);
/* Bytes of one scalar element in the file; 0 for string and array. */
GGUFSCOPE_API size_t gguf_value_type_size(uint32_t vt);

/* A string inside the mapping: not NUL-terminated, may hold any bytes. */
typedef struct gguf_str {
    const char *ptr;
    uint64_t len;
} gguf_str;

typedef struct gguf_value {
    gguf_value_type type;
    gguf_value_type elem_type;   /* arrays only */
    uint64_t count;              /* arrays only: number of elements */
    union {
        uint64_t u64;            /* UINT8..UINT64 */
        int64_t i64;             /* INT8..INT64 */
        double f64;              /* FLOAT32 (widened exactly), FLOAT64 */
        bool b;                  /* BOOL */
        gguf_str str;            /* STRING */
        const uint8_t *raw;      /* array of scalars: count little-endian elements in the mapping */
        const gguf_str *strs;    /* array of strings: count views */
        const struct gguf_value *items; /* array of arrays: count values */
    } v;
} gguf_value;

/* Element i of an array of scalars as a scalar value (type = elem_type).
 * Returns GGUF_E_INVALID_ARG when arr is not such an array or i is out of range. */
GGUFSCOPE_API gguf_status gguf_array_scalar(const gguf_value *arr, uint64_t i, gguf_value *out);

typedef struct gguf_kv {
    const char *key;       /* NUL-terminated copy */
    gguf_value value;
    uint64_t offset;       /* byte offset of the key/value pair in the file */
} gguf_kv;

/* ---- tensors ------------------------------------------------------------ */

typedef struct gguf_tensor {
    const char *name;            /* NUL-terminated copy */
    uint32_t n_dims;             /* 1..4 */
    uint64_t ne[GGUF_MAX_DIMS];  /* GGUF order: ne[0] is the innermost (row length); unused dims are 1 */
    uint32_t type;               /* ggml type id */
    uint64_t offset;             /* from the start of the data section */
    uint64_t size;               /* bytes of data */
    uint64_t n_elements;
    uint64_t info_offset;        /* byte offset of this tensor's info record in the file */
    uint32_t shard;              /* a split model: the shard (from 0) holding it, offsets being that file's */
    const uint8_t *data;         /* view into the mapping (or buffer); never copied. NULL only in a truncated
                                    file opened by gguf_open_partial, for a tensor whose bytes are not all there */
} gguf_tensor;

/* ---- an opened file ----------------------------------------------------- */

typedef struct gguf_file gguf_file;

/* Opens path read-only with mmap and validates everything. On failure returns
 * the status, fills err and sets *out to NULL. The file is never written. */
GGUFSCOPE_API gguf_status gguf_open(const char *path, gguf_file **out, gguf_error *err);
/* gguf_open for a file that may be a truncated download: one whose metadata and tensor table are whole but
 * whose data section ends early still opens, so that a tool can show what it holds and which tensors are
 * complete (their data is set; the others' is NULL). gguf_missing_bytes says whether it is whole. A split
 * model's other shards must be whole. */
GGUFSCOPE_API gguf_status gguf_open_partial(const char *path, gguf_file **out, gguf_error *err);
/* The bytes the tensors need past the end of the file: 0 for a whole file; otherwise why (when not NULL)
 * gets the error gguf_open gives for it (GGUF_E_DATA_PAST_END naming the first incomplete tensor). */
GGUFSCOPE_API uint64_t gguf_missing_bytes(const gguf_file *f, gguf_error *why);
/* The file and byte offset a mapped address belongs to, for a SIGBUS handler (a file that shrank while
 * mapped): async-signal-safe. False when addr is in no file gguf_open mapped. */
GGUFSCOPE_API bool gguf_mapping_lookup(const void *addr, const char **path, uint64_t *offset);

/* A model split by llama.cpp's gguf-split: gguf_open given the first shard (PREFIX-00001-of-0000N.gguf)
 * opens the others and serves every shard's tensors as one model (the metadata is the first shard's). A
 * missing shard, another model's, or a tensor in two shards is GGUF_E_SPLIT naming it. */
GGUFSCOPE_API size_t gguf_shard_count(const gguf_file *f);          /* 1 for a file on its own */
GGUFSCOPE_API const char *gguf_shard_path(const gguf_file *f, size_t i); /* NULL for a file on its own */
/* The device and inode shard i (0: the first, or the file on its own) had when opened; false for a file
 * opened from memory. Tools use it so that nothing they write replaces a file they read. */
GGUFSCOPE_API bool gguf_shard_identity(const gguf_file *f, size_t i, uint64_t *dev, uint64_t *ino);

/* Same over a caller-owned buffer, which must outlive the gguf_file. */
GGUFSCOPE_API gguf_status gguf_open_memory(const void *data, size_t size, gguf_file **out, gguf_error *err);

/* ---- files read through a callback (a remote file read by range requests) ----------------------------- */

typedef struct gguf_io {
    /* Reads bytes [offset, offset + n) of the file into buf: GGUF_OK, or a status with err filled (GGUF_E_IO for
     * a transfer that failed or a file that changed between reads). */
    gguf_status (*read)(void *user, uint64_t offset, void *buf, size_t n, gguf_error *err);
    void *user;
    uint64_t size;       /* the file's size in bytes */
} gguf_io;

/* Opens a file through io reading only its header: the prefix is read in growing steps until the metadata and
 * tensor table parse (at most a quarter more than the header, plus 64 KiB, is read), then validated against the
 * whole size as gguf_open does. Tensor data is not read: every tensor's data is NULL until gguf_io_fetch_tensor.
 * A header over 256 MiB is refused (GGUF_E_IO). io must outlive the file. */
GGUFSCOPE_API gguf_status gguf_open_io(const gguf_io *io, gguf_file **out, gguf_error *err);
/* Gives the io of the file named name (a split model's other shard: the first's name with its number), to outlive
 * the model. */
typedef gguf_status (*gguf_io_opener)(void *user, const char *name, const gguf_io **io, gguf_error *err);
/* gguf_open_io for a model that may be split: name is the first shard's (PREFIX-00001-of-0000N.gguf), and each
 * other shard is opened through the io opener gives for its name, and joined as gguf_open joins local shards. */
GGUFSCOPE_API gguf_status gguf_open_io_split(const gguf_io *io, const char *name, gguf_io_opener opener, void *user,
                                             gguf_file **out, gguf_error *err);
/* Reads tensor i's bytes through the file's io and sets its data; GGUF_E_INVALID_ARG for a file not opened by
 * gguf_open_io. */
GGUFSCOPE_API gguf_status gguf_io_fetch_tensor(gguf_file *f, size_t i, gguf_error *err);
/* Bytes read through the io so far (0 for other files). */
GGUFSCOPE_API uint64_t gguf_io_bytes_read(const gguf_file *f);
/* Tensors whose data is not there: not yet fetched through an io, or cut off in a truncated file. */
GGUFSCOPE_API size_t gguf_tensors_absent(const gguf_file *f);

GGUFSCOPE_API void gguf_close(gguf_file *f);

GGUFSCOPE_API uint32_t gguf_version(const gguf_file *f);
GGUFSCOPE_API uint32_t gguf_alignment(const gguf_file *f);
GGUFSCOPE_API uint64_t gguf_data_offset(const gguf_file *f);   /* start of the data section in the file */
GGUFSCOPE_API uint64_t gguf_file_size(const gguf_file *f);
GGUFSCOPE_API const uint8_t *gguf_file_bytes(const gguf_file *f); /* the whole mapping */
/* Hands the whole pages of t's bytes in f's file mapping (or its shard's) back to the page cache: the process's
 * resident set drops them, and their next read faults them in again from the cache. Nothing for memory images and
 * remote files. */
GGUFSCOPE_API void gguf_tensor_release(const gguf_file *f, const gguf_tensor *t);

GGUFSCOPE_API size_t gguf_kv_count(const gguf_file *f);
GGUFSCOPE_API const gguf_kv *gguf_kv_at(const gguf_file *f, size_t i);     /* file order */
GGUFSCOPE_API const gguf_kv *gguf_find_kv(const gguf_file *f, const char *key); /* O(1), NULL if absent */

GGUFSCOPE_API size_t gguf_tensor_count(const gguf_file *f);
GGUFSCOPE_API const gguf_tensor *gguf_tensor_at(const gguf_file *f, size_t i); /* file (info) order */
GGUFSCOPE_API const gguf_tensor *gguf_tensor_by_name(const gguf_file *f, const char *name); /* O(1) */
/* Slice i of t's outermost dimension (an expert of a 3-D experts' tensor) as a tensor of its own: the same name,
 * type and bytes from the slice's offset, one dimension fewer. i < t->ne[t->n_dims - 1], t->n_dims >= 2. */
GGUFSCOPE_API gguf_tensor gguf_tensor_slice(const gguf_tensor *t, uint64_t i);
/* Rows [r0, r0 + n) of a 2-D tensor as a tensor of their own (a fused q/k/v matrix's k rows). r0 + n <= ne[1]. */
GGUFSCOPE_API gguf_tensor gguf_tensor_rows(const gguf_tensor *t, uint64_t r0, uint64_t n);

GGUFSCOPE_API size_t gguf_warning_count(const gguf_file *f);
GGUFSCOPE_API const gguf_warning *gguf_warning_at(const gguf_file *f, size_t i);

/* Typed getters. Strict: the stored type must be exactly the one asked for
 * ("key 'llama.block_count' is a string, expected u32"). */
GGUFSCOPE_API gguf_status gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_get_u64(const gguf_file *f, const char *key, uint64_t *out, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_get_i32(const gguf_file *f, const char *key, int32_t *out, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_get_f32(const gguf_file *f, const char *key, float *out, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_get_bool(const gguf_file *f, const char *key, bool *out, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_get_str(const gguf_file *f, const char *key, gguf_str *out, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_get_array(const gguf_file *f, const char *key, const gguf_value **out, gguf_error *err);
/* Lenient integer getter for hyperparameters: any integer type whose value
 * fits in [min, max] (converters disagree on u32 vs i32 vs u64). */
GGUFSCOPE_API gguf_status gguf_get_int(const gguf_file *f, const char *key, int64_t min, int64_t max,
                         int64_t *out, gguf_error *err);

/* ---- data section coverage ---------------------------------------------- */

/* Where every byte of the data section goes: tensor data, alignment padding
 * after a tensor, gaps (bytes before a tensor beyond the previous one's
 * padding) and trailing bytes after the last tensor's padding. Overlaps never
 * reach here: gguf_open refuses them. */
#define GGUF_COVERAGE_MAX_GAPS 16
typedef struct gguf_gap {
    uint64_t offset;             /* in the file */
    uint64_t len;
    const char *before;          /* the tensor the gap precedes */
} gguf_gap;

typedef struct gguf_coverage {
    uint64_t data_offset;        /* start of the data section in the file */
    uint64_t data_bytes;         /* file size - data_offset */
    uint64_t tensor_bytes;
    uint64_t padding_bytes;
    uint64_t padding_nonzero;    /* padding bytes that are not 0: written by something else, or shifted data */
    uint64_t gap_bytes;
    uint64_t trailing_bytes;
    uint64_t trailing_offset;    /* where the trailing bytes start */
    size_t n_gaps;               /* all gaps; the first GGUF_COVERAGE_MAX_GAPS are listed */
    gguf_gap gaps[GGUF_COVERAGE_MAX_GAPS];
    /* A GGUF header where the file should have ended (at the end of the last tensor's data or of its
     * padding): a file appended to itself (a download resumed from the start) or to another. */
    uint64_t appended_gguf_offset; /* 0: none */
    bool appended_is_copy;       /* what follows repeats the file's own first bytes */
    /* A truncated file (gguf_open_partial): the tensors whose bytes are all there, the one cut short and
     * its bytes present, and the bytes the tensors need past the end (gguf_missing_bytes). */
    size_t complete_tensors, partial_tensors;   /* the complete ones' bytes are tensor_bytes */
    uint64_t partial_bytes, missing_bytes;
} gguf_coverage;

/* Fills out for an opened file. Returns GGUF_E_NOMEM or GGUF_OK. */
GGUFSCOPE_API gguf_status gguf_data_coverage(const gguf_file *f, gguf_coverage *out, gguf_error *err);

/* ---- digests ------------------------------------------------------------ */

typedef enum gguf_hash_kind {
    GGUF_HASH_XXH64,     /* libxxhash, seed 0, as llama-gguf-hash */
    GGUF_HASH_SHA1,
    GGUF_HASH_SHA256,
    GGUF_HASH_CRC32,     /* zlib's crc32 (the one gzip and zip use) */
    GGUF_HASH_KIND_COUNT
} gguf_hash_kind;

#define GGUF_HASH_BIT(k) (1u << (k))
/* The three kinds llama-gguf-hash --all writes. */
#define GGUF_HASH_LLAMA_ALL                                                                                    \
    (GGUF_HASH_BIT(GGUF_HASH_XXH64) | GGUF_HASH_BIT(GGUF_HASH_SHA1) | GGUF_HASH_BIT(GGUF_HASH_SHA256))

/* "xxh64", "sha1", "sha256", "crc32". */
GGUFSCOPE_API const char *gguf_hash_kind_name(gguf_hash_kind k);
/* Kind for a name, or -1. */
GGUFSCOPE_API int gguf_hash_kind_from_name(const char *name);

/* A digest as its canonical bytes (xxh64 and crc32 big-endian, as printed). */
typedef struct gguf_digest {
    uint8_t len;                 /* 0: not computed */
    uint8_t bytes[32];
} gguf_digest;

/* Lowercase hex into out (at least 65 bytes). */
GGUFSCOPE_API void gguf_digest_hex(const gguf_digest *d, char *out);

typedef void (*gguf_progress_fn)(void *user, uint64_t done, uint64_t total);

typedef struct gguf_hash_request {
    unsigned tensor_kinds;       /* GGUF_HASH_BIT set: per tensor, over its data bytes */
    unsigned model_kinds;        /* over all tensor data, tensors in info order (llama-gguf-hash's model line) */
    bool uuid;                   /* llama-gguf-hash --uuid: UUIDv5 of all tensor data */
    bool file_sha256;            /* the whole file, as Hugging Face and sha256sum show it */
    int n_threads;               /* 0: all OpenMP threads */
    gguf_progress_fn progress;   /* called on the calling thread, may be NULL */
    void *progress_user;
} gguf_hash_request;

typedef struct gguf_hashes {
    size_t n_tensors;
    gguf_digest (*tensor)[GGUF_HASH_KIND_COUNT]; /* (n_tensors, kind), info order */
    gguf_digest model[GGUF_HASH_KIND_COUNT];
    bool has_uuid;
    uint8_t uuid[16];
    gguf_digest file_sha256;
    uint64_t bytes_hashed;       /* distinct bytes read from the mapping */
} gguf_hashes;

/* Hashes an opened file by streaming windows of the mapping through every
 * requested digest, the digests of a window spread over threads; memory use
 * does not grow with the file. Release with gguf_hashes_free. */
GGUFSCOPE_API gguf_status gguf_hash_file(const gguf_file *f, const gguf_hash_request *req, gguf_hashes *out,
                                         gguf_error *err);
GGUFSCOPE_API void gguf_hashes_free(gguf_hashes *h);

/* sha256 of the file at path read sequentially, for files gguf_open refuses
 * (a truncated download still has a sha256 to compare); *size gets its bytes. */
GGUFSCOPE_API gguf_status gguf_file_sha256_path(const char *path, gguf_digest *out, uint64_t *size, gguf_error *err);

/* "4f5222ad-081f-54c4-83cc-f7ecccc3d7a5" into out (at least 37 bytes). */
GGUFSCOPE_API void gguf_uuid_format(const uint8_t uuid[16], char *out);

/* ---- manifests (llama-gguf-hash's format) -------------------------------- */

/* The manifest of hashes h, byte-identical to llama-gguf-hash's output for
 * the same kinds ("<kind padded to 8>  <hex>  <label>:<tensor>" per tensor and
 * kind, then the model lines, then the uuid line when present); label is the
 * file name as the user gave it. kinds outside h are skipped. Returns a
 * malloc'd string, NULL when out of memory. */
GGUFSCOPE_API char *gguf_manifest_format(const gguf_file *f, const gguf_hashes *h, unsigned kinds, bool uuid,
                           const char *label);

typedef struct gguf_manifest gguf_manifest;

/* Parses manifest text written by llama-gguf-hash or by us. Lines of kinds we
 * do not know are skipped (counted); a line that is not "<kind> <hex> <name>"
 * or whose hex does not fit its kind is GGUF_E_INVALID_ARG naming the line. */
GGUFSCOPE_API gguf_status gguf_manifest_parse(const char *text, size_t len, gguf_manifest **out, gguf_error *err);
GGUFSCOPE_API void gguf_manifest_free(gguf_manifest *m);
/* What a check of this manifest needs computed. */
GGUFSCOPE_API void gguf_manifest_needs(const gguf_manifest *m, unsigned *tensor_kinds, unsigned *model_kinds,
                                       bool *uuid);
GGUFSCOPE_API size_t gguf_manifest_skipped_lines(const gguf_manifest *m);
/* The file label the manifest's lines carry ("" when it has no model line). */
GGUFSCOPE_API const char *gguf_manifest_label(const gguf_manifest *m);

typedef enum gguf_check_state {
    GGUF_CHECK_OK,
    GGUF_CHECK_MISMATCH,
    GGUF_CHECK_MISSING,          /* in the manifest, not in the file */
    GGUF_CHECK_EXTRA,            /* in the file, not in the manifest (only when it lists tensors) */
    GGUF_CHECK_INCOMPLETE,       /* a truncated file lacks some of the tensor's (or, for a model line, the
                                    model's) bytes: not checked */
} gguf_check_state;

typedef struct gguf_check_item {
    const char *tensor;          /* NULL: the whole-model line; points into the manifest or the file */
    int kind;                    /* gguf_hash_kind, or -1 for the uuid */
    gguf_check_state state;
    char expected[65];           /* "" for EXTRA */
    char actual[65];             /* "" for MISSING */
} gguf_check_item;

typedef struct gguf_check_report {
    gguf_check_item *items;      /* manifest order, then EXTRA tensors in file order */
    size_t n_items;
    size_t n_ok, n_mismatch, n_missing, n_extra, n_incomplete;
    size_t n_tensors_checked;    /* distinct tensors matched by name */
} gguf_check_report;

/* Checks hashes h of file f against m, matching tensors by name whatever file
 * name the manifest carries. Release with gguf_check_report_free. */
GGUFSCOPE_API gguf_status gguf_manifest_check(const gguf_manifest *m, const gguf_file *f, const gguf_hashes *h,
                                gguf_check_report *out, gguf_error *err);
GGUFSCOPE_API void gguf_check_report_free(gguf_check_report *r);

/* True when two metadata values are equal (type, count and every element). */
GGUFSCOPE_API bool gguf_value_equal(const gguf_value *a, const gguf_value *b);

/* ---- strings as text ---------------------------------------------------- */

/* The code point of the UTF-8 sequence at str[0..len) into *cp; its length, or 0 when it is not one valid
 * sequence (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF). */
GGUFSCOPE_API size_t gguf_utf8_next(const char *str, size_t len, uint32_t *cp);
/* Whether a code point displays as nothing yet changes how the text around it reads or compares: bidi
 * embeddings, overrides, isolates and marks (Trojan Source, CVE-2021-42574), zero-width spaces, word joiners,
 * the soft hyphen, line and paragraph separators, the byte-order mark, tag characters; with joiners, also the
 * zero-width joiner and non-joiner (which Persian, Indic scripts and emoji need in text, so a terminal shows
 * them, but which make two names compare apart while they look alike). */
GGUFSCOPE_API bool gguf_codepoint_invisible(uint32_t cp, bool joiners);

/* ---- writer ------------------------------------------------------------- */

typedef struct gguf_writer gguf_writer;

/* Fills len bytes of a tensor's data starting at byte offset `at` of that tensor. */
typedef gguf_status (*gguf_fill_fn)(void *user, uint8_t *dst, uint64_t at, size_t len);

/* version 2 or 3. Returns NULL when out of memory. */
GGUFSCOPE_API gguf_writer *gguf_writer_create(uint32_t version);
GGUFSCOPE_API void gguf_writer_free(gguf_writer *w);

/* A value to write; arrays point at caller memory that must live until the write. */
typedef struct gguf_wvalue {
    gguf_value_type type;
    gguf_value_type elem_type;            /* arrays */
    uint64_t count;                       /* arrays */
    union {
        uint64_t u64; int64_t i64; double f64; bool b;
        const char *str;                  /* STRING: NUL-terminated */
        const void *elems;                /* array of scalars: count elements of elem_type, host layout */
        const char *const *strs;          /* array of strings */
        const struct gguf_wvalue *items;  /* array of arrays */
    } v;
} gguf_wvalue;

/* Adds a key. Setting general.alignment (u32) also sets the alignment the
 * writer pads to. Keys are written in the order they are added. */
GGUFSCOPE_API gguf_status gguf_writer_add(gguf_writer *w, const char *key, const gguf_wvalue *value, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_writer_add_f32(gguf_writer *w, const char *key, float v, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_writer_add_str(gguf_writer *w, const char *key, const char *v, gguf_error *err);
/* Adds a value read from a file (gguf_kv.value), written exactly as it was
 * read: strings of any bytes, arrays of any depth. The file must stay open
 * until the write. */
GGUFSCOPE_API gguf_status gguf_writer_add_copy(gguf_writer *w, const char *key, const gguf_value *value,
                                               gguf_error *err);

/* Adds a tensor whose data is taken from `data` (size implied by type and
 * dims; the memory must live until the write) or produced by fill. */
GGUFSCOPE_API gguf_status gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                   const uint64_t *ne, const void *data, gguf_error *err);
GGUFSCOPE_API gguf_status gguf_writer_add_tensor_fill(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                        const uint64_t *ne, gguf_fill_fn fill, void *user, gguf_error *err);

/* Total file size the writer will produce. */
GGUFSCOPE_API uint64_t gguf_writer_size(const gguf_writer *w);

/* Writes atomically: a temporary file beside path, fsync, rename over path,
 * fsync of the directory. On failure path is untouched and nothing is left behind. */
GGUFSCOPE_API gguf_status gguf_writer_write_file(gguf_writer *w, const char *path, gguf_error *err);
/* Writes into a malloc'd buffer the caller frees. */
GGUFSCOPE_API gguf_status gguf_writer_write_buffer(gguf_writer *w, uint8_t **out, size_t *len, gguf_error *err);

#ifdef __cplusplus
}
#endif
#endif
