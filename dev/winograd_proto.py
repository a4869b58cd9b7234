#!/usr/bin/python3
# Prototype of src/cuda/conv_winograd.cu: Winograd F(2x2,3x3) for 3x3 stride-1 convolutions with
# TF-style padding (pad_top/pad_left given, trailing pads implied, any sign), all three phases,
# with the same tiling, chunking, layouts and index arithmetic as the CUDA kernels, checked against
# torch.nn.functional.conv2d and its autograd gradients on odd shapes.
#   /usr/bin/python3 dev/winograd_proto.py        (prints one line per case, exits 1 on a failure)
import sys

import numpy as np
import torch
import torch.nn.functional as F

BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)  # B^T
G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]], np.float64)
AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)  # A^T


def round4(v):
    return (v + 3) // 4 * 4


def input_transform(x, c0, C, n0, nb, th, tw, pt, pl, t_rows, dt):
    """V (16, C, Tp) or, t_rows, (16, T, Cp): B^T d B of the 4x4 patches at stride 2 (zeros outside x)."""
    N, Ct, H, W = x.shape
    T = nb * th * tw
    V = np.zeros((16, T, round4(C)) if t_rows else (16, C, round4(T)), dt)
    for t in range(T):
        n, r = divmod(t, th * tw)
        ty, tx = divmod(r, tw)
        h0, w0 = 2 * ty - pt, 2 * tx - pl
        d = np.zeros((C, 4, 4), dt)
        for i in range(4):
            for j in range(4):
                h, w = h0 + i, w0 + j
                if 0 <= h < H and 0 <= w < W:
                    d[:, i, j] = x[n0 + n, c0:c0 + C, h, w]
        v = np.einsum('ai,cij,bj->cab', BT, d, BT).reshape(C, 16).astype(dt)
        if t_rows:
            V[:, t, :C] = v.T
        else:
            V[:, :, t] = v.T
    return V


def filter_transform(w, Cin, Kout, flip, dt):
    """U (16, Cin, Kp) = G g G^T; g = w (Kout, Cin, 3, 3), or flip: w (Cin, Kout, 3, 3) rotated 180."""
    U = np.zeros((16, Cin, round4(Kout)), dt)
    for i in range(Cin):
        for o in range(Kout):
            g = w[i, o, ::-1, ::-1] if flip else w[o, i]
            U[:, i, o] = (G @ g.astype(np.float64) @ G.T).reshape(16).astype(dt)
    return U


def output_transform(M, y, k0, K, n0, nb, th, tw, bias, relu):
    P, Q = y.shape[2], y.shape[3]
    for t in range(nb * th * tw):
        n, r = divmod(t, th * tw)
        ty, tx = divmod(r, tw)
        for k in range(K):
            o = AT @ M[:, k, t].astype(np.float64).reshape(4, 4) @ AT.T
            for i in range(2):
                for j in range(2):
                    p, q = 2 * ty + i, 2 * tx + j
                    if p < P and q < Q:
                        v = o[i, j] + (bias[k] if bias is not None else 0)
                        y[n0 + n, k0 + k, p, q] = max(v, 0) if relu else v


def wino_conv(x, w, P, Q, pt, pl, groups, flip, bias, relu, nb_max, dt):
    """y (N, Ktot, P, Q) of the 3x3 stride-1 correlation of x; flip: w is (Cin, Kout/g, 3, 3), rotated."""
    N, Ct, H, W = x.shape
    Kt = (w.shape[1] if flip else w.shape[0]) * (groups if flip else 1)
    Cg, Kg = Ct // groups, Kt // groups
    th, tw = (P + 1) // 2, (Q + 1) // 2
    y = np.zeros((N, Kt, P, Q), np.float64)
    for g in range(groups):
        wg = w[g * Cg:(g + 1) * Cg] if flip else w[g * Kg:(g + 1) * Kg]
        U = filter_transform(wg, Cg, Kg, flip, dt)
        for n0 in range(0, N, nb_max):
            nb = min(nb_max, N - n0)
            V = input_transform(x, g * Cg, Cg, n0, nb, th, tw, pt, pl, False, dt)
            M = np.einsum('xck,xct->xkt', U.astype(dt), V)[:, :Kg].astype(dt)  # the 16 GEMMs
            output_transform(M, y, g * Kg, Kg, n0, nb, th, tw,
                             None if bias is None else bias[g * Kg:(g + 1) * Kg], relu)
    return y


def wino_forward(x, w, b, P, Q, pt, pl, groups, relu, nb_max=2, dt=np.float64):
    return wino_conv(x, w, P, Q, pt, pl, groups, False, b, relu, nb_max, dt)


def wino_backward_data(dy, w, H, W, pt, pl, groups, nb_max=2, dt=np.float64):
    # the full correlation of dy with the rotated, transposed filter: pads 2 - pad
    return wino_conv(dy, w, H, W, 2 - pt, 2 - pl, groups, True, None, False, nb_max, dt)


def wino_backward_filter(x, dy, pt, pl, groups, nb_max=2, splits=3, dt=np.float64):
    """dw[k][c] = G^T (sum over tiles of (A dY A^T)[k] * V[c]) G."""
    N, Ct, H, W = x.shape
    Kt, P, Q = dy.shape[1], dy.shape[2], dy.shape[3]
    Cg, Kg = Ct // groups, Kt // groups
    th, tw = (P + 1) // 2, (Q + 1) // 2
    AM = AT.T  # A (4x2)
    dw = np.zeros((Kt, Cg, 3, 3))
    for g in range(groups):
        dU = np.zeros((splits, 16, Kg, Cg), dt)
        for n0 in range(0, N, nb_max):
            nb = min(nb_max, N - n0)
            T = nb * th * tw
            V = input_transform(x, g * Cg, Cg, n0, nb, th, tw, pt, pl, True, dt)  # (16, T, Cp)
            D = np.zeros((16, T, round4(Kg)), dt)  # (16, T, Kp): A dy A^T of the 2x2 output tiles
            for t in range(T):
                n, r = divmod(t, th * tw)
                ty, tx = divmod(r, tw)
                d = np.zeros((Kg, 2, 2))
                for i in range(2):
                    for j in range(2):
                        p, q = 2 * ty + i, 2 * tx + j
                        if p < P and q < Q:
                            d[:, i, j] = dy[n0 + n, g * Kg:(g + 1) * Kg, p, q]
                D[:, t, :Kg] = np.einsum('ai,kij,bj->kab', AM, d, AM).reshape(Kg, 16).T.astype(dt)
            kchunk = ((T + splits - 1) // splits + 7) // 8 * 8
            for s in range(splits):  # split over tiles, accumulated over chunks (beta = 1 after the first)
                a, e = s * kchunk, min(T, (s + 1) * kchunk)
                if a < e:
                    dU[s] += np.einsum('xtk,xtc->xkc', D[:, a:e, :Kg], V[:, a:e, :Cg]).astype(dt)
        S = dU.astype(np.float64).sum(0)
        for k in range(Kg):
            for c in range(Cg):
                dw[g * Kg + k, c] = G.T @ S[:, k, c].reshape(4, 4) @ G
    return dw


def torch_ref(x, w, b, P, Q, pt, pl, groups, relu, dy):
    H, W = x.shape[2], x.shape[3]
    pb, pr = (P - 1) + 3 - H - pt, (Q - 1) + 3 - W - pl  # trailing pads, may be < 0
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    xp = F.pad(xt, (pl, pr, pt, pb))  # negative pads crop
    y = F.conv2d(xp, wt, torch.tensor(b) if b is not None else None, groups=groups)
    assert y.shape[2] == P and y.shape[3] == Q, (y.shape, P, Q)
    if relu:
        y = torch.relu(y)
    y0 = F.conv2d(xp, wt, None, groups=groups)  # the gradients of the plain convolution
    y0.backward(torch.tensor(dy))
    return y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()


def nerr(a, b):
    return np.linalg.norm((a - b).ravel()) / max(np.linalg.norm(b.ravel()), 1e-30)


def main():
    rng = np.random.default_rng(7)
    # (label, N, C, H, W, K, P, Q, pad_top, pad_left, groups, relu)
    cases = [
        ("pad 1 C16->32 b3 (even)", 3, 16, 12, 10, 32, 12, 10, 1, 1, 1, True),
        ("VALID C7->9 b1 (odd P/Q)", 1, 7, 11, 9, 9, 9, 7, 0, 0, 1, False),
        ("SAME C3->5 b2 13x11", 2, 3, 13, 11, 5, 13, 11, 1, 1, 1, False),
        ("asymmetric pads 0/2, C5->6", 2, 5, 7, 8, 6, 7, 8, 0, 2, 1, False),
        ("negative pads -1/-1 (crop), C4->3", 1, 4, 9, 10, 3, 5, 6, -1, -1, 1, True),
        ("big pad 2/2 (full), C2->3 b3", 3, 2, 5, 6, 3, 7, 8, 2, 2, 1, False),
        ("groups 2 C6->10 pad 1", 2, 6, 9, 9, 10, 9, 9, 1, 1, 2, False),
        ("1x1 image pad 1, C3->2", 2, 3, 1, 1, 2, 1, 1, 1, 1, 1, False),
    ]
    worst = {"fwd": 0, "bwd-data": 0, "bwd-filter": 0}
    bad = 0
    for (label, N, C, H, W, K, P, Q, pt, pl, g, relu) in cases:
        x = rng.uniform(-1, 1, (N, C, H, W))
        w = rng.uniform(-1, 1, (K, C // g, 3, 3))
        b = rng.uniform(-1, 1, K)
        dy = rng.uniform(-1, 1, (N, K, P, Q))
        yr, dxr, dwr = torch_ref(x, w, b, P, Q, pt, pl, g, relu, dy)
        for dt, tol in ((np.float64, 1e-12), (np.float32, 1e-6)):
            ye = wino_forward(x, w, b, P, Q, pt, pl, g, relu, dt=dt)
            dxe = wino_backward_data(dy, w, H, W, pt, pl, g, dt=dt)
            dwe = wino_backward_filter(x, dy, pt, pl, g, dt=dt)
            errs = (nerr(ye, yr), nerr(dxe, dxr), nerr(dwe, dwr))
            ok = max(errs) <= tol
            bad += not ok
            if dt == np.float32:
                for key, e in zip(worst, errs):
                    worst[key] = max(worst[key], e)
            print("%s %-36s %s fwd %.1e  bwd-data %.1e  bwd-filter %.1e (tol %.0e)" %
                  ("ok  " if ok else "FAIL", label, np.dtype(dt).name, *errs, tol))
    print("worst float32 normalised errors: " + ", ".join("%s %.1e" % kv for kv in worst.items()))
    print("%d failed" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
