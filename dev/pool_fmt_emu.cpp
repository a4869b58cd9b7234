// Runs src/storage/pool_fmt.cu's kernels (and pool.cu's, which serve fmt 0) on the CPU through
// dev/emu/cuda_runtime.h and cuda_bf16.h, in the four storages (fp32 NCHW, fp32 NHWC, bf16 NCHW,
// bf16 NHWC), against the reference loops (src/cpu/ref.c) run on the same inputs: random NCHW
// values (bf16-rounded for the bf16 storages) are converted into the storage, pooled there, and
// converted back. Checked: max outputs exactly, average within 1e-6 (fp32, normalised) or half a
// bf16 step (per element); the saved window offsets (read at the output's flat index in the
// storage) against the reference's maximum; the input gradient (1e-6 normalised fp32, a bf16 step
// per element); the forward without argmax gives the same y; which vector width each NHWC launch
// took (8 bf16 / 4 fp32 when C allows and the buffers are aligned, else 1). Inputs of five values
// give ties everywhere. Odd shapes, asymmetric pads, windows wholly in the padding, int32 offsets
// (more than 255 taps), C of 1 to 16, misaligned buffers, and several launches per tensor (a
// small POOL_FMT_LAUNCH_CAP). Outputs start as NaN so an element left unwritten fails. Built and
// run by dev/pool_fmt_emu.sh; exits 1 when a check fails.
extern "C" {
#include "cpu/kernels.h" // the reference loops, C linkage
}
static int note_v; // the vector width of the last NHWC launch (0: none ran)
#define PF_NOTE_V(v) (note_v = (v))
static int note_scatter; // backward launches of the scatter since reset
#define PF_NOTE_SCATTER() (note_scatter++)
static int scatter_mode = -1; // CONVBENCH_POOL_SCATTER as cb_dnn_init reads it
#include POOL_SRC
#include POOL_FMT_SRC
#include "emu_check.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

static int failed;

// a 16-byte aligned allocation of exactly `bytes` (so that AddressSanitizer sees overruns), its
// first `shift` bytes skipped to misalign it on purpose
struct buffer {
    void *base;
    size_t shift;
    buffer(size_t bytes, size_t shift_, int fill) : base(operator new(bytes + shift_, std::align_val_t(16))), shift(shift_) {
        memset(base, fill, bytes + shift_); // 0xff: NaN in fp32 and bf16
    }
    ~buffer() { operator delete(base, std::align_val_t(16)); }
    void *p() const { return (char *)base + shift; }
};

struct dims {
    int n, c, h, w;
    size_t at(int fmt, int in, int ic, int ih, int iw) const { // an element's flat index in the storage
        return fmt & CB_FMT_NHWC ? (((size_t)in * h + ih) * w + iw) * c + ic : (((size_t)in * c + ic) * h + ih) * w + iw;
    }
};

// NCHW fp32 values a -> the storage at dst, and back
static void to_storage(const std::vector<float> &a, dims d, int fmt, void *dst) {
    size_t i = 0;
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (int h = 0; h < d.h; h++)
                for (int w = 0; w < d.w; w++, i++) {
                    size_t j = d.at(fmt, n, c, h, w);
                    if (fmt & CB_FMT_BF16) ((__nv_bfloat16 *)dst)[j] = __float2bfloat16_rn(a[i]);
                    else ((float *)dst)[j] = a[i];
                }
}
static std::vector<float> from_storage(const void *src, dims d, int fmt) {
    std::vector<float> a((size_t)d.n * d.c * d.h * d.w);
    size_t i = 0;
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (int h = 0; h < d.h; h++)
                for (int w = 0; w < d.w; w++, i++) {
                    size_t j = d.at(fmt, n, c, h, w);
                    a[i] = fmt & CB_FMT_BF16 ? __bfloat162float(((const __nv_bfloat16 *)src)[j]) : ((const float *)src)[j];
                }
    return a;
}

// elements off by more than a bf16 step (2^-8 relative) plus abs; NaN counts
static double bf16_bad(const std::vector<float> &a, const std::vector<float> &ref, double abs) {
    double bad = 0;
    for (size_t i = 0; i < a.size(); i++) bad += !(std::fabs((double)a[i] - ref[i]) <= std::ldexp(std::fabs(ref[i]), -8) + abs);
    return bad;
}

static const char *fmt_name[4] = {"f32 nchw", "f32 nhwc", "bf16 nchw", "bf16 nhwc"};

// pads: top, bottom, left, right (bottom and right only shape P and Q, as in the engine)
static void run_case(const char *label, int n, int c, int h, int w, int r, int s, int sh, int sw, int pt, int pb, int pl,
                     int pr, int avg, bool misalign = false) {
    cb_pool_params p = {n, c, h, w, r, s, (h + pt + pb - r) / sh + 1, (w + pl + pr - s) / sw + 1, sh, sw, pt, pl, avg, 0};
    dims dx_d = {n, c, h, w}, dy_d = {n, c, p.p, p.q};
    size_t nx = (size_t)n * c * h * w, ny = (size_t)n * c * p.p * p.q;
    bool byte = r * s <= 255;
    for (int fmt = 0; fmt < 4; fmt++)
        for (int mode = 0; mode < (avg ? 2 : 3); mode++) { // 1: ties; 2: relu_mask on a ReLU's output
            bool bf = fmt & CB_FMT_BF16, nhwc = fmt & CB_FMT_NHWC, ties = mode == 1, mask = mode == 2;
            size_t es = bf ? 2 : 4, shift = misalign ? es : 0;
            std::vector<float> x(nx), dy(ny);
            for (auto &v : x) v = ties ? (float)((int)((urand() + 1.f) * 2.5f) - 2) * 0.5f : mask ? std::fmax(urand(), 0.f) : urand();
            p.relu_mask = mask;
            for (auto &v : dy) v = urand();
            if (bf) { // the storage's values: the reference runs on what the kernels see
                for (auto &v : x) v = __bfloat162float(__float2bfloat16_rn(v));
                for (auto &v : dy) v = __bfloat162float(__float2bfloat16_rn(v));
            }
            std::vector<float> yr(ny), dxr(nx);
            std::vector<int32_t> amr(ny);
            cb_ref_pool_forward(&p, x.data(), yr.data(), amr.data());
            for (size_t o = 0; mask && o < ny; o++)
                if (!(yr[o] > 0)) amr[o] = -1; // no maximum: the ReLU's gradient is 0 there
            cb_ref_pool_backward(&p, x.data(), dy.data(), avg ? NULL : amr.data(), dxr.data());
            for (size_t i = 0; mask && i < nx; i++)
                if (!(x[i] > 0)) dxr[i] = 0.f;

            buffer xs(nx * es, shift, 0), ys(ny * es, shift, 0xff), ys2(ny * es, shift, 0xff), am(ny * (byte ? 1 : 4), 0, 0x7f); // (the argmax as the engine reserves it: cb_cuda_pool_argmax_item)
            buffer dys(ny * es, shift, 0), dxs(nx * es, shift, 0xff);
            to_storage(x, dx_d, fmt, xs.p());
            to_storage(dy, dy_d, fmt, dys.p());
            // (a global average pool runs pool.cu's reduction, not these kernels: no width noted)
            bool global = avg && p.p == 1 && p.q == 1 && r == h && s == w && pt == 0 && pl == 0;
            int vw = bf ? 8 : 4, want_v = !nhwc || global ? 0 : c % vw == 0 && !misalign ? vw : 1;
            bool ok_v = true;

            note_v = 0;
            cb_fmt_pool_forward(&p, fmt, xs.p(), ys.p(), avg ? NULL : am.p());
            ok_v &= note_v == want_v;
            note_v = 0;
            cb_fmt_pool_forward(&p, fmt, xs.p(), ys2.p(), NULL);
            ok_v &= note_v == want_v;
            std::vector<float> y = from_storage(ys.p(), dy_d, fmt);
            double fe;
            bool fok;
            if (!avg) { // a max is one of the inputs: exact
                fe = 0;
                for (size_t i = 0; i < ny; i++) fe += !(y[i] == yr[i]);
                fok = fe == 0;
            } else if (bf) {
                fe = bf16_bad(y, yr, 1e-6), fok = fe == 0;
            } else {
                fe = nerr(y, yr), fok = fe <= 1e-6;
            }
            bool same = memcmp(ys.p(), ys2.p(), ny * es) == 0;

            double am_bad = 0; // the saved window offset names the reference's maximum
            if (!avg) {
                size_t o = 0;
                for (int in = 0; in < n; in++)
                    for (int ic = 0; ic < c; ic++)
                        for (int oh = 0; oh < p.p; oh++)
                            for (int ow = 0; ow < p.q; ow++, o++) {
                                size_t so = dy_d.at(fmt, in, ic, oh, ow);
                                int off = byte ? ((const uint8_t *)am.p())[so] : ((const int32_t *)am.p())[so];
                                if (byte && off == 255) off = -1;
                                int got = -1;
                                if (off >= 0) got = (oh * sh - pt + off / s) * w + (ow * sw - pl + off % s);
                                am_bad += got != amr[o];
                            }
            }

            // the scatter: max, fp32 NHWC with byte offsets; by default at V = 1, and at 16-byte widths
            // with the ReLU mask where windows overlap, at most 2 x 2 covering an input; at every width when on
            // (the V = 1 path); never when off
            int covering = ((r + sh - 1) / sh) * ((s + sw - 1) / sw);
            bool by_default = want_v == 1 || (mask && (r > sh || s > sw) && covering <= 4);
            bool want_scatter = want_v > 0 && !avg && !bf && byte && (scatter_mode > 0 || (scatter_mode < 0 && by_default));
            int want_bv = want_scatter ? 1 : want_v; // (the backward's width)
            note_v = 0, note_scatter = 0;
            cb_fmt_pool_backward(&p, fmt, dys.p(), avg ? NULL : am.p(), dxs.p());
            ok_v &= note_v == want_bv && (note_scatter > 0) == want_scatter;
            std::vector<float> dxg = from_storage(dxs.p(), dx_d, fmt);
            double be = bf ? bf16_bad(dxg, dxr, 1e-5) : nerr(dxg, dxr);
            bool bok = bf ? be == 0 : be <= 1e-6;

            if (global) { // the gradient added into one there already (cb_cuda_global_avg_backward_add): one rounding
                std::vector<float> base(nx), want(nx);
                for (auto &v : base) v = bf ? __bfloat162float(__float2bfloat16_rn(urand())) : urand();
                for (size_t i = 0; i < nx; i++) want[i] = base[i] + dxr[i];
                buffer dxa(nx * es, shift, 0);
                to_storage(base, dx_d, fmt, dxa.p());
                cb_cuda_global_avg_backward_add(&p, nhwc, bf, dys.p(), dxa.p());
                std::vector<float> got = from_storage(dxa.p(), dx_d, fmt);
                double ae = bf ? bf16_bad(got, want, 1e-5) : nerr(got, want);
                if (!(bf ? ae == 0 : ae <= 1e-6)) bok = false, printf("     the added backward: err %.1e\n", ae);
            }
            bool ok = fok && same && am_bad == 0 && bok && ok_v;
            char lab[160];
            snprintf(lab, sizeof lab, "%s%s", label, ties ? " (ties)" : mask ? " (relu mask)" : "");
            printf("%s %-50s %-9s V%d  fwd %.1e%s  %s %.0f  bwd %.1e%s\n", ok ? "ok  " : "FAIL", lab, fmt_name[fmt], note_v, fe,
                   avg && bf ? " bad" : "", avg ? "argmax -" : byte ? "argmax u8 bad" : "argmax i32 bad", am_bad, be,
                   bf ? " bad" : "");
            if (!same) printf("     forward without argmax differs\n");
            if (!ok_v) printf("     vector width: wanted %d, %s\n", want_v, want_scatter ? "the scatter" : "no scatter");
            failed += !ok;
        }
}

int main() {
    const char *rs = getenv("CONVBENCH_POOL_RS"); // (as cb_dnn_init: on, off, or unset for the default)
    cb_fmt_pool_rs(rs && !strcmp(rs, "on") ? 1 : rs && !strcmp(rs, "off") ? 0 : -1);
    const char *sc = getenv("CONVBENCH_POOL_SCATTER");
    scatter_mode = sc && !strcmp(sc, "on") ? 1 : sc && !strcmp(sc, "off") ? 0 : -1;
    cb_fmt_pool_scatter(scatter_mode);
    // label, N, C, H, W, R, S, stride h, w, pads top, bottom, left, right, avg
    // dev/pool_emu.cpp's cases
    run_case("max 3x3 s2 VALID 13x15 b2 c5", 2, 5, 13, 15, 3, 3, 2, 2, 0, 0, 0, 0, 0);
    run_case("max 3x3 s2 SAME 12x12 (pads 0/1)", 2, 3, 12, 12, 3, 3, 2, 2, 0, 1, 0, 1, 0);
    run_case("max 3x3 s1 pad 1 7x9 b1 c13", 1, 13, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 0);
    run_case("max 2x2 s2 9x11 (trailing pad 1)", 2, 3, 9, 11, 2, 2, 2, 2, 0, 1, 0, 1, 0);
    run_case("max 3x2 s(1,3) pads 2/0 1/1 8x10", 2, 2, 8, 10, 3, 2, 1, 3, 2, 0, 1, 1, 0);
    run_case("max 2x2 s2 pad top 2 (window all pad)", 1, 2, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 0);
    run_case("max 1x1 s2 5x7 (subsample)", 1, 3, 5, 7, 1, 1, 2, 2, 0, 0, 0, 0, 0);
    run_case("max 17x17 s3 20x21 (int32 offsets)", 1, 2, 20, 21, 17, 17, 3, 3, 0, 0, 0, 0, 0);
    run_case("max 4x5 s3 pads 1/2 2/1 b3 c7 (launches)", 3, 7, 19, 23, 4, 5, 3, 3, 1, 2, 2, 1, 0);
    run_case("avg 3x3 s1 pad 1 8x7", 2, 5, 8, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1);
    run_case("avg 2x2 s2 9x9 (trailing pad 1)", 2, 3, 9, 9, 2, 2, 2, 2, 0, 1, 0, 1, 1);
    run_case("avg 3x3 s2 pads 0/1 8x8", 2, 5, 8, 8, 3, 3, 2, 2, 0, 1, 0, 1, 1);
    run_case("avg 5x5 s1 VALID 5x5 (global) c4", 3, 4, 5, 5, 5, 5, 1, 1, 0, 0, 0, 0, 1);
    run_case("avg 2x2 s2 pad top 2 (window all pad)", 1, 2, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 1);
    run_case("max 3x3 s2 pads 3/0 1/2 b2 c5 (window all pad)", 2, 5, 6, 7, 3, 3, 2, 2, 3, 0, 1, 2, 0);
    run_case("avg 3x3 s1 pads 3/1 2/2 c3 (window all pad)", 1, 3, 5, 6, 3, 3, 1, 1, 3, 1, 2, 2, 1);
    run_case("max 2x2 s1 VALID 6x5 b2 c7", 2, 7, 6, 5, 2, 2, 1, 1, 0, 0, 0, 0, 0);
    // the vector paths (C a multiple of 8 or 16), C = 1, misaligned buffers
    run_case("max 3x3 s2 SAME 12x12 c8", 2, 8, 12, 12, 3, 3, 2, 2, 0, 1, 0, 1, 0);
    run_case("max 2x2 s2 10x10 b3 c16 (launches)", 3, 16, 10, 10, 2, 2, 2, 2, 0, 0, 0, 0, 0);
    run_case("max 3x3 s1 pad 1 6x7 c16", 1, 16, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0);
    run_case("max 3x2 s(1,3) pads 2/0 1/1 7x10 c8", 2, 8, 7, 10, 3, 2, 1, 3, 2, 0, 1, 1, 0);
    run_case("max 2x2 s2 pad top 2 c8 (window all pad)", 1, 8, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 0);
    run_case("max 17x17 s3 18x19 b2 c8 (int32 offsets)", 2, 8, 18, 19, 17, 17, 3, 3, 0, 0, 0, 0, 0);
    run_case("max 3x3 s2 pads 1/1 9x9 c1", 2, 1, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0);
    run_case("max 3x3 s2 SAME 12x12 c8 (misaligned)", 2, 8, 12, 12, 3, 3, 2, 2, 0, 1, 0, 1, 0, true);
    run_case("avg 3x3 s1 pad 1 6x5 c16", 2, 16, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1);
    run_case("avg 3x3 s2 pads 0/1 8x8 c8", 2, 8, 8, 8, 3, 3, 2, 2, 0, 1, 0, 1, 1);
    run_case("avg 5x5 s1 VALID 5x5 (global) c8", 3, 8, 5, 5, 5, 5, 1, 1, 0, 0, 0, 0, 1);
    run_case("avg 6x9 global b2 c40 (channel slices)", 2, 40, 6, 9, 6, 9, 1, 1, 0, 0, 0, 0, 1);
    run_case("avg 2x2 s2 pad top 2 c16 (window all pad)", 1, 16, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 1);
    run_case("avg 3x3 s2 pads 1/1 7x7 c8 (misaligned)", 2, 8, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, true);
    run_case("max 3x3 s1 pads 3/0 0/3 c16 (window all pad)", 1, 16, 5, 6, 3, 3, 1, 1, 3, 0, 0, 3, 0);
    run_case("avg 2x2 s1 VALID 5x6 b2 c8", 2, 8, 5, 6, 2, 2, 1, 1, 0, 0, 0, 0, 1);
    // larger planes and C past 32 channel groups (C 37 and 300 at V 1, C 72 at V 8, C 264 at V 4 and
    // 8), several images, windows at every edge; 5x5 and 17x17 windows at stride 2 and 3
    run_case("max 3x3 s1 SAME 19x35 c37", 1, 37, 19, 35, 3, 3, 1, 1, 1, 1, 1, 1, 0);
    run_case("max 3x3 s2 pads 0/1 21x37 b2 c72", 2, 72, 21, 37, 3, 3, 2, 2, 0, 1, 0, 1, 0);
    run_case("avg 3x3 s1 pads 2/0 1/1 18x20 c40", 1, 40, 18, 20, 3, 3, 1, 1, 2, 0, 1, 1, 1);
    run_case("max 5x3 s(2,1) pads 2/2 1/1 17x19 c33", 1, 33, 17, 19, 5, 3, 2, 1, 2, 2, 1, 1, 0);
    run_case("max 17x17 s3 20x21 c40 (int32 offsets)", 1, 40, 20, 21, 17, 17, 3, 3, 0, 0, 0, 0, 0);
    run_case("max 3x3 s2 pad 1 9x7 b3 c264", 3, 264, 9, 7, 3, 3, 2, 2, 1, 1, 1, 1, 0);
    run_case("avg 3x3 s2 pad 1 7x9 b2 c264", 2, 264, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1);
    run_case("max 3x3 s1 SAME 5x6 c300 (misaligned)", 1, 300, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 0, true);
    run_case("max 5x5 s2 pads 2/1 2/1 13x12 b2 c35", 2, 35, 13, 12, 5, 5, 2, 2, 2, 1, 2, 1, 0);
    run_case("avg 5x5 s2 VALID 11x13 c8", 1, 8, 11, 13, 5, 5, 2, 2, 0, 0, 0, 0, 1);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
