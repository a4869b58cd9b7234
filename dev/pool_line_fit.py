#!/usr/bin/env python3
"""The pooling entries' fits on a stored calibration's own samples (no evaluation network), in the form
before (bytes, visits, overlap, tiled windows: src/model/fit.c) and with one more column each: the
tiled elements times the fraction of a 128-byte line one pixel's channels fill (cb_mop_tiled_line,
line = 64, 128 or 256 bytes), or every element times that fraction. Prints the in-sample median / p90
|error| and the same with each sample left out of its own fit, per precision and pooling pass. The fit
is fit.c's (non-negative least squares on the relative error, reweighted towards the least absolute
error), compiled from the lines of src/model/fit.c into a temporary helper.
    python3 dev/pool_line_fit.py docs/results/2026-11-29-bestof/call2/model/h200-cal.json.gz [PASS,...]"""
import gzip, json, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POOLS = ["pool_fwd", "pool_bwd", "avgpool_fwd", "avgpool_bwd", "own_pool_fwd", "own_pool_bwd"]
MAIN = r"""
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static void st(double *e, int n, double *m, double *p) {
    qsort(e, n, sizeof *e, cmpd);
    double pm = 0.5 * (n - 1), pn = 0.9 * (n - 1); int i = (int)pm, j = (int)pn;
    *m = i + 1 < n ? e[i] + (pm - i) * (e[i + 1] - e[i]) : e[n - 1];
    *p = j + 1 < n ? e[j] + (pn - j) * (e[j + 1] - e[j]) : e[n - 1];
}
int main(void) { /* stdin: n nx, then n rows "t x1 .. xnx"; stdout: in-sample median p90, left-out median p90 */
    int n, nx; if (scanf("%d %d", &n, &nx) != 2) return 1;
    double *t = malloc(n * sizeof *t), *X[NCOL_MAX], *XX[NCOL_MAX], *tt = malloc(n * sizeof *tt), *e = malloc(n * sizeof *e), *l = malloc(n * sizeof *l);
    for (int j = 0; j < nx; j++) X[j] = malloc(n * sizeof(double)), XX[j] = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) { if (scanf("%lf", &t[i]) != 1) return 1; for (int j = 0; j < nx; j++) if (scanf("%lf", &X[j][i]) != 1) return 1; }
    double c[NCOL_MAX] = {0}; cb_fit_nnls_fixed(t, (const double *const *)X, nx, n, -1, c);
    for (int i = 0; i < n; i++) e[i] = 100 * fabs(model_at((const double *const *)X, nx, c, i) / t[i] - 1);
    for (int k = 0; k < n; k++) {
        int m = 0;
        for (int i = 0; i < n; i++) if (i != k) { tt[m] = t[i]; for (int j = 0; j < nx; j++) XX[j][m] = X[j][i]; m++; }
        double cc[NCOL_MAX] = {0}; cb_fit_nnls_fixed(tt, (const double *const *)XX, nx, m, -1, cc);
        l[k] = 100 * fabs(model_at((const double *const *)X, nx, cc, k) / t[k] - 1);
    }
    double a, b, x, y; st(e, n, &a, &b); st(l, n, &x, &y); printf("%.2f %.2f %.2f %.2f\n", a, b, x, y);
    return 0;
}
"""


def helper(tmp):
    src = open(os.path.join(ROOT, "src/model/fit.c")).read()
    a = src.index("#define NCOL_MAX")
    b = src.index("bool cb_fit_nnls(const double *t, const double *x1")
    body = re.sub(r"^bool cb_fit_nnls_n\(.*\n", "", src[a:b], flags=re.M)
    c = os.path.join(tmp, "nnls.c")
    with open(c, "w") as f:
        f.write("#include <math.h>\n#include <stdbool.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n")
        f.write(body + MAIN)
    subprocess.run(["cc", "-O2", "-o", os.path.join(tmp, "nnls"), c, "-lm"], check=True)
    return os.path.join(tmp, "nnls")


def shape(v):
    return dict(zip(["n", "c", "h", "w", "k", "r", "s", "p", "q", "sh", "sw", "pt", "pl", "g"], v))


def nbytes(m, q):  # cb_mop_bytes: fp32's
    T, O = 4.0 * q["n"] * q["c"] * q["h"] * q["w"], 4.0 * q["n"] * q["c"] * q["p"] * q["q"]
    return T + O if m.endswith("fwd") else 2 * T + 2 * O


def elems(q): return q["n"] * q["c"] * q["h"] * q["w"]
def window(q): return elems(q) * (q["r"] / max(q["sh"], 1) + q["s"] / max(q["sw"], 1)) / 2 if q["r"] > 0 else 0
def visits(q): return q["n"] * q["c"] * q["p"] * q["q"] * q["r"] * q["s"] if q["r"] > 0 else 0
def tiled(q): return elems(q) if q["r"] > 1 and q["s"] > 1 and q["r"] == q["sh"] and q["s"] == q["sw"] else 0
def frac(q, eb, line): return min(1.0, q["c"] * eb / line)


FORMS = [("before", None), ("tiled x line 64", lambda q, eb: tiled(q) * frac(q, eb, 64)),
         ("tiled x line 128", lambda q, eb: tiled(q) * frac(q, eb, 128)), ("tiled x line 256", lambda q, eb: tiled(q) * frac(q, eb, 256)),
         ("all x line 128", lambda q, eb: elems(q) * frac(q, eb, 128))]


def main():
    cal = json.load((gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rt"))
    passes = sys.argv[2].split(",") if len(sys.argv) > 2 else POOLS
    with tempfile.TemporaryDirectory() as tmp:
        exe = helper(tmp)
        print("in-sample median / p90 | each sample left out: median / p90 (%)")
        print("%-5s %-13s %3s  " % ("prec", "pass", "n") + "  ".join("%-25s" % f for f, _ in FORMS))
        for prec in ("fp32", "bf16"):
            eb = 2 if prec == "bf16" else 4
            for m in passes:
                S = [s for s in cal["samples"] if s["name"] == m and s.get("precision") == prec and s["ms"] > 0]
                if not S:
                    continue
                Q, t = [shape(s["shape"]) for s in S], [s["ms"] / 1e3 for s in S]
                wn, tl = [window(q) for q in Q], [tiled(q) for q in Q]
                base = [[nbytes(m, q) for q in Q], [visits(q) for q in Q]] + ([wn] if any(wn) else [])
                both = any(wn) and 0 < sum(x > 0 for x in tl) < len(Q)
                base += [tl] if both else []
                out = []
                for _, f in FORMS:
                    X = base + ([[f(q, eb) for q in Q]] if f and both else [])
                    inp = "%d %d\n" % (len(t), len(X)) + "\n".join(" ".join("%.12g" % v for v in [t[i]] + [x[i] for x in X]) for i in range(len(t)))
                    r = list(map(float, subprocess.run([exe], input=inp, capture_output=True, text=True, check=True).stdout.split()))
                    out.append("%5.1f / %-5.1f | %5.1f / %-5.1f" % tuple(r))
                print("%-5s %-13s %3d  " % (prec, m, len(S)) + "  ".join(out))


main()
