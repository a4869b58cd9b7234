// This CPU as a device entry: vendor, model and instruction sets from cpuid (with the OS's
// XSAVE support checked, as a VM may hide AVX-512 state), cores, clock, and the peak those give.
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static double now_s(void) { // this thread's CPU time: a shared machine's other work does not count
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// The clock measured with a chain of dependent adds (one per cycle on every x86 core since
// the Pentium Pro): what the core runs at now, turbo included.
static double measure_clock_mhz(void) {
#if defined(__x86_64__)
    const long iters = 20 * 1000 * 1000;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        unsigned long x = 0, n = iters;
        double t0 = now_s();
        __asm__ volatile("1:\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "dec %1\n\tjnz 1b"
                         : "+r"(x), "+r"(n));
        double mhz = 8.0 * iters / (now_s() - t0) / 1e6;
        if (mhz > best) best = mhz;
    }
    return best;
#else
    return 0;
#endif
}

// /proc/cpuinfo's "cpu MHz" of the first CPU (a VM's TSC clock; the current clock otherwise)
static double cpuinfo_mhz(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    double v = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "cpu MHz", 7) == 0) {
            char *c = strchr(line, ':');
            if (c) v = atof(c + 1);
            break;
        }
    if (f) fclose(f);
    return v;
}

static double read_khz(const char *path) {
    FILE *f = fopen(path, "r");
    double v = 0;
    if (f) {
        if (fscanf(f, "%lf", &v) != 1) v = 0;
        fclose(f);
    }
    return v;
}

void cb_cpu_detect(cb_cpu_info *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->vendor, sizeof c->vendor, "unknown");
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, cx, d, max;
    __cpuid(0, max, b, cx, d);
    memcpy(c->vendor, &b, 4), memcpy(c->vendor + 4, &d, 4), memcpy(c->vendor + 8, &cx, 4);
    c->vendor[12] = 0;
    __cpuid(1, a, b, cx, d);
    c->family = (int)((a >> 8) & 0xf) + ((a >> 8 & 0xf) == 0xf ? (int)((a >> 20) & 0xff) : 0);
    c->fma = cx >> 12 & 1;
    bool osxsave = cx >> 27 & 1, avx = cx >> 28 & 1;
    unsigned long long xcr0 = 0;
    if (osxsave) {
        unsigned lo, hi;
        __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (unsigned long long)hi << 32 | lo;
    }
    bool ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6, tiles = (xcr0 & 0x60000) == 0x60000;
    if (max >= 7) {
        __cpuid_count(7, 0, a, b, cx, d);
        c->avx2 = avx && ymm && (b >> 5 & 1);
        c->avx512 = zmm && (b >> 16 & 1);
        c->amx = tiles && (d >> 22 & 1) && (d >> 24 & 1); // AMX-BF16 and AMX-TILE
        __cpuid_count(7, 1, a, b, cx, d);
        c->avx512_bf16 = c->avx512 && (a >> 5 & 1);
    }
    c->fma = c->fma && ymm;
    unsigned brand[12] = {0};
    __cpuid(0x80000000, max, b, cx, d);
    if (max >= 0x80000004) {
        for (unsigned i = 0; i < 3; i++) __cpuid(0x80000002 + i, brand[4 * i], brand[4 * i + 1], brand[4 * i + 2], brand[4 * i + 3]);
        memcpy(c->model, brand, 48);
        c->model[48] = 0;
    }
#endif
    char *m = c->model; // trim the brand string's padding
    while (*m == ' ') m++;
    memmove(c->model, m, strlen(m) + 1);
    for (size_t n = strlen(c->model); n && c->model[n - 1] == ' ';) c->model[--n] = 0;
    c->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double khz = read_khz("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    c->clock_measured_mhz = measure_clock_mhz();
    double info = cpuinfo_mhz();
    c->clock_mhz = khz > 0 ? khz / 1e3 : info > 0 ? info : c->clock_measured_mhz;
    snprintf(c->clock_source, sizeof c->clock_source, "%s",
             khz > 0 ? "cpufreq maximum" : info > 0 ? "/proc/cpuinfo" : "measured (dependent adds)");
    // FP32 FLOP per cycle per core: two FMA pipes of the widest vectors. AMD's Zen 4 runs 512-bit
    // instructions on 256-bit pipes (family 0x19); Zen 5 (0x1a) and Intel's AVX-512 parts have
    // two 512-bit pipes (some Intel parts have one: then the peak is half this).
    bool amd = strcmp(c->vendor, "AuthenticAMD") == 0;
    if (c->avx512 && !(amd && c->family < 0x1a)) c->flops_per_cycle = 64;
    else if (c->avx2 && c->fma) c->flops_per_cycle = 32;
    else if (c->avx2) c->flops_per_cycle = 16;
    else c->flops_per_cycle = 8; // SSE: a 4-wide multiply and a 4-wide add per cycle
    c->peak_fp32 = c->cores * c->clock_mhz * 1e6 * c->flops_per_cycle;
    // bf16: AMX tiles 1024 FLOP per cycle per core (Sapphire Rapids); AVX512_BF16 dot products twice fp32
    c->peak_bf16 = c->amx ? c->cores * c->clock_mhz * 1e6 * 1024 : c->avx512_bf16 ? 2 * c->peak_fp32 : 0;
}

void cb_cpu_isa(const cb_cpu_info *c, char *out, size_t n) {
    snprintf(out, n, "%s%s%s%s%s", c->avx512 ? "AVX-512" : c->avx2 ? "AVX2" : "SSE", c->fma ? " + FMA" : "",
             c->avx512_bf16 ? " + AVX512_BF16" : "", c->amx ? " + AMX" : "", "");
}

void cb_cpu_device(const cb_cpu_info *c, cb_device *d) {
    memset(d, 0, sizeof *d);
    char isa[64];
    cb_cpu_isa(c, isa, sizeof isa);
    snprintf(d->name, sizeof d->name, "this-cpu");
    snprintf(d->kind, sizeof d->kind, "cpu");
    snprintf(d->model, sizeof d->model, "%.60s (%s, %d cores, %s)", c->model[0] ? c->model : c->vendor, c->vendor, c->cores, isa);
    d->clock_mhz = c->clock_mhz;
    d->cores = c->cores;
    d->launch_s = 1e-6;
    d->peak[CB_PREC_FP32] = c->peak_fp32;
    d->peak[CB_PREC_BF16] = c->peak_bf16;
    snprintf(d->source, sizeof d->source,
             "detected (cpuid, sysconf): peak = %d cores x %.0f MHz (%s) x %d FP32 FLOP/cycle (%s); mem_bw is the "
             "measured copy bandwidth",
             c->cores, c->clock_mhz, c->clock_source, c->flops_per_cycle, isa);
}
