// Runs src/storage/format.cu's window and conversion kernels (the zero-padded input copies of
// channel-padded and TF SAME convolutions, their gradient cut back, the weight conversions) on the
// CPU through dev/emu/cuda_runtime.h and cuda_bf16.h, fp32 and bf16, against plain loops: a copy
// must be exact. Shapes with odd channel counts, rows and columns added, channels dropped, batch 1,
// a destination that allows only narrow stores. Outputs start as NaN (0xff bytes), so an element
// left unwritten fails. Built and run by dev/format_emu.sh; exits 1 when a check fails.
#include FORMAT_SRC
#include "emu_storage.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failed, passed;

static float val(size_t i) { return (float)((i * 2654435761u) % 1000) / 37.f - 13.f; } // exact in bf16 up to rounding, never all zero
static float get(const void *p, size_t i, int bf) { return bf ? __bfloat162float(((const __nv_bfloat16 *)p)[i]) : ((const float *)p)[i]; }
static void put(void *p, size_t i, float v, int bf) {
    if (bf) ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    else ((float *)p)[i] = v;
}
static bool same(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// dst (n, hd, wd, cd) <- src (n, hs, ws, cs), NHWC; off: dst's byte offset (its alignment)
static void window_nhwc(int bf, int n, int hs, int ws, int cs, int hd, int wd, int cd, int off) {
    size_t es = bf ? 2 : 4, ns = (size_t)n * hs * ws * cs, nd = (size_t)n * hd * wd * cd;
    buffer s(ns * es), d(nd * es + 16);
    for (size_t i = 0; i < ns; i++) put(s.p, i, val(i), bf);
    void *dp = (char *)d.p + off;
    cb_fmt_window_nhwc(n, hs, ws, cs, s.p, hd, wd, cd, dp, bf);
    size_t bad = 0;
    for (int b = 0; b < n; b++)
        for (int y = 0; y < hd; y++)
            for (int x = 0; x < wd; x++)
                for (int c = 0; c < cd; c++) {
                    size_t i = (((size_t)b * hd + y) * wd + x) * cd + c;
                    float want = y < hs && x < ws && c < cs ? get(s.p, (((size_t)b * hs + y) * ws + x) * cs + c, bf) : 0.f;
                    bad += !same(get(dp, i, bf), want);
                }
    if (bad) failed++, printf("FAIL window NHWC %s n%d %dx%dx%d -> %dx%dx%d (dst +%d B): %zu of %zu wrong\n", bf ? "bf16" : "fp32", n, hs, ws, cs, hd,
                              wd, cd, off, bad, nd);
    else passed++;
}

static void window_nchw(int bf, int planes, int hs, int ws, int hd, int wd) {
    size_t es = bf ? 2 : 4, ns = (size_t)planes * hs * ws, nd = (size_t)planes * hd * wd;
    buffer s(ns * es), d(nd * es);
    for (size_t i = 0; i < ns; i++) put(s.p, i, val(i), bf);
    cb_fmt_window_nchw(planes, hs, ws, s.p, hd, wd, d.p, bf);
    size_t bad = 0;
    for (int p = 0; p < planes; p++)
        for (int y = 0; y < hd; y++)
            for (int x = 0; x < wd; x++) {
                float want = y < hs && x < ws ? get(s.p, ((size_t)p * hs + y) * ws + x, bf) : 0.f;
                bad += !same(get(d.p, ((size_t)p * hd + y) * wd + x, bf), want);
            }
    if (bad) failed++, printf("FAIL window NCHW %s %d planes %dx%d -> %dx%d: %zu wrong\n", bf ? "bf16" : "fp32", planes, hs, ws, hd, wd, bad);
    else passed++;
}

// fp32 NCHW (n, cs, h, w) -> fmt (n, cd, h, w) and back (the weights' copy and the gradient's return)
static void convert_pad(int fmt, int n, int cs, int cd, int h, int w) {
    dims a = {n, cs, h, w}, b = {n, cd, h, w};
    std::vector<float> x(a.count());
    for (size_t i = 0; i < x.size(); i++) x[i] = rnd(fmt, val(i));
    size_t es = fmt & CB_FMT_BF16 ? 2 : 4;
    buffer d(b.count() * es), back(a.count() * 4);
    cb_fmt_convert_pad(n, cs, cd, h, w, x.data(), 0, d.p, fmt);
    std::vector<float> got = from_storage(fmt, b, d.p), again((size_t)a.count());
    size_t bad = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < cd; c++)
            for (int p = 0; p < h * w; p++) {
                float want = c < cs ? x[((size_t)i * cs + c) * h * w + p] : 0.f;
                bad += !same(got[((size_t)i * cd + c) * h * w + p], want);
            }
    cb_fmt_convert_pad(n, cd, cs, h, w, d.p, fmt, back.p, 0);
    for (size_t i = 0; i < x.size(); i++) bad += !same(((float *)back.p)[i], x[i]);
    if (bad) failed++, printf("FAIL convert_pad fmt %d n%d c%d->%d %dx%d: %zu wrong\n", fmt, n, cs, cd, h, w, bad);
    else passed++;
}

// the backward of a concatenation that takes over an input's ReLU: dst (n, cs, inner) <- the slice at
// off of the gradient (n, cd, inner) where the concatenation's output (mask) is above 0, else +0;
// the gradient's bits copied. Masks of both signs, exact zeros and -0; shift: the pointers offset
// by that many elements (the unit narrows to the element)
static void concat_masked(int bf, int64_t n, int64_t cd, int64_t cs, int64_t off, int64_t inner, int shift) {
    size_t es = bf ? 2 : 4, nb = (size_t)(n * cd * inner), ns = (size_t)(n * cs * inner), sh = (size_t)shift * es;
    buffer g(nb * es + sh), m(nb * es + sh), d(ns * es + sh);
    void *gp = (char *)g.p + sh, *mp = (char *)m.p + sh, *dp = (char *)d.p + sh;
    for (size_t i = 0; i < nb; i++) {
        put(gp, i, val(i), bf);
        float v = val(i * 7 + 3);
        put(mp, i, i % 5 == 0 ? 0.f : i % 11 == 0 ? -0.f : v, bf);
    }
    cb_fmt_concat_slice_masked(n, cd, cs, off, inner, bf, dp, gp, mp);
    size_t bad = 0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = 0; k < cs * inner; k++) {
            size_t at = (size_t)(r * cd * inner + off * inner + k), o = (size_t)(r * cs * inner + k);
            float want = get(mp, at, bf) > 0 ? get(gp, at, bf) : 0.f, got = get(dp, o, bf);
            bad += !same(got, want) || std::signbit(got) != std::signbit(want);
        }
    if (bad) failed++, printf("FAIL concat masked %s n%lld C %lld<-%lld at %lld inner %lld (+%d): %zu of %zu wrong\n", bf ? "bf16" : "fp32",
                              (long long)n, (long long)cd, (long long)cs, (long long)off, (long long)inner, shift, bad, ns);
    else passed++;
}

// the one-pass NHWC concatenation forward: dst (rows, sum c) <- the inputs' rows side by side,
// bit for bit; taken (1) where an input's rows are narrower than 16-byte units, k <= 8 and the
// elements are fp32 (and wherever k <= 8 under $CONVBENCH_CONCAT=gather: dev/format_emu.sh runs
// this a second time so), else 0 and nothing written (the destination starts as NaN: an element
// left unwritten fails)
static void concat_gather(int bf, int64_t rows, std::vector<int64_t> c, bool narrow) {
    const char *mode = getenv("CONVBENCH_CONCAT");
    bool gather = mode && !strcmp(mode, "gather");
    int want_taken = c.size() <= 8 && (gather || (narrow && !bf));
    size_t es = bf ? 2 : 4;
    int64_t cd = 0;
    for (int64_t x : c) cd += x;
    std::vector<buffer *> src;
    std::vector<const void *> ptr;
    for (size_t q = 0; q < c.size(); q++) {
        src.push_back(new buffer((size_t)(rows * c[q]) * es));
        for (int64_t i = 0; i < rows * c[q]; i++) put(src.back()->p, (size_t)i, val((size_t)i * 13 + q), bf);
        ptr.push_back(src.back()->p);
    }
    buffer d((size_t)(rows * cd) * es);
    int taken = cb_fmt_concat_gather(rows, cd, (int)c.size(), c.data(), ptr.data(), es, d.p);
    size_t bad = 0;
    for (int64_t r = 0; r < rows && taken; r++)
        for (int64_t q = 0, off = 0; q < (int64_t)c.size(); off += c[q], q++)
            for (int64_t k = 0; k < c[q]; k++)
                bad += !same(get(d.p, (size_t)(r * cd + off + k), bf), get(ptr[q], (size_t)(r * c[q] + k), bf));
    if (bad || taken != want_taken)
        failed++, printf("FAIL concat gather %s rows %lld, %zu inputs, C %lld: taken %d (want %d), %zu wrong\n", bf ? "bf16" : "fp32",
                         (long long)rows, c.size(), (long long)cd, taken, want_taken, bad);
    else passed++;
    for (buffer *b : src) delete b;
}

int main() {
    for (int bf = 0; bf < 2; bf++) {
        int a = bf ? 8 : 4;
        // channels padded (the first layer's 3 or 4, odd inner counts), as cb_store_conv_cpad pads them
        static const int cs[] = {1, 3, 4, 7, 57, 93};
        for (int c : cs) {
            int cp = (c + a - 1) / a * a;
            window_nhwc(bf, 2, 5, 3, c, 5, 3, cp, 0);
            window_nhwc(bf, 1, 4, 6, c, 4, 6, cp, 0);
            window_nhwc(bf, 2, 5, 3, cp, 5, 3, c, 0);  // the gradient cut back
            window_nhwc(bf, 3, 5, 4, c, 6, 5, cp, 0);  // a row and a column added too (TF SAME)
            window_nhwc(bf, 2, 6, 5, cp, 5, 4, c, 0);  // and dropped
        }
        window_nhwc(bf, 2, 4, 4, 6, 5, 5, 8, 4);       // dst aligned for 4 bytes only: narrow stores
        if (bf) window_nhwc(bf, 2, 4, 4, 6, 5, 5, 8, 2); // (2-byte aligned: bf16 only)
        window_nhwc(bf, 1, 3, 3, 16, 4, 4, 16, 0);
        // the same channels, rows and columns added or dropped alone (window_rows_kernel: vectors
        // across pixels and image rows whatever C): odd C, an image row narrower than a vector,
        // batch 1, a total that ends within a vector, dst aligned for less than 16 bytes
        static const int rc[][7] = {// n, hs, ws, c, hd, wd, dst byte offset
                                    {3, 5, 4, 65, 6, 5, 0}, {2, 6, 5, 65, 5, 4, 0}, {1, 7, 7, 33, 9, 8, 0}, {2, 3, 1, 3, 4, 2, 0},
                                    {3, 2, 2, 1, 3, 3, 0},  {1, 9, 9, 5, 8, 8, 0},  {2, 5, 4, 7, 6, 5, 4},  {2, 4, 3, 9, 5, 4, 8},
                                    {4, 4, 4, 16, 5, 5, 0}, {2, 5, 5, 3, 5, 5, 0}};
        for (auto &r : rc) window_nhwc(bf, r[0], r[1], r[2], r[3], r[4], r[5], r[3], r[6]);
        if (bf) window_nhwc(bf, 2, 5, 4, 7, 6, 5, 7, 2); // (2-byte aligned: bf16 only)
        window_nchw(bf, 6, 5, 3, 6, 4);
        window_nchw(bf, 1, 7, 7, 7, 7);
        window_nchw(bf, 4, 6, 5, 5, 4);
    }
    for (int fmt = 1; fmt < 4; fmt++) {
        convert_pad(fmt, 5, 3, 8, 3, 3);
        convert_pad(fmt, 4, 57, 64, 1, 1);
        convert_pad(fmt, 2, 7, 7, 3, 2);
        convert_pad(fmt, 1, 93, 96, 2, 3);
    }
    static const int64_t cc[][5] = {// n, c_dst, c_src, c_off, inner: NHWC rows (inner 1) with each unit, NCHW blocks
                                    {51, 275, 74, 0, 1}, {51, 275, 74, 74, 1}, {7, 275, 127, 148, 1}, {33, 256, 64, 128, 1},
                                    {9, 12, 5, 7, 1},    {300, 18, 6, 12, 1},  {1, 3, 1, 2, 1},      {40, 2048, 1000, 8, 1},
                                    {4, 20, 7, 13, 9},   {2, 16, 8, 8, 49},    {1000, 37, 37, 0, 1}, {3, 40, 16, 24, 1}};
    for (int bf = 0; bf < 2; bf++)
        for (auto &c : cc)
            for (int shift = 0; shift < 2; shift++) concat_masked(bf, c[0], c[1], c[2], c[3], c[4], shift);
    for (int bf = 0; bf < 2; bf++) {
        concat_gather(bf, 37, {69, 101, 33, 74}, true);          // an Inception-like module's odd branches
        concat_gather(bf, 1, {3, 1}, true);                      // one row
        concat_gather(bf, 300, {5}, true);                       // one input (narrow)
        concat_gather(bf, 20, {1, 2, 3, 4, 5, 6, 7, 9}, true);   // eight inputs
        concat_gather(bf, 20, {1, 2, 3, 4, 5, 6, 7, 9, 3}, true); // nine: each input copied
        concat_gather(bf, 9, {64, 128, 32, 32}, false);          // 16-byte rows: the warp per row
        concat_gather(bf, 9, {64, 127, 33, 32}, true);           // one narrow among them
    }
    printf("format emulation: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
