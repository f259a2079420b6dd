/* Runtime of a cosim generated-C FMU (cosim/codegen/templates/core.c).
 *
 * The model core: storage, output evaluation, derivatives, discrete updates, the fixed-step
 * integrators (explicit Runge-Kutta, or the exact zero-order-hold step of a linear system) and
 * the stepping loop of cosim.simulator.Simulator (integer nanosecond time; steps on the grid
 * k*H; stops at sample hits, time events and communication points; at each stop the outputs
 * are evaluated and the due discrete updates run).  No FMI types here: fmi2.c / fmi3.c wrap it.
 * No static mutable data: any number of instances may run in one process.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*@DEFINES@*/

#define NX1 (NX > 0 ? NX : 1)
#define NXD1 (NXD > 0 ? NXD : 1)
#define NP1 (NP > 0 ? NP : 1)
#define NS1 (NS > 0 ? NS : 1)
#define NG1 (NG > 0 ? NG : 1)
#define NBP1 (NBP > 0 ? NBP : 1)
#define NV1 (NV > 0 ? NV : 1)
#define NIN1 (NIN > 0 ? NIN : 1)
#define NZ1 (NZ > 0 ? NZ : 1)

#define COSIM_EULER 1
#define COSIM_HEUN 2
#define COSIM_MIDPOINT 3
#define COSIM_RK4 4
#define COSIM_ZOH 5
#define COSIM_AB3 6  /* the compiled Simulator's only (cosim.compiled_run), not an export's */

/* All the data of an instance that a state save/restore must keep (a flat struct). */
typedef struct {
    int64_t ticks;       /* time of the last major point [ns] */
    double time;         /* evaluation time [s] (solver stages move it) */
    double mode_time;    /* selects branches of piecewise functions of time */
    double x[NX1];       /* continuous states */
    double xd[NXD1];     /* discrete states */
    double p[NP1];       /* parameters */
    double s[NS1];       /* signals: inputs, outputs (sampled ones held), conversions */
    int64_t event_tick;  /* Model Exchange: the last tick whose events were handled */
    double u_start[NIN1];  /* input interpolation: the inputs at the start of the step */
    double du[NIN1][3];    /* FMI 2 input derivatives of orders 1..3 set for the next step */
    double du_t0;          /* the time the input derivatives refer to [s] */
    int has_du;            /* input derivatives were set since the last step */
    unsigned char zc_pre[NZ1];  /* Model Exchange: event indicator > 0 at the last event */
    int dirty;           /* outputs must be re-evaluated before they are read */
    int initialized;
    /* the time-only outputs' keys (cosim/codegen/time_cache.py): 0 those the derivatives
     * read, 1 all; valid (tc_ok) for the bits of the time and mode time they were made at */
    int tc_ok[2];
    double tc_t[2];
    double tc_mt[2];
} ModelState;

#define ZOH_N (NX + NV + 1)

typedef struct CosimModel Model;

/* Input interpolation within a step: sets the inputs in st.s to their values at time t
 * (FMI 2: the polynomial of the input derivatives; FMI 3: the importer's intermediate update).
 * NULL: inputs are held over the step. */
typedef void (*CosimInputsAt)(Model *M, double t);

struct CosimModel {
    ModelState st;
    CosimInputsAt inputs_at;
    double dx[NX1];
    double z[NZ1];       /* event indicators (read through their FMI variables) */
    const char *error;
    char errbuf[512];
#if COSIM_METHOD == COSIM_ZOH
    double zoh_h[2];                   /* cached step sizes (0: empty) */
    int zoh_next;
    double zoh_T[2][NX1 * ZOH_N];      /* rows of expm([[A B e];[0 0 0]] h): [Phi Gamma g] */
    double zoh_work[8 * ZOH_N * ZOH_N];   /* aug, E, 6 for expm */
#endif
#ifdef COSIM_PROPAGATE
    double prop_z[COSIM_PROP_NZ];      /* cosim/codegen/propagate_c.py: [x, v(t + c h) ...] */
#endif
#if COSIM_TC_AHEAD
    double tc_b[NS1];  /* RK4's look-ahead: time-only values at t + h (time_cache.py) */
#endif
#if COSIM_METHOD == COSIM_AB3
    int ab3_n;                  /* right-hand sides in the history (0, 1, 2) */
    double ab3_h;               /* the step size of the history (0: none) */
    double ab3_f[2][NX1];       /* the history, oldest first */
    int ab3_drop;               /* forget the history at the next stop */
#endif
};

static void cosim_fail(Model *M, const char *msg) {
    if (!M->error) M->error = msg;
}

static const int COSIM_ALL_DUE[NG1] = {/*@ALL_DUE@*/};

/*@TABLES@*/

/*@HELPERS@*/

/* Central difference of one block's C (fn: its outputs into s[], or its derivatives into
 * dx[]) along the tangents of its inputs (signals in[]) and states (xs[]): the tangents of
 * out[] (signals, or state indices when into_dx) go to tres.  The step is
 * h = cbrt(eps) (1 + max|value|) / max|tangent|; inputs, states and outputs are restored. */
static void cosim_fd_block(Model *M, void (*fn)(Model *, double *), int into_dx,
                           const int *in, int nin, const int *xs, int nxs,
                           const int *out, int nout, const double *ts, const double *tx,
                           double *tres) {
    ModelState *S = &M->st;
    double u0[NS1 + NX1], y0[NS1 + NX1], yp[NS1 + NX1], dxb[NX1];
    double vmax = 0.0, tmax = 0.0, h;
    int i, side;
    for (i = 0; i < nin; i++) {
        if (fabs(S->s[in[i]]) > vmax) vmax = fabs(S->s[in[i]]);
        if (fabs(ts[in[i]]) > tmax) tmax = fabs(ts[in[i]]);
    }
    for (i = 0; i < nxs; i++) {
        if (fabs(S->x[xs[i]]) > vmax) vmax = fabs(S->x[xs[i]]);
        if (fabs(tx[xs[i]]) > tmax) tmax = fabs(tx[xs[i]]);
    }
    for (i = 0; i < nout; i++) tres[out[i]] = 0.0;
    if (tmax == 0.0) return;
    h = 6.0554544523933395e-06 * (1.0 + vmax) / tmax;
    for (i = 0; i < nin; i++) u0[i] = S->s[in[i]];
    for (i = 0; i < nxs; i++) u0[nin + i] = S->x[xs[i]];
    if (!into_dx)
        for (i = 0; i < nout; i++) y0[i] = S->s[out[i]];
    for (side = 0; side < 2; side++) {
        double sh = side == 0 ? h : -h;
        for (i = 0; i < nin; i++) S->s[in[i]] = u0[i] + sh * ts[in[i]];
        for (i = 0; i < nxs; i++) S->x[xs[i]] = u0[nin + i] + sh * tx[xs[i]];
        fn(M, dxb);
        for (i = 0; i < nout; i++) {
            double v = into_dx ? dxb[out[i]] : S->s[out[i]];
            if (side == 0) yp[i] = v;
            else tres[out[i]] = (yp[i] - v) / (2.0 * h);
        }
    }
    for (i = 0; i < nin; i++) S->s[in[i]] = u0[i];
    for (i = 0; i < nxs; i++) S->x[xs[i]] = u0[nin + i];
    if (!into_dx)
        for (i = 0; i < nout; i++) S->s[out[i]] = y0[i];
}

/* the time-only outputs of key k hold their values at the current time (bit for bit) */
static int cosim_tc_hit(const ModelState *S, int k) {
    return S->tc_ok[k] && memcmp(&S->tc_t[k], &S->time, sizeof(double)) == 0
           && (!COSIM_TC_MT || memcmp(&S->tc_mt[k], &S->mode_time, sizeof(double)) == 0);
}

static void cosim_tc_set(ModelState *S, int k) {
    S->tc_ok[k] = 1;
    S->tc_t[k] = S->time;
    S->tc_mt[k] = S->mode_time;
}

/*@FUNCTIONS@*/

/* ------------------------------------------------------------------ initial values */
static void cosim_reset(Model *M) {
    ModelState *S = &M->st;
    memset(M, 0, sizeof(Model));
#if NX > 0
    memcpy(S->x, COSIM_X0, sizeof(double) * NX);
#endif
#if NXD > 0
    memcpy(S->xd, COSIM_XD0, sizeof(double) * NXD);
#endif
#if NP > 0
    memcpy(S->p, COSIM_P0, sizeof(double) * NP);
#endif
    S->event_tick = INT64_MIN;
    S->dirty = 1;
}

static void cosim_set_start(Model *M, double start) {
    ModelState *S = &M->st;
    S->ticks = llround(start * 1e9);
    S->time = S->mode_time = (double)S->ticks * 1e-9;
    S->dirty = 1;
}

/* ----------------------------------------------------------------------- schedule */
static int64_t cosim_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static void cosim_due(int64_t tick, int *due) {
    int g;
    for (g = 0; g < NG; g++)
        due[g] = tick >= COSIM_RG_OFFSET[g] && (tick - COSIM_RG_OFFSET[g]) % COSIM_RG_PERIOD[g] == 0;
    (void)tick; (void)due;
}

/* the next sample hit or time event strictly after tick (INT64_MAX if none) */
static int64_t cosim_next_event(int64_t tick) {
    int64_t best = INT64_MAX;
    int i;
    for (i = 0; i < NG; i++) {
        int64_t k = cosim_floordiv(tick - COSIM_RG_OFFSET[i], COSIM_RG_PERIOD[i]) + 1;
        int64_t hit = COSIM_RG_OFFSET[i] + (k > 0 ? k : 0) * COSIM_RG_PERIOD[i];
        if (hit < best) best = hit;
    }
    for (i = 0; i < NBP; i++)
        if (COSIM_BREAKPOINTS[i] > tick) {
            if (COSIM_BREAKPOINTS[i] < best) best = COSIM_BREAKPOINTS[i];
            break;
        }
    (void)tick;
    return best;
}

static int cosim_is_event(int64_t tick) {
    int due[NG1], i;
    cosim_due(tick, due);
    for (i = 0; i < NG; i++)
        if (due[i]) return 1;
    for (i = 0; i < NBP; i++)
        if (COSIM_BREAKPOINTS[i] == tick) return 1;
    return 0;
}

/* A major time point (module docstring of cosim.simulator): outputs (sampled blocks only if
 * due, or all of them at the first point), then the due discrete updates. */
static void cosim_major(Model *M, int64_t tick, int first) {
    ModelState *S = &M->st;
    int due[NG1];
    S->ticks = tick;
    S->time = S->mode_time = (double)tick * 1e-9;
    cosim_due(tick, due);
    cosim_eval(M, S->x, first ? COSIM_ALL_DUE : due);
    cosim_updates(M, due);
    S->dirty = 0;
}

/* outputs of continuous and direct blocks at the current time (after inputs changed) */
static void cosim_ensure_outputs(Model *M) {
    ModelState *S = &M->st;
    if (!S->dirty) return;
    cosim_eval(M, S->x, S->initialized ? NULL : COSIM_ALL_DUE);
    S->dirty = 0;
}

/* derivatives at the current time and state into M->dx */
static void cosim_derivatives(Model *M) {
    ModelState *S = &M->st;
    cosim_eval_deriv(M, S->x);
    cosim_derivs(M, S->x, M->dx);
}

/* ---------------------------------------------------------------------- integrators */
#if NX > 0 && COSIM_METHOD != COSIM_ZOH
static void cosim_rhs(Model *M, double t, const double *x, double *dx) {
    if (M->inputs_at) M->inputs_at(M, t);
    M->st.time = t;
    cosim_eval_deriv(M, x);
    cosim_derivs(M, x, dx);
}

/* one explicit Runge-Kutta step, the same arithmetic as cosim.solvers */
static void cosim_rk_step(Model *M, double t, double h) {
    ModelState *S = &M->st;
    double *y = S->x;
    double k1[NX1], yi[NX1];
    int i;
    S->mode_time = t;
#if COSIM_METHOD == COSIM_EULER
    cosim_rhs(M, t, y, k1);
    for (i = 0; i < NX; i++) y[i] = y[i] + h * k1[i];
#elif COSIM_METHOD == COSIM_HEUN
    double k2[NX1];
    cosim_rhs(M, t, y, k1);
    for (i = 0; i < NX; i++) yi[i] = y[i] + h * k1[i];
    cosim_rhs(M, t + h, yi, k2);
    for (i = 0; i < NX; i++) y[i] = y[i] + (0.5 * h) * (k1[i] + k2[i]);
#elif COSIM_METHOD == COSIM_MIDPOINT
    double k2[NX1];
    cosim_rhs(M, t + 0.0 * h, y, k1);
    for (i = 0; i < NX; i++) yi[i] = y[i] + (h * 0.5) * k1[i];
    cosim_rhs(M, t + 0.5 * h, yi, k2);
    for (i = 0; i < NX; i++) y[i] = y[i] + (h * 1.0) * k2[i];
#else /* RK4 */
    double k2[NX1], k3[NX1], k4[NX1];
    cosim_rhs(M, t, y, k1);
#if COSIM_TC_AHEAD
    cosim_tc_ahead(M, t + 0.5 * h, t + h);  /* the time-only ops at both new times */
#endif
    for (i = 0; i < NX; i++) yi[i] = y[i] + (0.5 * h) * k1[i];
    cosim_rhs(M, t + 0.5 * h, yi, k2);
    for (i = 0; i < NX; i++) yi[i] = y[i] + (0.5 * h) * k2[i];
    cosim_rhs(M, t + 0.5 * h, yi, k3);
    for (i = 0; i < NX; i++) yi[i] = y[i] + h * k3[i];
#if COSIM_TC_AHEAD
    cosim_tc_take(M, t + 0.5 * h, t + h);
#endif
    cosim_rhs(M, t + h, yi, k4);
    for (i = 0; i < NX; i++) y[i] = y[i] + (h / 6.0) * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i]);
#endif
    (void)yi;
}
#endif

#if NX > 0 && COSIM_METHOD == COSIM_AB3
/* one step of cosim.solvers.AB3, the same arithmetic: the RK4 starter (f_n its first stage)
 * while the history holds fewer than two right-hand sides (after a reset, or a step size
 * other than the history's), else y + (h/12)(23 f_n - 16 f_{n-1} + 5 f_{n-2}); f_n joins the
 * history.  Returns the right-hand-side evaluations made. */
static int cosim_ab3_step(Model *M, double t, double h) {
    ModelState *S = &M->st;
    double *y = S->x;
    double fn[NX1];
    int i;
    S->mode_time = t;
    cosim_rhs(M, t, y, fn);
    if (M->ab3_h != 0.0 && h != M->ab3_h) M->ab3_n = 0;
    M->ab3_h = h;
    if (M->ab3_n < 2) {
        double yi[NX1], k2[NX1], k3[NX1], k4[NX1];
        double hh = 0.5 * h;
        memcpy(M->ab3_f[M->ab3_n++], fn, sizeof(double) * NX);
        for (i = 0; i < NX; i++) yi[i] = y[i] + hh * fn[i];
        cosim_rhs(M, t + hh, yi, k2);
        for (i = 0; i < NX; i++) yi[i] = y[i] + hh * k2[i];
        cosim_rhs(M, t + hh, yi, k3);
        for (i = 0; i < NX; i++) yi[i] = y[i] + h * k3[i];
        cosim_rhs(M, t + h, yi, k4);
        for (i = 0; i < NX; i++)
            y[i] = y[i] + (h / 6.0) * (fn[i] + 2.0 * (k2[i] + k3[i]) + k4[i]);
        return 4;
    }
    {
        const double *f1 = M->ab3_f[1], *f2 = M->ab3_f[0];
        for (i = 0; i < NX; i++)
            y[i] = y[i] + (h / 12.0) * (23.0 * fn[i] - 16.0 * f1[i] + 5.0 * f2[i]);
        memcpy(M->ab3_f[0], M->ab3_f[1], sizeof(double) * NX);
        memcpy(M->ab3_f[1], fn, sizeof(double) * NX);
    }
    return 1;
}
#endif

#if COSIM_METHOD == COSIM_ZOH
/* ---- matrix exponential: Pade 13 with scaling and squaring (Higham 2005) ---- */
static void cosim_matmul(int n, const double *A, const double *B, double *C) {
    int i, j, k;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            double acc = 0.0;
            for (k = 0; k < n; k++) acc += A[i * n + k] * B[k * n + j];
            C[i * n + j] = acc;
        }
}

/* solve P X = Q for X (n x n), Gaussian elimination with partial pivoting; Q <- X */
static int cosim_solve(int n, double *P, double *Q) {
    int i, j, k;
    for (k = 0; k < n; k++) {
        int piv = k;
        double best = fabs(P[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (fabs(P[i * n + k]) > best) { best = fabs(P[i * n + k]); piv = i; }
        if (best == 0.0) return -1;
        if (piv != k)
            for (j = 0; j < n; j++) {
                double tp = P[k * n + j]; P[k * n + j] = P[piv * n + j]; P[piv * n + j] = tp;
                tp = Q[k * n + j]; Q[k * n + j] = Q[piv * n + j]; Q[piv * n + j] = tp;
            }
        for (i = k + 1; i < n; i++) {
            double f = P[i * n + k] / P[k * n + k];
            if (f == 0.0) continue;
            for (j = k; j < n; j++) P[i * n + j] -= f * P[k * n + j];
            for (j = 0; j < n; j++) Q[i * n + j] -= f * Q[k * n + j];
        }
    }
    for (k = n - 1; k >= 0; k--)
        for (j = 0; j < n; j++) {
            double acc = Q[k * n + j];
            for (i = k + 1; i < n; i++) acc -= P[k * n + i] * Q[i * n + j];
            Q[k * n + j] = acc / P[k * n + k];
        }
    return 0;
}

/* E = expm(A) (n x n); work holds 6 n x n matrices */
static int cosim_expm(int n, const double *A, double *E, double *work) {
    static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
        1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
        33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0};
    double *As = work, *A2 = work + n * n, *A4 = work + 2 * n * n, *A6 = work + 3 * n * n;
    double *U = work + 4 * n * n, *V = work + 5 * n * n, *T = E;
    double norm = 0.0, scale;
    int i, j, s = 0, nn = n * n;
    for (j = 0; j < n; j++) {
        double c = 0.0;
        for (i = 0; i < n; i++) c += fabs(A[i * n + j]);
        if (c > norm) norm = c;
    }
    if (norm > 5.371920351148152) s = (int)ceil(log2(norm / 5.371920351148152));
    scale = ldexp(1.0, -s);
    for (i = 0; i < nn; i++) As[i] = A[i] * scale;
    cosim_matmul(n, As, As, A2);
    cosim_matmul(n, A2, A2, A4);
    cosim_matmul(n, A4, A2, A6);
    for (i = 0; i < nn; i++) T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
    cosim_matmul(n, A6, T, U);
    for (i = 0; i < nn; i++) U[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
    for (i = 0; i < n; i++) U[i * n + i] += b[1];
    cosim_matmul(n, As, U, T);
    memcpy(U, T, sizeof(double) * nn);
    for (i = 0; i < nn; i++) T[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
    cosim_matmul(n, A6, T, V);
    for (i = 0; i < nn; i++) V[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
    for (i = 0; i < n; i++) V[i * n + i] += b[0];
    /* (V - U) E = (V + U) */
    for (i = 0; i < nn; i++) { As[i] = V[i] - U[i]; E[i] = V[i] + U[i]; }
    if (cosim_solve(n, As, E) != 0) return -1;
    for (; s > 0; s--) {
        cosim_matmul(n, E, E, A2);
        memcpy(E, A2, sizeof(double) * nn);
    }
    return 0;
}

/* the exact step over h: rows [Phi Gamma g] of expm(h [[A B e];[0 0 0]]), cached */
static const double *cosim_zoh_transition(Model *M, double h) {
    int slot, i, j;
    double *aug, *E;
    for (slot = 0; slot < 2; slot++)
        if (M->zoh_h[slot] == h) return M->zoh_T[slot];
    slot = M->zoh_next;
    M->zoh_next = 1 - slot;
    aug = M->zoh_work;
    E = M->zoh_work + ZOH_N * ZOH_N;
    memset(aug, 0, sizeof(double) * ZOH_N * ZOH_N);
    for (i = 0; i < NX; i++) {
        for (j = 0; j < NX; j++) aug[i * ZOH_N + j] = COSIM_ZOH_A[i * NX + j] * h;
        for (j = 0; j < NV; j++) aug[i * ZOH_N + NX + j] = COSIM_ZOH_B[i * NV1 + j] * h;
        aug[i * ZOH_N + NX + NV] = COSIM_ZOH_E[i] * h;
    }
    if (cosim_expm(ZOH_N, aug, E, M->zoh_work + 2 * ZOH_N * ZOH_N) != 0) {
        cosim_fail(M, "matrix exponential of the zero-order-hold step failed");
        return NULL;
    }
    memcpy(M->zoh_T[slot], E, sizeof(double) * NX * ZOH_N);
    M->zoh_h[slot] = h;
    return M->zoh_T[slot];
}

static void cosim_zoh_step(Model *M, double t, double h) {
    ModelState *S = &M->st;
    double v[NV1], xn[NX1];
    const double *T;
    int i, j;
    S->mode_time = t;
    S->time = t;
    cosim_eval_deriv(M, S->x);
    cosim_zoh_inputs(M, v);
    T = cosim_zoh_transition(M, h);
    if (!T) return;
    for (i = 0; i < NX; i++) {
        const double *row = T + i * ZOH_N;
        double acc = 0.0;
        for (j = 0; j < NX; j++) acc += row[j] * S->x[j];
        for (j = 0; j < NV; j++) acc += row[NX + j] * v[j];
        xn[i] = acc + row[NX + NV];
    }
    memcpy(S->x, xn, sizeof(double) * NX);
}
#endif

#ifndef COSIM_FINITE_HINT  /* what to do about a state that is not finite */
#define COSIM_FINITE_HINT "or export with a smaller step"
#endif
static int cosim_check_finite(Model *M, int64_t tick) {
#if NX > 0
    int i;
    for (i = 0; i < NX; i++)
        if (!isfinite(M->st.x[i])) {
            snprintf(M->errbuf, sizeof M->errbuf,
                     "continuous state '%s' became %g at t = %.9g s; check parameters and "
                     "initial conditions, " COSIM_FINITE_HINT,
                     COSIM_X_NAMES[i], M->st.x[i], (double)tick * 1e-9);
            cosim_fail(M, M->errbuf);
            return -1;
        }
#endif
    (void)M; (void)tick;
    return 0;
}

/* Advance to `end` [ns] as Simulator._advance_fixed does; 0 on success. */
static int cosim_advance(Model *M, int64_t end) {
    ModelState *S = &M->st;
    while (S->ticks < end && !M->error) {
        int64_t tick = S->ticks;
        int64_t stop = cosim_next_event(tick);
        if (stop > end) stop = end;
#if NX > 0
        if (COSIM_H_TICKS > 0) {
            int64_t grid = (cosim_floordiv(tick, COSIM_H_TICKS) + 1) * COSIM_H_TICKS;
            if (grid < stop) stop = grid;
        }
        {
            double t = (double)tick * 1e-9, hh = (double)(stop - tick) * 1e-9;
#if COSIM_METHOD == COSIM_ZOH
            cosim_zoh_step(M, t, hh);
#else
            cosim_rk_step(M, t, hh);
#endif
        }
        if (M->error || cosim_check_finite(M, stop)) return -1;
#endif
        if (M->inputs_at) M->inputs_at(M, (double)stop * 1e-9);
        cosim_major(M, stop, 0);
    }
    return M->error ? -1 : 0;
}

/* Model Exchange: handle the events due at the current time (once per tick) */
static void cosim_me_event(Model *M) {
    ModelState *S = &M->st;
    int64_t tick = llround(S->time * 1e9);
    if (tick > S->event_tick && cosim_is_event(tick)) {
        cosim_major(M, tick, 0);
        S->event_tick = tick;
    } else {
        S->ticks = tick;
        S->mode_time = S->time;
        S->dirty = 1;
    }
}

/* ------------------------------------------------------------------ state events */
/* Model Exchange event indicators are the witnesses of the blocks' zero crossings.  The side
 * of each (positive or negative) is kept at the end of every event and of initialization; at
 * the next event a witness on the other side has crossed, and one exactly at 0 has reached the
 * boundary (importers often locate the root exactly there), which counts as crossed too.  A
 * crossing in the declared direction runs its handler.  A witness left exactly at 0 after an
 * event (a bouncing ball put back on the floor, a relay at its threshold) is kept on the side
 * its declared crossing starts from (positive for a falling crossing, negative for a rising
 * one), because importers do not report a witness leaving 0 as an event (CVODE deactivates a
 * root function that starts at 0); a direction-0 crossing keeps the side it arrived on. */
static void cosim_zc_store(Model *M, const int *arrived) {
    double z[NZ1];
    int k;
    cosim_ensure_outputs(M);
    cosim_indicators(M, z);
    for (k = 0; k < NZ; k++) {
        if (z[k] > 0.0) M->st.zc_pre[k] = 1;
        else if (z[k] < 0.0) M->st.zc_pre[k] = 0;
        else if (COSIM_ZC_DIR[k] != 0) M->st.zc_pre[k] = COSIM_ZC_DIR[k] < 0;
        else if (arrived) M->st.zc_pre[k] = (unsigned char)arrived[k];
        else M->st.zc_pre[k] = 0;
    }
}

/* the handlers of the crossings since the last event, in declaration order; returns whether
 * any ran (continuous states may have changed); *terminate set by a terminal crossing */
static int cosim_zc_event(Model *M, int *terminate) {
    double z[NZ1];
    int side[NZ1];
    int k, ran = 0;
    cosim_ensure_outputs(M);
    cosim_indicators(M, z);
    for (k = 0; k < NZ; k++) {
        int pre = M->st.zc_pre[k];
        int now = z[k] > 0.0 ? 1 : z[k] < 0.0 ? 0 : !pre;
        side[k] = now;
        if (now == pre || (COSIM_ZC_DIR[k] != 0 && COSIM_ZC_DIR[k] != (now ? 1 : -1))) continue;
        cosim_zc_handle(M, k);
        ran = 1;
        if (COSIM_ZC_TERMINAL[k]) *terminate = 1;
    }
    if (ran) M->st.dirty = 1;
    cosim_zc_store(M, side);
    (void)side;
    return ran;
}

/* ------------------------------------------------------------ input interpolation */
/* End of a step: the derivatives are used up; the inputs keep their end-of-step values. */
static void cosim_end_interpolation(Model *M) {
    M->inputs_at = NULL;
    M->st.has_du = 0;
    memset(M->st.du, 0, sizeof M->st.du);
}

/* ---------------------------------------------------------- directional derivatives */
/* sens = d unknown / d known . seed at the current time and state: the tangent program
 * cosim_jvp (cosim/codegen/tangent.py: linear parts by their matrices, other blocks by central
 * differences of their own C).  Knowns are inputs (signals) and continuous states; unknowns
 * are signals (outputs, locals) and state derivatives.  The instance's state is restored. */
static void cosim_directional(Model *M, double *const *known, const double *seed, size_t nk,
                              double *const *unknown, size_t nu, int need_derivs, double *sens) {
    ModelState *S = &M->st;
    ModelState saved;
    double *ts, *tx, *tdx;
    size_t k, j;
    (void)need_derivs;
    ts = (double *)calloc(NS1 + 2 * NX1, sizeof(double));
    if (!ts) { cosim_fail(M, "out of memory"); return; }
    tx = ts + NS1;
    tdx = tx + NX1;
    for (k = 0; k < nk; k++) {
        const double *q = known[k];
        if (q >= S->s && q < S->s + NS) ts[q - S->s] += seed[k];
        else if (q >= S->x && q < S->x + NX) tx[q - S->x] += seed[k];
    }
    cosim_ensure_outputs(M);
    memcpy(&saved, S, sizeof(ModelState));
    cosim_jvp(M, ts, tx, tdx);
    memcpy(S, &saved, sizeof(ModelState));
    for (j = 0; j < nu; j++) {
        const double *q = unknown[j];
        if (q >= S->s && q < S->s + NS) sens[j] = ts[q - S->s];
        else if (q >= M->dx && q < M->dx + NX) sens[j] = tdx[q - M->dx];
        else if (q >= S->x && q < S->x + NX) sens[j] = tx[q - S->x];
        else sens[j] = 0.0;
    }
    free(ts);
}

/* the variable table: value reference -> storage */
static double *cosim_var_ptr(Model *M, unsigned int vr, size_t *n, int *kind) {
    ModelState *S = &M->st;
    const CosimVar *v;
    if (vr >= COSIM_NVARS) return NULL;
    v = &COSIM_VARS[vr];
    *n = v->size;
    *kind = v->kind;
    switch (v->area) {
    case AREA_T: return &S->time;
    case AREA_P:  /* (a parameter may be set: the time-only outputs' keys go) */
        S->tc_ok[0] = S->tc_ok[1] = 0;
        return S->p + v->offset;
    case AREA_S: return S->s + v->offset;
    case AREA_X: return S->x + v->offset;
    case AREA_DX: return M->dx + v->offset;
    case AREA_Z:
        cosim_ensure_outputs(M);
        cosim_indicators(M, M->z);
        return M->z + v->offset;
    default: return NULL;
    }
}

/* ------------------------------------------- shared by the FMI wrappers (fmi2.c, fmi3.c) */
typedef enum { MODE_INSTANTIATED, MODE_INIT, MODE_EVENT, MODE_CONT, MODE_STEP, MODE_TERMINATED,
               MODE_ERROR } Mode;

#define COSIM_STATE_MAGIC 0x434f534dU /* 'COSM' */

/* a serialized FMU state: the flat ModelState behind a header naming the model */
typedef struct {
    unsigned int magic;
    unsigned int size;
    char token[64];
    ModelState st;
} SavedState;

/* Leave initialization mode: Co-Simulation runs the first major point and steps from it,
 * Model Exchange evaluates every output and stores the event indicators.  The new mode. */
static Mode cosim_exit_initialization(Model *M, int cosimulation) {
    ModelState *S = &M->st;
    S->initialized = 1;
    if (cosimulation) {
        cosim_major(M, S->ticks, 1);
        S->event_tick = S->ticks;
        return MODE_STEP;
    }
    S->time = S->mode_time = (double)S->ticks * 1e-9;
    cosim_eval(M, S->x, COSIM_ALL_DUE);
    S->dirty = 0;
    cosim_zc_store(M, NULL);
    return MODE_EVENT;
}

/* the bytes of the state st (sizeof(SavedState) of them) */
static void cosim_state_to_bytes(const void *st, void *bytes) {
    SavedState s;
    memset(&s, 0, sizeof s);
    s.magic = COSIM_STATE_MAGIC;
    s.size = (unsigned int)sizeof(SavedState);
    snprintf(s.token, sizeof s.token, "%s", COSIM_TOKEN);
    memcpy(&s.st, st, sizeof(ModelState));
    memcpy(bytes, &s, sizeof s);
}

/* the state in size bytes read into *s: NULL, or why the bytes are not a state of this model */
static const char *cosim_state_from_bytes(const void *bytes, size_t size, SavedState *s) {
    if (size != sizeof(SavedState)) return "wrong size";
    memcpy(s, bytes, sizeof *s);
    if (s->magic != COSIM_STATE_MAGIC || strncmp(s->token, COSIM_TOKEN, sizeof s->token - 1) != 0)
        return "the bytes are not a state of this model";
    return NULL;
}

/* Directional derivatives of the unknowns with respect to the knowns (value references; an
 * array variable takes one seed and gives one sensitivity per element; states_known: Model
 * Exchange, where continuous states may be knowns): the tangent program, cosim_directional.
 * NULL, or why the call is refused. */
static const char *cosim_directional_vr(Model *M, int states_known,
                                        const unsigned int *unknowns, size_t n_unknowns,
                                        const unsigned int *knowns, size_t n_knowns,
                                        const double *seed, size_t n_seed,
                                        double *sensitivity, size_t n_sensitivity) {
    double **kp, **up;
    size_t i, k, size, nk = 0, nu = 0;
    int kind, need_derivs = 0;
    kp = (double **)malloc(sizeof(double *) * (n_seed + n_sensitivity + 1));
    if (!kp) return "out of memory";
    up = kp + n_seed;
    for (i = 0; i < n_knowns; i++) {
        double *ptr = cosim_var_ptr(M, knowns[i], &size, &kind);
        if (!ptr || !(kind == VK_INPUT || (kind == VK_STATE && states_known))) {
            free(kp);
            return "a known is not an input (or, in Model Exchange, a continuous state)";
        }
        for (k = 0; k < size; k++) {
            if (nk == n_seed) { free(kp); return "nSeed too small"; }
            kp[nk++] = ptr + k;
        }
    }
    for (i = 0; i < n_unknowns; i++) {
        double *ptr = cosim_var_ptr(M, unknowns[i], &size, &kind);
        if (!ptr) { free(kp); return "unknown value reference"; }
        if (kind == VK_DER) need_derivs = 1;
        if (kind == VK_INDICATOR) { free(kp); return "event indicators are not unknowns"; }
        for (k = 0; k < size; k++) {
            if (nu == n_sensitivity) { free(kp); return "nSensitivity too small"; }
            up[nu++] = ptr + k;
        }
    }
    if (nk != n_seed || nu != n_sensitivity) {
        free(kp);
        return "nSeed / nSensitivity differ from the number of elements of the variables";
    }
    cosim_directional(M, kp, seed, nk, up, nu, need_derivs, sensitivity);
    free(kp);
    return NULL;
}
