// FLOP, multiply, byte and workspace counts of each convolution algorithm, per direction.
//
// Notation: input (N, C, H, W), filters (K, C/g, R, S), output (N, K, P, Q), e bytes per element.
// X = N*C*H*W, Wt = K*(C/g)*R*S, Y = N*K*P*Q elements; macs = Y * (C/g) * R * S.
//   GEMM (im2col)   2*macs FLOPs; the column matrix (C*R*S, P*Q) of one image is the workspace,
//                   written and read once per image: bytes = e*(X + Wt + Y) + 2*e*N*C*R*S*P*Q.
//                   A 1x1, stride-1, unpadded convolution needs no column matrix.
//   implicit GEMM   2*macs FLOPs, e*(X + Wt + Y) bytes, no workspace.
//   Winograd F(4x4,3x3), 3x3 stride 1 ungrouped: T = N*ceil(P/4)*ceil(Q/4) output tiles of 4x4,
//                   each a 6x6 input tile. Multiplies: 36*T*C*K (direct: 9*16*T*C*K for full
//                   tiles, 4x more). Transforms as dense matrix products:
//                     input  B^T d B   (6x6)(6x6)(6x6)     2*(216+216) = 864 FLOPs per tile and channel
//                     filter G g G^T   (6x3)(3x3)(3x6)     2*(54+108)  = 324 FLOPs per (C, K) pair
//                     output A^T m A   (4x6)(6x6)(6x4)     2*(144+96)  = 480 FLOPs per tile and filter
//                   Workspace: the three transformed tensors, e*36*(T*C + C*K + T*K), written and read.
//                   Backward data is the same with C and K swapped and tiles over (H, W); backward
//                   filter transforms x (864), dy (6x4 tiles: 480) and the 6x6 sums back to 3x3
//                   (324 per pair): the same three terms.
//   FFT             stride 1, ungrouped, filter larger than 1x1. Each plane is padded to
//                   Hf x Wf = (P+R-1) x (Q+S-1); a real 2D FFT costs 2.5*n*log2(n) FLOPs (n = Hf*Wf),
//                   the half spectrum has Hf*(Wf/2+1) complex points. Transforms: N*C inputs,
//                   C*K filters, N*K inverse; pointwise: N*C*K*Hf*(Wf/2+1) complex multiply-adds
//                   (4 multiplies, 8 FLOPs). Workspace: the three spectra, 2*e per point.
//   direct          every other layer: cb_layer_cost's FLOPs; bytes in + out (+ dy, y backward).
#include "model/model.h"

#include <math.h>
#include <string.h>

static double ceil_div(double a, double b) { return ceil(a / b); }

static bool has_phase(const cb_cost *c, cb_phase ph) {
    return (ph == CB_PHASE_FORWARD ? c->fwd_flops : ph == CB_PHASE_BWD_DATA ? c->bwd_data_flops : c->bwd_filter_flops) > 0;
}

static double phase_flops(const cb_cost *c, cb_phase ph) {
    return ph == CB_PHASE_FORWARD ? c->fwd_flops : ph == CB_PHASE_BWD_DATA ? c->bwd_data_flops : c->bwd_filter_flops;
}

void cb_algo_cost_of(const cb_net *net, int i, cb_phase ph, cb_algo a, int e, cb_algo_cost *c) {
    memset(c, 0, sizeof *c);
    const cb_layer *L = &net->layers[i];
    cb_cost lc;
    cb_layer_cost(net, i, &lc);
    double X = 0, Y = (double)cb_shape_count(L->out);
    for (int p = 0; p < L->nparents; p++) X += (double)cb_shape_count(net->layers[L->parents[p]].out);
    if (L->op == CB_OP_CONV) {
        if (a == CB_ALGO_DIRECT) return;
        const cb_window *w = &L->p.conv.win;
        double N = (double)L->in.n, C = (double)L->in.c, H = (double)L->in.h, W = (double)L->in.w;
        double K = (double)L->out.c, P = (double)L->out.h, Q = (double)L->out.w, R = w->r, S = w->s;
        double cg = L->p.conv.cin, g = L->p.conv.groups > 0 ? L->p.conv.groups : 1;
        double Wt = K * cg * R * S, macs = Y * cg * R * S;
        double epi = phase_flops(&lc, ph) - 2 * macs; // bias, batch norm, ReLU folded in
        if (epi < 0) epi = 0;
        double io = e * (X + Wt + Y);
        bool s1 = w->stride_h == 1 && w->stride_w == 1;
        switch (a) {
        case CB_ALGO_GEMM: {
            bool no_col = R == 1 && S == 1 && s1 && w->pad_top == 0 && w->pad_left == 0 && P == H && Q == W;
            double col = no_col ? 0 : C * R * S * P * Q; // one image
            c->applicable = true;
            c->mults = macs;
            c->flops = 2 * macs + epi;
            c->workspace = e * col;
            c->bytes = io + 2.0 * e * N * col;
            break;
        }
        case CB_ALGO_IMPLICIT_GEMM:
            c->applicable = true;
            c->mults = macs;
            c->flops = 2 * macs + epi;
            c->bytes = io;
            break;
        case CB_ALGO_WINOGRAD: {
            if (R != 3 || S != 3 || !s1 || g != 1) return;
            double T = ph == CB_PHASE_BWD_DATA ? N * ceil_div(H, 4) * ceil_div(W, 4) : N * ceil_div(P, 4) * ceil_div(Q, 4);
            double Cin = ph == CB_PHASE_BWD_DATA ? K : C, Kout = ph == CB_PHASE_BWD_DATA ? C : K;
            c->applicable = true;
            c->mults = 36 * T * Cin * Kout;
            c->flops = 2 * c->mults + 864 * T * Cin + 324 * Cin * Kout + 480 * T * Kout + epi;
            c->workspace = e * 36 * (T * Cin + Cin * Kout + T * Kout);
            c->bytes = io + 2 * c->workspace;
            break;
        }
        case CB_ALGO_FFT: {
            if (!s1 || g != 1 || (R == 1 && S == 1)) return;
            double Hf = P + R - 1, Wf = Q + S - 1, n = Hf * Wf, hs = Hf * (floor(Wf / 2) + 1);
            double fft = 2.5 * n * log2(n);
            c->applicable = true;
            c->mults = 4 * N * C * K * hs;
            c->flops = fft * (N * C + C * K + N * K) + 8 * N * C * K * hs + epi;
            c->workspace = 2.0 * e * hs * (N * C + C * K + N * K);
            c->bytes = io + 2 * c->workspace;
            break;
        }
        default:
            return;
        }
        return;
    }
    if (L->op == CB_OP_FC) {
        if (a != CB_ALGO_GEMM) return;
        double N = (double)L->in.n, Ci = (double)L->in.c, K = (double)L->p.fc.k;
        c->applicable = true;
        c->mults = N * Ci * K;
        c->flops = phase_flops(&lc, ph);
        c->bytes = e * (N * Ci + Ci * K + N * K);
        return;
    }
    if (a != CB_ALGO_DIRECT || L->op == CB_OP_INPUT || L->op == CB_OP_RESHAPE) return;
    bool copy = L->op == CB_OP_CONCAT; // no arithmetic, only data movement
    if (!copy && !has_phase(&lc, ph)) return;
    if (copy && ph == CB_PHASE_BWD_FILTER) return;
    c->applicable = true;
    c->flops = phase_flops(&lc, ph);
    if (ph == CB_PHASE_FORWARD) c->bytes = e * (X + Y + (double)lc.params);
    else if (ph == CB_PHASE_BWD_DATA) c->bytes = e * (X + (copy ? Y : 2 * Y)); // dy and y or the saved state in, dx out
    else c->bytes = e * (X + Y + (double)lc.params);
}
