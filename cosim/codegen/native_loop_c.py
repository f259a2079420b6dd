"""The C source of the native master loop (:mod:`cosim.native_loop`).

One generic loop, compiled once per source text and cached (:mod:`cosim.codegen.cache`);
what differs between masters (the subsystems' C models, the offsets of their inputs'
polynomials and of their outputs in the C state, the connections, orders and rates) is data
in an ``NPlan``.  Per macro step ``[t_k, t_k + H]`` (the Python loop's
:meth:`MasterScheduler._macro <cosim.master.MasterScheduler._macro>` with
:class:`~cosim.coupling.Jacobi` or :class:`~cosim.coupling.GaussSeidel`, operation for
operation):

* outputs of slower subsystems whose time has come are published (``publish_pending``);
* each due subsystem's inputs: the polynomial of its source's history
  (:meth:`SignalHistory.polynomial <cosim.extrapolation.SignalHistory.polynomial>`, orders 0
  to 3: the same closed forms), scaled as :meth:`MasterScheduler.input_polys
  <cosim.master.MasterScheduler.input_polys>` scales it; a subsystem held in C gets it written
  into its C state as ``CouplingInput``'s codec lays it out (``t0, n, c0, ..., 0``), a Python
  one into ``py_in`` for the callback;
* each due subsystem steps: held in C by its library's ``cosim_sim_held_step``, a Python one
  through the ``pystep`` callback (its ``set_inputs``, ``do_step``, ``get_outputs``);
* the outputs are pushed onto the histories (``SignalHistory.push``'s common case), or kept
  until their time (a subsystem of rate > 1);
* the newest value of every signal goes into the row buffer.

Jacobi steps the C subsystems before the Python ones (the plan orders them so: inputs are
fixed before and outputs published after the steps, so the results do not depend on it): a C
step that does not complete restores every C state of the macro step and hands the whole step
back to the Python loop (status 1), which runs it as it always does (and raises its own error).
Gauss-Seidel keeps the given order; the plan accepts it only when no Python subsystem steps
before a C one.
"""

from .history_c import HISTORY_PUSH

SOURCE = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
""" + HISTORY_PUSH + r"""

typedef int (*held_t)(void *, int64_t, int64_t, double *, int64_t *, void *);
typedef int (*pystep_t)(int, int64_t, int64_t);  /* h 0: refresh the outputs at t */
typedef int (*outputs_t)(void *);

#define DEPTH 5           /* the master's SignalHistory depth */
#define TERMS 4           /* CouplingInput's coefficients at most */
#define ST_HANDBACK 1     /* a C step did not complete: the macro step is the Python loop's */
#define ST_PYTHON 2       /* a Python subsystem raised (the exception is kept in Python) */
#define ST_ENDED 3        /* a Python subsystem ended the run (the step completed) */
#define ST_SETTLE 4       /* a C refresh of feedthrough outputs failed: the Python loop settles */

typedef struct {
    int n_subs, n_sig, gauss_seidel, n_settle;
    const int *order;          /* stepping order (subsystem indices) */
    const int *py;             /* per subsystem: 1 stepped in Python (pystep), 0 held in C */
    void **model, **step, **outputs, **keep;  /* per subsystem: the C model, its
                                    * cosim_sim_held_step and cosim_sim_outputs, the snapshot
                                    * of its state at the step's start */
    const int64_t *model_size; /* per subsystem: bytes of the model (the snapshot's size) */
    double **xd, **sig;        /* per subsystem: its C state's xd and signals */
    const int64_t *dt, *rate;
    const int *in_start;       /* n_subs + 1 */
    const int *in_sig, *in_order, *in_off;  /* per input: source signal, order, xd offset */
    const double *in_scale, *in_bias;
    const int *out_start;      /* n_subs + 1 */
    const int *out_sig, *out_off;  /* per output: its signal, its offset in the C signals */
    int64_t *hist_t;           /* n_sig x DEPTH, oldest first */
    double *hist_v;
    int *hist_n;
    double *py_in;             /* per input: n, c0..c3 (a Python subsystem's) */
    double *py_out;            /* per output (a Python subsystem writes its outputs here) */
    int64_t *cnt, *acc;        /* per subsystem 8 counts: of the last C step, accumulated */
    double *tbuf;              /* 512 doubles: the stops' times of a C step */
    int *pend;                 /* per subsystem: outputs waiting for pend_t (rate > 1) */
    int64_t *pend_t;
    double *pend_v;            /* per output */
    int64_t *sub_steps;        /* per subsystem: steps completed in this call */
    void *pystep;
    int64_t *save_t;           /* Gauss-Seidel: the histories and pending flags at the step's */
    double *save_v;            /* start (its outputs are published as it goes: a step handed */
    int *save_n, *save_pend;   /* back finds them as they were) */
    const int *settle;         /* subsystems whose feedthrough outputs are settled at each
                                * point (rate 1), in dependency order */
    const int *has_in;         /* per subsystem: it has inputs (settled only then) */
    const int *out_ft;         /* per output: a feedthrough output (settled) */
    int64_t *wall_ns;          /* per subsystem: the wall time of its steps and refreshes */
} NPlan;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void push(NPlan *p, int s, int64_t t, double v) {
    hist_push(p->hist_t, p->hist_v, p->hist_n, DEPTH, s, t, v);
}

/* W (rows: powers of tau, columns: the n = 3 or 4 samples at tau = x, seconds):
 * cosim.extrapolation.lagrange_rows, the same operations in the same order */
static void lagrange_rows(int n, const double *x, double w[4][4]) {
    for (int j = 0; j < n; j++) {
        double o[3];
        int q = 0;
        for (int k = 0; k < n; k++)
            if (k != j) o[q++] = x[k];
        if (n == 3) {
            double a = o[0], b = o[1];
            double d = (x[j] - a) * (x[j] - b);
            w[0][j] = a * b / d;
            w[1][j] = -(a + b) / d;
            w[2][j] = 1.0 / d;
        } else {
            double a = o[0], b = o[1], cc = o[2];
            double d = (x[j] - a) * (x[j] - b) * (x[j] - cc);
            w[0][j] = -(a * b * cc) / d;
            w[1][j] = (a * b + a * cc + b * cc) / d;
            w[2][j] = -(a + b + cc) / d;
            w[3][j] = 1.0 / d;
        }
    }
}

/* input j's coefficients from t (ticks) into c; returns their number
 * (MasterScheduler.input_polys with SignalHistory.polynomial, orders 0 to 3) */
static int poly(const NPlan *p, int j, int64_t t, int constant, double *c) {
    int s = p->in_sig[j];
    const int64_t *ts = p->hist_t + (size_t)s * DEPTH;
    const double *vs = p->hist_v + (size_t)s * DEPTH;
    int m = p->hist_n[s];
    double sc = p->in_scale[j], bi = p->in_bias[j];
    int scaled = sc != 1.0 || bi != 0.0;
    int order = p->in_order[j];
    int n = constant || m < 2 ? 1 : (order + 1 < m ? order + 1 : m);
    if (n == 1) {
        c[0] = vs[m - 1];
    } else if (n == 2) {  /* the closed form, anchored at the newest sample */
        int64_t ta = ts[m - 2], tb = ts[m - 1];
        double va = vs[m - 2], vb = vs[m - 1];
        double slope = (vb - va) / ((double)(tb - ta) * 1e-9);
        c[0] = vb - slope * ((double)(tb - t) * 1e-9);
        c[1] = slope;
    } else {  /* through the last n samples: the Lagrange weights' rows times the values */
        double x[4], v[4], w[4][4];
        for (int i = 0; i < n; i++) {
            x[i] = (double)(ts[m - n + i] - t) * 1e-9;
            v[i] = vs[m - n + i];
        }
        lagrange_rows(n, x, w);
        for (int r = 0; r < n; r++) {
            double acc = w[r][0] * v[0] + w[r][1] * v[1] + w[r][2] * v[2];
            c[r] = n == 4 ? acc + w[r][3] * v[3] : acc;
        }
    }
    if (scaled) {
        c[0] = c[0] * sc + bi;
        for (int k = 1; k < n; k++) c[k] = c[k] * sc;
    }
    return n;
}

static void set_inputs(NPlan *p, int i, int64_t t, int constant) {
    for (int j = p->in_start[i]; j < p->in_start[i + 1]; j++) {
        double c[TERMS];
        int n = poly(p, j, t, constant, c);
        if (p->py[i]) {
            double *d = p->py_in + (size_t)j * (TERMS + 1);
            d[0] = (double)n;
            for (int k = 0; k < n; k++) d[1 + k] = c[k];
        } else {
            double *d = p->xd[i] + p->in_off[j];
            d[0] = (double)t * 1e-9;
            d[1] = (double)n;
            for (int k = 0; k < TERMS; k++) d[2 + k] = k < n ? c[k] : 0.0;
        }
    }
}

/* subsystem i's outputs at t: published, or (a step ending after this macro step) kept */
static void get_outputs(NPlan *p, int i, int64_t t, int later) {
    for (int j = p->out_start[i]; j < p->out_start[i + 1]; j++) {
        double v = p->py[i] ? p->py_out[j] : p->sig[i][p->out_off[j]];
        if (later) p->pend_v[j] = v;
        else push(p, p->out_sig[j], t, v);
    }
    if (later) {
        p->pend[i] = 1;
        p->pend_t[i] = t;
    }
}

/* the feedthrough outputs at t made consistent (Settler.settle, one sweep in dependency
 * order): each settled subsystem's inputs the newest values, its outputs evaluated again,
 * its feedthrough outputs pushed.  0, or ST_SETTLE (*q: where the C failed or a Python
 * subsystem raised, its exception kept). */
static int settle(NPlan *p, int64_t t, int *q) {
    for (*q = 0; *q < p->n_settle; (*q)++) {
        int i = p->settle[*q];
        if (!p->has_in[i]) continue;
        set_inputs(p, i, t, 1);
        int64_t w = now_ns();
        int failed = p->py[i] ? ((pystep_t)p->pystep)(i, t, 0) < 0
                              : ((outputs_t)p->outputs[i])(p->model[i]) != 0;
        p->wall_ns[i] += now_ns() - w;
        if (failed) return ST_SETTLE;
        for (int j = p->out_start[i]; j < p->out_start[i + 1]; j++)
            if (p->out_ft[j])
                push(p, p->out_sig[j], t, p->py[i] ? p->py_out[j] : p->sig[i][p->out_off[j]]);
    }
    return 0;
}

static void publish_pending(NPlan *p, int64_t t) {
    for (int i = 0; i < p->n_subs; i++) {
        if (!p->pend[i] || p->pend_t[i] > t) continue;
        for (int j = p->out_start[i]; j < p->out_start[i + 1]; j++)
            push(p, p->out_sig[j], p->pend_t[i], p->pend_v[j]);
        p->pend[i] = 0;
    }
}

static int due(const NPlan *p, int i, int64_t kk) {
    return p->rate[i] == 1 || kk % p->rate[i] == 0;
}

/* subsystem i's step from t over its rate times H: 0, ST_ENDED, ST_PYTHON or ST_HANDBACK */
static int step_one(NPlan *p, int i, int64_t t, int64_t H) {
    int64_t hs = p->rate[i] * H, w = now_ns();
    int st = 0;
    if (p->py[i]) {
        int r = ((pystep_t)p->pystep)(i, t, hs);
        st = r < 0 ? ST_PYTHON : r == 1 ? ST_ENDED : 0;
    } else if (((held_t)p->step[i])(p->model[i], t + hs, p->dt[i], p->tbuf,
                                    p->cnt + 8 * (size_t)i, p->keep[i]) != 0) {
        st = ST_HANDBACK;
    }
    p->wall_ns[i] += now_ns() - w;
    return st;
}

/* the C states stepped in this macro step before the one that failed, as they were */
static void undo(NPlan *p, int upto, int64_t kk) {
    for (int q = 0; q < upto; q++) {
        int i = p->order[q];
        if (!p->py[i] && due(p, i, kk)) memcpy(p->model[i], p->keep[i], (size_t)p->model_size[i]);
    }
}

/* Run n_steps macro steps of H ticks from t0 (macro step k0); rows[k * n_sig + s] is signal s
 * at t0 + (k + 1) H.  Returns the macro steps completed; *status 0, ST_HANDBACK (the step
 * after them is the Python loop's: every C state as at its start; its inputs written),
 * ST_PYTHON (a Python subsystem raised in it: *sub), ST_SETTLE (its steps completed, the
 * settling failed at the *sub-th settled subsystem: a C evaluation, or a Python subsystem
 * that raised), ST_ENDED (a Python subsystem ended the run in the last completed step:
 * *sub). */
int cosim_native_run(NPlan *p, int64_t t0, int64_t H, int64_t k0, int n_steps, double *rows,
                     int *status, int *sub) {
    *status = 0;
    for (int k = 0; k < n_steps; k++) {
        int64_t t = t0 + (int64_t)k * H, te = t + H, kk = k0 + k;
        int ended = -1, st;
        publish_pending(p, t);
        if (p->gauss_seidel) {
            memcpy(p->save_t, p->hist_t, sizeof(int64_t) * DEPTH * (size_t)p->n_sig);
            memcpy(p->save_v, p->hist_v, sizeof(double) * DEPTH * (size_t)p->n_sig);
            memcpy(p->save_n, p->hist_n, sizeof(int) * (size_t)p->n_sig);
            memcpy(p->save_pend, p->pend, sizeof(int) * (size_t)p->n_subs);
        } else {
            for (int q = 0; q < p->n_subs; q++) {
                int i = p->order[q];
                if (due(p, i, kk)) set_inputs(p, i, t, 0);
            }
        }
        for (int q = 0; q < p->n_subs; q++) {
            int i = p->order[q];
            if (!due(p, i, kk)) continue;
            if (p->gauss_seidel) set_inputs(p, i, t, 0);
            st = step_one(p, i, t, H);
            if (st == ST_HANDBACK) {
                undo(p, q, kk);
                if (p->gauss_seidel) {
                    memcpy(p->hist_t, p->save_t, sizeof(int64_t) * DEPTH * (size_t)p->n_sig);
                    memcpy(p->hist_v, p->save_v, sizeof(double) * DEPTH * (size_t)p->n_sig);
                    memcpy(p->hist_n, p->save_n, sizeof(int) * (size_t)p->n_sig);
                    memcpy(p->pend, p->save_pend, sizeof(int) * (size_t)p->n_subs);
                }
                *status = st; *sub = i; return k;
            }
            if (st == ST_PYTHON) { *status = st; *sub = i; return k; }
            if (st == ST_ENDED) ended = i;
            if (p->gauss_seidel) get_outputs(p, i, t + p->rate[i] * H, p->rate[i] > 1);
        }
        for (int q = 0; q < p->n_subs; q++) {
            int i = p->order[q];
            if (!due(p, i, kk)) continue;
            if (!p->gauss_seidel) get_outputs(p, i, t + p->rate[i] * H, p->rate[i] > 1);
            p->sub_steps[i]++;
            if (!p->py[i])
                for (int c = 1; c < 8; c++) p->acc[8 * (size_t)i + c] += p->cnt[8 * (size_t)i + c];
        }
        publish_pending(p, te);
        if (p->n_settle) {
            int q;
            st = settle(p, te, &q);
            if (st) { *status = st; *sub = q; return k; }
        }
        double *row = rows + (size_t)k * p->n_sig;
        for (int s = 0; s < p->n_sig; s++)
            row[s] = p->hist_v[(size_t)s * DEPTH + p->hist_n[s] - 1];
        if (ended >= 0) { *status = ST_ENDED; *sub = ended; return k + 1; }
    }
    return n_steps;
}
"""
