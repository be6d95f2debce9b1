/*
 * How llama.cpp's CPU backend sums the lanes of a vector accumulator, written as trees over the lanes a[0..W) so
 * that any code can reproduce them bit for bit (the llama.cpp that llama-cpp-python 0.3.36 vendors, built by GCC):
 *  - GGML_LANES_HSUM, 8 lanes: llamafile's hsum(__m256) and the softmax's sum (the halves added, then movehl, then
 *    movehdup): ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7));
 *  - GGML_LANES_HADD, 8 lanes: GGML_F32x8_REDUCE's (the halves added, then two hadds):
 *    ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7));
 *  - 16 lanes, either kind: _mm512_reduce_add_ps as GCC expands it, a_i + a_(i + 8) and then the HSUM tree.
 * And ggml_vec_dot_f32 / _f16's fold of their four accumulators (GGML_F32_ARR) before that: 0 += 2, 1 += 3,
 * 0 += 1, lane by lane.
 */
#ifndef GGUFSCOPE_KERN_CPU_GGML_SUMS_H
#define GGUFSCOPE_KERN_CPU_GGML_SUMS_H

enum { GGML_MAX_LANES = 16, GGML_DOT_ACCUMULATORS = 4 };

typedef enum ggml_lanes_kind { GGML_LANES_HSUM, GGML_LANES_HADD } ggml_lanes_kind;

static inline float ggml_lanes_sum(const float *a, int W, ggml_lanes_kind kind)
{
    float h[8];
    for (int i = 0; i < 8; i++)
        h[i] = W == 16 ? a[i] + a[i + 8] : a[i];
    if (W == 8 && kind == GGML_LANES_HADD)
        return ((h[0] + h[4]) + (h[1] + h[5])) + ((h[2] + h[6]) + (h[3] + h[7]));
    return ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]));
}

/* acc[a][l] (a < 4, l < W) folded into acc[0], then its lanes summed: what a ggml_vec_dot_f32 or _f16 with these
 * accumulators holds before its leftovers */
static inline float ggml_dot_fold(float acc[GGML_DOT_ACCUMULATORS][GGML_MAX_LANES], int W)
{
    for (int l = 0; l < W; l++) {
        acc[0][l] += acc[2][l];
        acc[1][l] += acc[3][l];
        acc[0][l] += acc[1][l];
    }
    return ggml_lanes_sum(acc[0], W, GGML_LANES_HADD);
}

#endif
