/*
 * The x86 instruction sets the SIMD code is compiled for, spelled once. Each function takes the set its dispatch
 * checks at run time (quant_cpu_has_*): AVX2 means AVX2 with FMA and F16C (every AVX2 CPU has them); AVX-512
 * means F, VL, BW and DQ together (every AVX-512 CPU since Skylake-X; quant_cpu_has_avx512 asks for all four), with
 * VNNI or BF16 on top for the functions that use them. FMA in a set lets intrinsics use it; a plain a * b + c is
 * still two roundings (C17 compiles with -ffp-contract=off, and CMakeLists.txt says so for every compiler).
 */
#ifndef GGUFSCOPE_X86_TARGET_H
#define GGUFSCOPE_X86_TARGET_H

#define X86_AVX2 __attribute__((target("avx2,fma,f16c")))
#define X86_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")))
#define X86_AVX512_VNNI __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni,avx2,fma,f16c")))
#define X86_AVX512_BF16 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512bf16,avx2,fma,f16c")))

#endif
