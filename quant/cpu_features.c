/* What this x86 CPU and its operating system support, read with CPUID and XGETBV.
 * Written out rather than with __builtin_cpu_supports because clang 14 does not know
 * every feature name gcc does ("f16c"), and because a feature counts only when the OS
 * also saves its registers (XCR0), which the builtin does not check on every compiler. */
#include "blocks.h"
#include "quant.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* CPUID leaf 1, ECX (Intel SDM vol. 2A, table 3-10) */
static const unsigned L1C_FMA = 1u << 12, L1C_OSXSAVE = 1u << 27, L1C_AVX = 1u << 28, L1C_F16C = 1u << 29;
/* CPUID leaf 7 subleaf 0, EBX */
static const unsigned L7B_AVX2 = 1u << 5, L7B_AVX512F = 1u << 16, L7B_AVX512DQ = 1u << 17,
                      L7B_AVX512BW = 1u << 30, L7B_AVX512VL = 1u << 31;
/* CPUID leaf 7 subleaf 0, ECX */
static const unsigned L7C_AVX512VNNI = 1u << 11;
/* CPUID leaf 7 subleaf 1, EAX */
static const unsigned L71A_AVX512BF16 = 1u << 5;
/* XCR0: SSE and AVX state; AVX-512 opmask, upper ZMM0-15 and ZMM16-31 state */
static const unsigned long long XCR0_YMM = 0x6u, XCR0_ZMM = 0xe0u;

typedef struct cpu_bits {
    unsigned fma : 1, f16c : 1, avx2 : 1, avx512f : 1, avx512dq : 1, avx512vl : 1, avx512bw : 1, avx512vnni : 1,
        avx512bf16 : 1;
} cpu_bits;

static unsigned long long read_xcr0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static cpu_bits probe(void)
{
    cpu_bits b = { 0 };
    unsigned a, bx, c, d;
    if (!__get_cpuid(1, &a, &bx, &c, &d))
        return b;
    if (!(c & L1C_OSXSAVE) || !(c & L1C_AVX))
        return b;
    unsigned long long xcr0 = read_xcr0();
    if ((xcr0 & XCR0_YMM) != XCR0_YMM)
        return b;
    b.fma = !!(c & L1C_FMA);
    b.f16c = !!(c & L1C_F16C);
    if (__get_cpuid_max(0, NULL) < 7)
        return b;
    __cpuid_count(7, 0, a, bx, c, d);
    b.avx2 = !!(bx & L7B_AVX2);
    if ((xcr0 & XCR0_ZMM) == XCR0_ZMM) {
        b.avx512f = !!(bx & L7B_AVX512F);
        b.avx512dq = !!(bx & L7B_AVX512DQ);
        b.avx512vl = !!(bx & L7B_AVX512VL);
        b.avx512bw = !!(bx & L7B_AVX512BW);
        b.avx512vnni = !!(c & L7C_AVX512VNNI);
        const unsigned subleaves = a;
        if (subleaves >= 1) {
            __cpuid_count(7, 1, a, bx, c, d);
            b.avx512bf16 = !!(a & L71A_AVX512BF16);
        }
    }
    return b;
}

static cpu_bits features(void)
{
    static int done;
    static cpu_bits cached;
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        cached = probe(); /* idempotent: a race only probes twice */
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    return cached;
}

bool quant_cpu_has_avx2(void) { return features().avx2 && features().f16c; }
bool quant_cpu_has_fma(void) { return features().fma; }
/* F with VL, BW and DQ: every AVX-512 CPU since Skylake-X, and the set x86_target.h compiles AVX-512 code for */
bool quant_cpu_has_avx512(void)
{
    return features().avx512f && features().avx512vl && features().avx512bw && features().avx512dq &&
           quant_cpu_has_avx2();
}
bool quant_cpu_has_avx512dq(void) { return features().avx512dq && quant_cpu_has_avx512(); }
bool quant_cpu_has_avx512vl(void) { return features().avx512vl && quant_cpu_has_avx512(); }
bool quant_cpu_has_avx512bw(void) { return features().avx512bw && quant_cpu_has_avx512(); }
/* VNNI's 256-bit forms need VL; the byte and word forms BW */
bool quant_cpu_has_avx512vnni(void)
{
    return features().avx512vnni && features().avx512bw && quant_cpu_has_avx512vl();
}
/* vdpbf16ps; GCC's avx512bf16 target also enables BW */
bool quant_cpu_has_avx512bf16(void)
{
    return features().avx512bf16 && features().avx512bw && quant_cpu_has_avx512();
}

#else
bool quant_cpu_has_avx2(void) { return false; }
bool quant_cpu_has_fma(void) { return false; }
bool quant_cpu_has_avx512(void) { return false; }
bool quant_cpu_has_avx512dq(void) { return false; }
bool quant_cpu_has_avx512vl(void) { return false; }
bool quant_cpu_has_avx512vnni(void) { return false; }
bool quant_cpu_has_avx512bf16(void) { return false; }
#endif
