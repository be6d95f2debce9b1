/* A program that includes ggufscope's installed headers beside declarations of the names ggml's installed headers
 * define (ggml.h's tensor types, gguf.h's value types, context API and constants, as ggml declares them): it must
 * compile, so a project that links ggml can link ggufscope too. tests/install_example.sh builds it. */
#include <stddef.h>
#include <stdint.h>

enum ggml_type {
    GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2, GGML_TYPE_Q4_1 = 3, GGML_TYPE_Q5_0 = 6,
    GGML_TYPE_Q5_1 = 7, GGML_TYPE_Q8_0 = 8, GGML_TYPE_Q8_1 = 9, GGML_TYPE_Q2_K = 10, GGML_TYPE_Q3_K = 11,
    GGML_TYPE_Q4_K = 12, GGML_TYPE_Q5_K = 13, GGML_TYPE_Q6_K = 14, GGML_TYPE_Q8_K = 15, GGML_TYPE_IQ4_XS = 23,
    GGML_TYPE_BF16 = 30, GGML_TYPE_MXFP4 = 39, GGML_TYPE_COUNT = 42,
};
enum gguf_type {
    GGUF_TYPE_UINT8 = 0, GGUF_TYPE_INT8, GGUF_TYPE_UINT16, GGUF_TYPE_INT16, GGUF_TYPE_UINT32, GGUF_TYPE_INT32,
    GGUF_TYPE_FLOAT32, GGUF_TYPE_BOOL, GGUF_TYPE_STRING, GGUF_TYPE_ARRAY, GGUF_TYPE_UINT64, GGUF_TYPE_INT64,
    GGUF_TYPE_FLOAT64, GGUF_TYPE_COUNT,
};
#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3
#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"
#define GGUF_DEFAULT_ALIGNMENT 32
struct gguf_context;
struct gguf_init_params;
struct gguf_context *gguf_init_empty(void);
void gguf_free(struct gguf_context *ctx);
const char *gguf_type_name(enum gguf_type type);
int64_t gguf_find_key(const struct gguf_context *ctx, const char *key);
int64_t gguf_find_tensor(const struct gguf_context *ctx, const char *name);
int64_t gguf_get_n_tensors(const struct gguf_context *ctx);
size_t gguf_get_tensor_offset(const struct gguf_context *ctx, int64_t tensor_id);
uint32_t gguf_get_version(const struct gguf_context *ctx);
size_t gguf_get_alignment(const struct gguf_context *ctx);

#include <ggufscope/audit.h>
#include <ggufscope/gguf.h>
#include <ggufscope/model.h>
#include <ggufscope/quant.h>

int main(void)
{
    /* both sides' names in one translation unit */
    return (int)gguf_tensor_count(0) + ((int)GGML_TYPE_Q4_K == (int)GGUF_TENSOR_Q4_K ? 0 : 1) +
           (GGUF_TYPE_COUNT > 0 ? 0 : 1);
}
