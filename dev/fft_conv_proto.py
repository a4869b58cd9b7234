#!/usr/bin/python3
"""The FFT convolution of src/cuda/conv_fft.cu, step by step in PyTorch (CPU), checked against
torch.nn.functional.conv2d and its gradients. It documents the math the CUDA code follows:

  stride 1, groups 1, TF-style padding (pad_top, pad_left given, trailing pads implied by P, Q and
  possibly negative). Hp = P + R - 1 and Wp = Q + S - 1 are the rows and columns of the padded
  input the convolution reads; the FFT tile is Hf x Wf >= Hp x Wp (7-smooth sizes, Wf even).

  pad:   xt[n,c,i,j] = x[n,c,i-pt,j-pl] where 0 <= i-pt < H, 0 <= j-pl < W, i < Hp, j < Wp; else 0
         wt[k,c,r,s] = w[k,c,r,s] for r < R, s < S, else 0;  dyt[n,k,p,q] = dy for p < P, q < Q
  R2C:   X = rfft2(xt), W = rfft2(wt), DY = rfft2(dyt): Hf x (Wf/2+1) frequencies per plane,
         stored [plane][Fpad] (Fpad = the frequency count rounded up to 32)
  per frequency f, complex GEMMs (no index wraps around the tile because Hf >= P + R - 1):
    forward          Y[n,k]  = sum_c X[n,c] * conj(W[k,c])     (circular cross-correlation)
    backward data    DX[n,c] = sum_k DY[n,k] * W[k,c]           (circular convolution)
    backward filter  DW[k,c] = sum_n conj(DY[n,k]) * X[n,c]     (cross-correlation of x with dy)
  C2R (unnormalised, as cuFFT) and crop, scaled by 1/(Hf*Wf):
    y[n,k,p,q]  = Yt[n,k,p,q] / (Hf Wf) + b[k]   (then ReLU when fused)
    dx[n,c,h,v] = DXt[n,c,h+pt,v+pl] / (Hf Wf) where h+pt < Hp and v+pl < Wp, else 0
    dw[k,c,r,s] = DWt[k,c,r,s] / (Hf Wf)          db[k] = sum of dy over n, p, q

Run: python3 dev/fft_conv_proto.py   (prints one line per case, exits 1 on a failure)
"""
import sys

import torch
import torch.nn.functional as F


def smooth(n, even=False):
    """the smallest m >= n whose prime factors are 2, 3, 5, 7 (even when asked): cuFFT's fast sizes"""
    m = max(n, 1)
    while True:
        t = m
        for f in (2, 3, 5, 7):
            while t % f == 0:
                t //= f
        if t == 1 and (not even or m % 2 == 0):
            return m
        m += 1


def tile(N, C, H, W, K, R, S, pt, pl, P, Q):
    Hp, Wp = P + R - 1, Q + S - 1
    Hf, Wf = smooth(Hp), smooth(Wp, even=True)
    return Hp, Wp, Hf, Wf


def pad_input(x, pt, pl, Hp, Wp, Hf, Wf):
    N, C, H, W = x.shape
    xt = torch.zeros(N, C, Hf, Wf, dtype=x.dtype)
    for i in range(Hf):          # written as the CUDA kernel reads it: one output element each
        h = i - pt
        if not (0 <= h < H and i < Hp):
            continue
        for j in range(Wf):
            v = j - pl
            if 0 <= v < W and j < Wp:
                xt[:, :, i, j] = x[:, :, h, v]
    return xt


def place(a, Hf, Wf):
    """a (.., A, B) at the top-left of a zero Hf x Wf tile"""
    t = torch.zeros(*a.shape[:-2], Hf, Wf, dtype=a.dtype)
    t[..., : a.shape[-2], : a.shape[-1]] = a
    return t


def spectra(t):
    """rfft2 of each plane, laid out [freq][plane] as a matrix per frequency (the GEMM's view)"""
    s = torch.fft.rfft2(t)                       # (A, B, Hf, Wf/2+1)
    A, B = s.shape[:2]
    return s.reshape(A, B, -1).permute(2, 0, 1)  # (F, A, B)


def inverse(s, A, B, Hf, Wf):
    """C2R of (F, A, B) spectra: cuFFT's C2R is unnormalised, irfft2 divides by Hf*Wf"""
    s = s.permute(1, 2, 0).reshape(A, B, Hf, Wf // 2 + 1)
    return torch.fft.irfft2(s, s=(Hf, Wf)) * (Hf * Wf)


def fft_forward(x, w, b, pt, pl, P, Q, relu):
    N, C, H, W = x.shape
    K, _, R, S = w.shape
    Hp, Wp, Hf, Wf = tile(N, C, H, W, K, R, S, pt, pl, P, Q)
    X = spectra(pad_input(x, pt, pl, Hp, Wp, Hf, Wf))    # (F, N, C)
    Wt = spectra(place(w, Hf, Wf))                        # (F, K, C)
    Y = torch.einsum("fnc,fkc->fnk", X, Wt.conj())
    yt = inverse(Y, N, K, Hf, Wf)
    y = yt[:, :, :P, :Q] / (Hf * Wf)
    if b is not None:
        y = y + b.view(1, K, 1, 1)
    return y.clamp_min(0) if relu else y


def fft_backward_data(dy, w, H, W, pt, pl):
    N, K, P, Q = dy.shape
    _, C, R, S = w.shape
    Hp, Wp, Hf, Wf = tile(N, C, H, W, K, R, S, pt, pl, P, Q)
    DY = spectra(place(dy, Hf, Wf))                       # (F, N, K)
    Wt = spectra(place(w, Hf, Wf))                        # (F, K, C)
    DX = torch.einsum("fnk,fkc->fnc", DY, Wt)
    dxt = inverse(DX, N, C, Hf, Wf)
    dx = torch.zeros(N, C, H, W, dtype=dy.dtype)
    for h in range(H):
        i = h + pt
        if i >= Hp:              # a row the forward never read (negative trailing padding)
            continue
        for v in range(W):
            j = v + pl
            if j < Wp:
                dx[:, :, h, v] = dxt[:, :, i, j] / (Hf * Wf)
    return dx


def fft_backward_filter(x, dy, R, S, pt, pl):
    N, C, H, W = x.shape
    _, K, P, Q = dy.shape
    Hp, Wp, Hf, Wf = tile(N, C, H, W, K, R, S, pt, pl, P, Q)
    X = spectra(pad_input(x, pt, pl, Hp, Wp, Hf, Wf))    # (F, N, C)
    DY = spectra(place(dy, Hf, Wf))                       # (F, N, K)
    DW = torch.einsum("fnk,fnc->fkc", DY.conj(), X)
    dwt = inverse(DW, K, C, Hf, Wf)
    return dwt[:, :, :R, :S] / (Hf * Wf), dy.sum(dim=(0, 2, 3))


def check(N, C, H, W, K, R, S, pt, pl, P, Q, relu=False):
    """TF-style padding: trailing pads pb = P - 1 + R - H - pt and pr likewise (negative crops)"""
    torch.manual_seed(N * 1000 + C * 100 + R)
    x = torch.rand(N, C, H, W, dtype=torch.float64) * 2 - 1
    w = torch.rand(K, C, R, S, dtype=torch.float64) * 2 - 1
    b = torch.rand(K, dtype=torch.float64) * 2 - 1
    pb, pr = P - 1 + R - H - pt, Q - 1 + S - W - pl
    x.requires_grad_(True), w.requires_grad_(True), b.requires_grad_(True)
    yr = F.conv2d(F.pad(x, (pl, pr, pt, pb)), w, b)
    assert yr.shape == (N, K, P, Q), yr.shape
    if relu:
        yr = yr.clamp_min(0)
    dy = torch.rand_like(yr) * 2 - 1
    yr.backward(dy)
    with torch.no_grad():
        y = fft_forward(x, w, b, pt, pl, P, Q, relu)
        dyr = dy * (yr > 0) if relu else dy   # the backward kernels see the masked gradient
        dx = fft_backward_data(dyr, w, H, W, pt, pl)
        dw, db = fft_backward_filter(x, dyr, R, S, pt, pl)

    def nerr(a, r):
        return ((a - r).norm() / r.norm()).item()

    errs = [nerr(y, yr), nerr(dx, x.grad), nerr(dw, w.grad), nerr(db, b.grad)]
    Hp, Wp, Hf, Wf = tile(N, C, H, W, K, R, S, pt, pl, P, Q)
    ok = max(errs) < 1e-10
    print("%s N%d C%d %dx%d K%d %dx%d pad (%d,%d | %d,%d) P%dxQ%d tile %dx%d: y %.1e dx %.1e dw %.1e db %.1e"
          % ("ok  " if ok else "FAIL", N, C, H, W, K, R, S, pt, pl, pb, pr, P, Q, Hf, Wf, *errs))
    return ok


def float32_errors(N, C, H, W, K, R, S, pt, pl, P, Q):
    """normalised errors of the three phases computed in float32 (as with cuFFT single precision)
    against float64: the rounding test_gpu's tolerance has to cover"""
    torch.manual_seed(7)
    x = torch.rand(N, C, H, W, dtype=torch.float64) * 2 - 1
    w = torch.rand(K, C, R, S, dtype=torch.float64) * 2 - 1
    dy = torch.rand(N, K, P, Q, dtype=torch.float64) * 2 - 1
    f = lambda t: t.float()
    pairs = [(fft_forward(x, w, None, pt, pl, P, Q, False), fft_forward(f(x), f(w), None, pt, pl, P, Q, False)),
             (fft_backward_data(dy, w, H, W, pt, pl), fft_backward_data(f(dy), f(w), H, W, pt, pl)),
             (fft_backward_filter(x, dy, R, S, pt, pl)[0], fft_backward_filter(f(x), f(dy), R, S, pt, pl)[0])]
    return [((b.double() - a).norm() / a.norm()).item() for a, b in pairs]


if __name__ == "__main__":
    cases = [
        # N  C  H   W  K  R  S  pt pl  P   Q
        (2, 5, 24, 20, 12, 9, 9, 0, 0, 16, 12),    # test_gpu's 9x9 VALID
        (1, 3, 13, 11, 5, 3, 3, 1, 1, 13, 11),     # 3x3 SAME
        (3, 7, 17, 14, 10, 6, 5, 2, 2, 17, 14),    # SAME, even filter: asymmetric (top 2, bottom 3)
        (1, 4, 12, 9, 3, 4, 7, 1, 3, 12, 9),       # SAME-like, non-square, odd channels
        (2, 3, 15, 13, 6, 5, 5, 2, 1, 10, 9),      # trailing pads negative (rows 12.., cols 10.. unread)
        (1, 1, 86, 86, 4, 7, 7, 0, 0, 80, 80),     # ECE408 conv1
        (2, 9, 10, 10, 11, 11, 11, 5, 5, 10, 10),  # filter as large as the image
        (1, 2, 7, 30, 3, 1, 9, 0, 4, 7, 30),       # 1 x 9
    ]
    ok = all([check(*c, relu=(i % 3 == 2)) for i, c in enumerate(cases)])
    # float32 rounding of the whole algorithm on test_gpu's FFT-able cases and L2-like layers
    for c in [(2, 5, 24, 20, 12, 9, 9, 0, 0, 16, 12), (3, 1, 86, 86, 4, 7, 7, 0, 0, 80, 80),
              (16, 64, 27, 27, 192, 5, 5, 2, 2, 27, 27), (2, 256, 28, 28, 256, 3, 3, 1, 1, 28, 28),
              (8, 64, 64, 64, 128, 9, 9, 0, 0, 56, 56)]:
        print("float32 errors (y, dx, dw) N%d C%d %dx%d K%d %dx%d: %.1e %.1e %.1e"
              % (c[0], c[1], c[2], c[3], c[4], c[5], c[6], *float32_errors(*c)))
    print("all ok" if ok else "FAILED")
    sys.exit(0 if ok else 1)
