// A CPU stand-in for the part of cuFFT that src/cuda/conv_fft.cu uses (dev/fft_emu.sh): 2-D R2C and
// C2R plans with the advanced layout (inembed/onembed, strides, distances), caller-supplied work
// area, unnormalised transforms as cuFFT's. Separable DFTs in double precision (O(n (h + w)) per
// plane). The work area it declares is written whole on every execution, so that AddressSanitizer
// sees a workspace too small for it.
#ifndef EMU_CUFFT_H
#define EMU_CUFFT_H

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

typedef int cufftHandle;
typedef float cufftReal;
typedef float2 cufftComplex;
typedef enum cufftResult_t {
    CUFFT_SUCCESS = 0, CUFFT_INVALID_PLAN = 1, CUFFT_ALLOC_FAILED = 2, CUFFT_INVALID_TYPE = 3, CUFFT_INVALID_VALUE = 4,
    CUFFT_INTERNAL_ERROR = 5, CUFFT_EXEC_FAILED = 6, CUFFT_SETUP_FAILED = 7, CUFFT_INVALID_SIZE = 8
} cufftResult;
typedef enum cufftType_t { CUFFT_R2C = 0x2a, CUFFT_C2R = 0x2c } cufftType;

struct emu_fft_plan {
    bool live, made, autoalloc = true;
    int n[2], inembed[2], onembed[2], istride, idist, ostride, odist, batch;
    cufftType type;
    size_t work;
    void *area;
};
inline std::vector<emu_fft_plan> emu_fft_plans;
inline int emu_fft_live, emu_fft_created; // plans alive (the cache's bound) and plans ever created

static inline cufftResult cufftCreate(cufftHandle *h) {
    emu_fft_plans.push_back(emu_fft_plan{});
    emu_fft_plans.back().live = true;
    *h = (int)emu_fft_plans.size() - 1;
    emu_fft_live++, emu_fft_created++;
    return CUFFT_SUCCESS;
}
static inline emu_fft_plan *emu_fft_get(cufftHandle h) {
    return h >= 0 && h < (int)emu_fft_plans.size() && emu_fft_plans[h].live ? &emu_fft_plans[h] : nullptr;
}
static inline cufftResult cufftDestroy(cufftHandle h) {
    emu_fft_plan *p = emu_fft_get(h);
    if (!p) return CUFFT_INVALID_PLAN;
    p->live = false, emu_fft_live--;
    return CUFFT_SUCCESS;
}
static inline cufftResult cufftSetAutoAllocation(cufftHandle h, int a) {
    emu_fft_plan *p = emu_fft_get(h);
    if (!p) return CUFFT_INVALID_PLAN;
    p->autoalloc = a != 0;
    return CUFFT_SUCCESS;
}
static inline cufftResult cufftMakePlanMany(cufftHandle h, int rank, int *n, int *inembed, int istride, int idist,
                                            int *onembed, int ostride, int odist, cufftType type, int batch, size_t *work) {
    emu_fft_plan *p = emu_fft_get(h);
    if (!p || p->made) return CUFFT_INVALID_PLAN;
    if (rank != 2 || !inembed || !onembed || batch < 1 || n[0] < 1 || n[1] < 1) return CUFFT_INVALID_VALUE;
    for (int i = 0; i < 2; i++) p->n[i] = n[i], p->inembed[i] = inembed[i], p->onembed[i] = onembed[i];
    p->istride = istride, p->idist = idist, p->ostride = ostride, p->odist = odist, p->type = type, p->batch = batch;
    p->work = (size_t)batch * 24 + 4096; // some area, different per plan
    p->made = true;
    *work = p->work;
    return p->autoalloc ? CUFFT_INVALID_VALUE : CUFFT_SUCCESS; // the engine supplies the area
}
static inline cufftResult cufftSetWorkArea(cufftHandle h, void *area) {
    emu_fft_plan *p = emu_fft_get(h);
    if (!p || !p->made) return CUFFT_INVALID_PLAN;
    p->area = area;
    return CUFFT_SUCCESS;
}

typedef std::complex<double> emu_cd;
// out[k] = sum_j in[j] e^(sign 2 pi i j k / n)
static inline void emu_dft(const emu_cd *in, emu_cd *out, int n, int sign) {
    for (int k = 0; k < n; k++) {
        emu_cd s = 0;
        for (int j = 0; j < n; j++) s += in[j] * std::polar(1.0, sign * 2 * M_PI * (double)((long)j * k % n) / n);
        out[k] = s;
    }
}

static inline cufftResult emu_fft_exec(cufftHandle h, const void *in, void *out, bool inverse) {
    emu_fft_plan *p = emu_fft_get(h);
    if (!p || !p->made || (p->type == CUFFT_C2R) != inverse) return CUFFT_INVALID_PLAN;
    if (p->work && !p->area) return CUFFT_EXEC_FAILED;
    memset(p->area, 0x5a, p->work); // a work area too small is an ASan error
    const int hf = p->n[0], wf = p->n[1], wc = wf / 2 + 1;
    std::vector<emu_cd> t((size_t)hf * wc), a(hf > wf ? hf : wf), b(hf > wf ? hf : wf);
    for (int bt = 0; bt < p->batch; bt++) {
        if (!inverse) {
            const float *src = (const float *)in + (size_t)bt * p->idist;
            for (int i = 0; i < hf; i++) { // rows, then columns
                for (int j = 0; j < wf; j++) a[j] = src[((size_t)i * p->inembed[1] + j) * p->istride];
                emu_dft(a.data(), b.data(), wf, -1);
                for (int j = 0; j < wc; j++) t[(size_t)i * wc + j] = b[j];
            }
            float2 *dst = (float2 *)out + (size_t)bt * p->odist;
            for (int j = 0; j < wc; j++) {
                for (int i = 0; i < hf; i++) a[i] = t[(size_t)i * wc + j];
                emu_dft(a.data(), b.data(), hf, -1);
                for (int i = 0; i < hf; i++) {
                    float2 &d = dst[((size_t)i * p->onembed[1] + j) * p->ostride];
                    d.x = (float)b[i].real(), d.y = (float)b[i].imag();
                }
            }
        } else {
            const float2 *src = (const float2 *)in + (size_t)bt * p->idist;
            for (int j = 0; j < wc; j++) { // columns, then rows extended by Hermitian symmetry
                for (int i = 0; i < hf; i++) {
                    float2 s = src[((size_t)i * p->inembed[1] + j) * p->istride];
                    a[i] = emu_cd(s.x, s.y);
                }
                emu_dft(a.data(), b.data(), hf, +1);
                for (int i = 0; i < hf; i++) t[(size_t)i * wc + j] = b[i];
            }
            float *dst = (float *)out + (size_t)bt * p->odist;
            for (int i = 0; i < hf; i++) {
                for (int j = 0; j < wf; j++) a[j] = j < wc ? t[(size_t)i * wc + j] : std::conj(t[(size_t)i * wc + wf - j]);
                emu_dft(a.data(), b.data(), wf, +1);
                for (int j = 0; j < wf; j++) dst[((size_t)i * p->onembed[1] + j) * p->ostride] = (float)b[j].real();
            }
        }
    }
    if (inverse) // cuFFT's multi-dimensional C2R may overwrite its input: nothing may read it after
        for (int bt = 0; bt < p->batch; bt++)
            for (int i = 0; i < hf; i++)
                for (int j = 0; j < wc; j++) {
                    float2 &s = ((float2 *)in)[(size_t)bt * p->idist + ((size_t)i * p->inembed[1] + j) * p->istride];
                    s.x = s.y = NAN;
                }
    return CUFFT_SUCCESS;
}
static inline cufftResult cufftSetStream(cufftHandle, cudaStream_t) { return CUFFT_SUCCESS; } // (one stream: nothing to set)
static inline cufftResult cufftExecR2C(cufftHandle h, cufftReal *in, cufftComplex *out) { return emu_fft_exec(h, in, out, false); }
static inline cufftResult cufftExecC2R(cufftHandle h, cufftComplex *in, cufftReal *out) { return emu_fft_exec(h, in, out, true); }
#endif
