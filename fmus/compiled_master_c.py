"""The C source of the compiled macro-step loop (:mod:`fmus.compiled_master`).

One generic loop, compiled once per source text with gcc (the flags of the FMU
export, :mod:`fmus.cgen.build`) and cached; what differs between masters (the
FMUs' function addresses, value references, connections, orders) is data in a
:class:`Plan` structure.  Per macro step ``[t_k, t_k + H]``:

* Jacobi: every FMU's inputs from the histories at ``t_k`` (``fmi2SetReal``, and
  ``fmi2SetRealInputDerivatives`` up to its derivative order), then every
  ``fmi2DoStep``, then every ``fmi2GetReal`` pushed to the histories at ``t_k + H``;
  Gauss-Seidel: set, step and get one FMU after the other;
* feedthrough outputs at ``t_k + H``: the FMUs with feedthrough, in dependency order,
  get their inputs as the newest values and their outputs are read again (the
  Python master's one ordered sweep: no algebraic loop);
* the newest value of every signal goes into the row buffer.

Integer (and Enumeration) and Boolean ports (FMI 2: 32-bit ``fmi2Integer``, ``int``
``fmi2Boolean``, exact in a double) are held, never extrapolated: each subsystem's
Real ports come first in its ranges and are set/got in one call, the others after them
one by one with ``fmi2SetInteger``/``fmi2SetBoolean`` (``fmi2GetInteger``/
``fmi2GetBoolean``).  The plan gives them only exact sources (no unit scale or offset),
so the value set is the source's value.

The polynomial through the last ``order + 1`` samples (times in integer ticks,
offsets in seconds) is the one :class:`cosim.extrapolation.SignalHistory` gives:
the same closed form for order 1, Newton's divided differences expanded to powers
of ``tau = t - t_k`` for orders 2-3 (equal to the Python weights to round-off).

FMI 3 Co-Simulation FMUs (mixed with FMI 2 ones or not) are called through their own
signatures (``fmi3SetFloat64``, ``fmi3SetInt32``, ``fmi3SetBoolean`` with 1-byte booleans,
``fmi3DoStep`` with its four results).  Their inputs flagged ``intermediateUpdate`` get the
step's polynomial in their :class:`~fmus.fmi3_update.UpdateEnv` (the FMU's callback is C,
:mod:`fmus.fmi3_update`).  A step that needs an event iteration, returned early, asked to
terminate or was discarded is finished by the Python loop's own code through the ``finish``
callback (rare: once per event).

Multi-rate: a subsystem of rate ``r`` steps at macro steps ``k`` with ``k % r == 0`` over
``r H``; its outputs wait (``pend``) until the macro step that reaches their time, as the
Python master's ``pending``, and only rate-1 subsystems settle feedthrough outputs.
"""

from cosim.codegen.history_c import HISTORY_PUSH

from .fmi3_update import HEADER

SOURCE = r"""
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
""" + HEADER + HISTORY_PUSH + r"""
typedef int (*set_real_t)(void *, const unsigned int *, size_t, const double *);
typedef int (*get_real_t)(void *, const unsigned int *, size_t, double *);
typedef int (*do_step_t)(void *, double, double, int);
typedef int (*set_der_t)(void *, const unsigned int *, size_t, const int *, const double *);
typedef int (*set_int_t)(void *, const unsigned int *, size_t, const int *);
typedef int (*get_int_t)(void *, const unsigned int *, size_t, int *);
/* FMI 3: every get and set also gives the number of values */
typedef int (*set3_real_t)(void *, const unsigned int *, size_t, const double *, size_t);
typedef int (*get3_real_t)(void *, const unsigned int *, size_t, double *, size_t);
typedef int (*set3_int_t)(void *, const unsigned int *, size_t, const int32_t *, size_t);
typedef int (*get3_int_t)(void *, const unsigned int *, size_t, int32_t *, size_t);
typedef int (*set3_bool_t)(void *, const unsigned int *, size_t, const bool *, size_t);
typedef int (*get3_bool_t)(void *, const unsigned int *, size_t, bool *, size_t);
typedef int (*do_step3_t)(void *, double, double, bool, bool *, bool *, bool *, double *);
/* Python finishes an FMI 3 step that needs it: 0 go on, 1 terminated, -1 an exception */
typedef int (*finish_t)(int, int, int, int, int, double, double, double, double);

#define DEPTH 4
#define ST_PYTHON 8      /* the finishing callback raised (Python keeps the exception) */
#define ST_TERMINATED 9  /* an FMI 3 FMU asked to terminate: the step completes */

typedef struct {
    int n_subs, n_sig, gauss_seidel, n_settle;
    void **comp;
    void **set_real, **get_real, **do_step, **set_der;
    const int *order;        /* stepping order (subsystem indices) */
    const int *no_set_prior; /* per subsystem: noSetFMUStatePriorToCurrentPoint */
    const int *in_start;     /* n_subs + 1 */
    const unsigned int *in_vr;
    const int *in_sig, *in_order;
    const double *in_scale, *in_bias;
    const int *deriv_order;  /* per subsystem: input derivative orders it takes (0: none) */
    const int *out_start;    /* n_subs + 1 */
    const unsigned int *out_vr;
    const int *out_sig, *out_ft;
    const int *settle;       /* subsystems with feedthrough, in dependency order */
    int64_t *hist_t;         /* n_sig x DEPTH, oldest first */
    double *hist_v;
    int *hist_n;
    double *in_buf, *der_buf, *out_buf;
    int *ord_buf;
    void **set_int, **get_int, **set_bool, **get_bool;
    const int *in_nreal, *out_nreal; /* per subsystem: its Real ports (first in its range) */
    const int *in_kind, *out_kind;   /* per port: 0 Real, 1 Integer/Enumeration, 2 Boolean */
    const int *fmi3;         /* per subsystem: 1 for an FMI 3 FMU */
    const int64_t *rate;     /* per subsystem: steps every rate macro steps */
    int64_t *sub_t;          /* per subsystem: the end of its last step (ticks) */
    int64_t *sub_steps;      /* per subsystem: steps taken in this call */
    int *pend;               /* per subsystem: outputs waiting for pend_t (rate > 1) */
    int64_t *pend_t;
    double *pend_v;          /* per output port */
    void **env;              /* per subsystem: its UpdateEnv (FMI 3 intermediate), or NULL */
    const int *inter_on;     /* per subsystem: every intermediate input connected */
    const int *inter_pos;    /* per input port: its index in env, or -1 */
    void *finish;            /* finish_t */
} Plan;

static void push(Plan *p, int s, int64_t t, double v) {
    hist_push(p->hist_t, p->hist_v, p->hist_n, DEPTH, s, t, v);
}

/* coefficients c[0..3] (powers of tau = t - t0 in s) through the last order+1 samples */
static int poly(const Plan *p, int s, int order, int64_t t0, double *c) {
    const int64_t *ts = p->hist_t + (size_t)s * DEPTH;
    const double *vs = p->hist_v + (size_t)s * DEPTH;
    int m = p->hist_n[s];
    int n = order + 1 < m ? order + 1 : m;
    c[0] = c[1] = c[2] = c[3] = 0.0;
    if (n <= 1) {
        c[0] = vs[m - 1];
        return 1;
    }
    if (n == 2) { /* SignalHistory's closed form, anchored at the newest sample */
        int64_t ta = ts[m - 2], tb = ts[m - 1];
        double va = vs[m - 2], vb = vs[m - 1];
        double slope = (vb - va) / ((double)(tb - ta) * 1e-9);
        c[0] = vb - slope * ((double)(tb - t0) * 1e-9);
        c[1] = slope;
        return 2;
    }
    double x[4], d[4];
    for (int i = 0; i < n; i++) {
        x[i] = (double)(ts[m - n + i] - t0) * 1e-9;
        d[i] = vs[m - n + i];
    }
    for (int j = 1; j < n; j++)
        for (int i = n - 1; i >= j; i--) d[i] = (d[i] - d[i - 1]) / (x[i] - x[i - j]);
    /* Horner on the Newton form: P = d0 + (tau - x0)(d1 + (tau - x1)(d2 + ...)) */
    double a[4] = {0.0, 0.0, 0.0, 0.0};
    a[0] = d[n - 1];
    int deg = 0;
    for (int i = n - 2; i >= 0; i--) { /* a <- a * (tau - x_i) + d_i */
        for (int k = deg + 1; k >= 1; k--) a[k] = a[k - 1] - x[i] * a[k];
        a[0] = -x[i] * a[0] + d[i];
        deg++;
    }
    for (int k = 0; k < n; k++) c[k] = a[k];
    return n;
}

/* ----- the FMI calls of either version ----- */
static int c_set_real(Plan *p, int i, const unsigned int *vr, size_t n, const double *v) {
    if (p->fmi3[i]) return ((set3_real_t)p->set_real[i])(p->comp[i], vr, n, v, n);
    return ((set_real_t)p->set_real[i])(p->comp[i], vr, n, v);
}

static int c_get_real(Plan *p, int i, const unsigned int *vr, size_t n, double *v) {
    if (p->fmi3[i]) return ((get3_real_t)p->get_real[i])(p->comp[i], vr, n, v, n);
    return ((get_real_t)p->get_real[i])(p->comp[i], vr, n, v);
}

static int c_set_held(Plan *p, int i, int kind, const unsigned int *vr, double v) {
    if (p->fmi3[i]) {
        if (kind == 2) {
            bool b = v > 0.5;
            return ((set3_bool_t)p->set_bool[i])(p->comp[i], vr, 1, &b, 1);
        }
        int32_t x = (int32_t)v;
        return ((set3_int_t)p->set_int[i])(p->comp[i], vr, 1, &x, 1);
    }
    int x = kind == 2 ? (v > 0.5) : (int)v;
    void *f = kind == 2 ? p->set_bool[i] : p->set_int[i];
    return ((set_int_t)f)(p->comp[i], vr, 1, &x);
}

static int c_get_held(Plan *p, int i, int kind, const unsigned int *vr, double *v) {
    int st;
    if (p->fmi3[i]) {
        if (kind == 2) {
            bool b = false;
            st = ((get3_bool_t)p->get_bool[i])(p->comp[i], vr, 1, &b, 1);
            *v = (double)(b != 0);
        } else {
            int32_t x = 0;
            st = ((get3_int_t)p->get_int[i])(p->comp[i], vr, 1, &x, 1);
            *v = (double)x;
        }
        return st;
    }
    int x = 0;
    void *f = kind == 2 ? p->get_bool[i] : p->get_int[i];
    st = ((get_int_t)f)(p->comp[i], vr, 1, &x);
    *v = kind == 2 ? (double)(x != 0) : (double)x;
    return st;
}

/* doStep of subsystem i from tt over h (to te): an FMU status, ST_TERMINATED or ST_PYTHON */
static int c_do_step(Plan *p, int i, double tt, double h, double te) {
    if (!p->fmi3[i])
        return ((do_step_t)p->do_step[i])(p->comp[i], tt, h, p->no_set_prior[i]);
    bool ev = false, term = false, early = false;
    double last = 0.0;
    int st = ((do_step3_t)p->do_step[i])(p->comp[i], tt, h, p->no_set_prior[i] != 0, &ev,
                                         &term, &early, &last);
    if (st > 2) return st;
    if (st == 2 || ev || term || early) { /* rare: the Python loop's own code finishes it */
        int r = ((finish_t)p->finish)(i, st, ev, term, early, st == 2 || early ? last : te,
                                      tt, h, te);
        if (r < 0) return ST_PYTHON;
        return r == 1 ? ST_TERMINATED : 0;
    }
    return st;
}

/* the non-Real inputs of subsystem i (after its Real ones): held, one call each */
static int set_held(Plan *p, int i) {
    for (int j = p->in_start[i] + p->in_nreal[i]; j < p->in_start[i + 1]; j++) {
        int s = p->in_sig[j];
        double v = p->hist_v[(size_t)s * DEPTH + p->hist_n[s] - 1];
        int st = c_set_held(p, i, p->in_kind[j], p->in_vr + j, v);
        if (st > 1) return st;
    }
    return 0;
}

static int set_inputs(Plan *p, int i, int64_t t, int constant) {
    int a = p->in_start[i];
    int n = p->in_nreal[i];
    int b = a + n;
    int st = set_held(p, i);
    if (st > 1 || n == 0) return st;
    int dord = constant ? 0 : p->deriv_order[i];
    UpdateEnv *env = (!constant && p->env[i] && p->inter_on[i]) ? (UpdateEnv *)p->env[i] : NULL;
    int moving = 0;
    for (int j = a; j < b; j++) {
        double c[4];
        int s = p->in_sig[j];
        if (constant) {
            c[0] = p->hist_v[(size_t)s * DEPTH + p->hist_n[s] - 1];
            c[1] = c[2] = c[3] = 0.0;
        } else {
            poly(p, s, p->in_order[j], t, c);
        }
        double sc = p->in_scale[j], bi = p->in_bias[j];
        int scaled = sc != 1.0 || bi != 0.0;
        p->in_buf[j - a] = scaled ? c[0] * sc + bi : c[0];
        if (dord > 0) {
            double f = 1.0;
            for (int k = 1; k <= dord; k++) {
                f *= k;
                p->der_buf[(size_t)(k - 1) * n + (j - a)] = c[k] * f * sc;
            }
        }
        if (env && p->inter_pos[j] >= 0) { /* FMI 3: the polynomial for the step */
            double *e = env->coef + (size_t)p->inter_pos[j] * 4;
            e[0] = p->in_buf[j - a];
            for (int k = 1; k < 4; k++) {
                e[k] = scaled ? c[k] * sc : c[k];
                if (e[k] != 0.0) moving = 1;
            }
        }
    }
    if (env) { /* held inputs (all powers 0): set above, nothing to update within the step */
        env->t0 = (double)t * 1e-9;
        env->active = moving;
    }
    st = c_set_real(p, i, p->in_vr + a, (size_t)n, p->in_buf);
    if (st > 1) return st;
    for (int k = 1; k <= dord; k++) {
        for (int j = 0; j < n; j++) p->ord_buf[j] = k;
        st = ((set_der_t)p->set_der[i])(p->comp[i], p->in_vr + a, (size_t)n, p->ord_buf,
                                        p->der_buf + (size_t)(k - 1) * n);
        if (st > 1) return st;
    }
    return 0;
}

/* read subsystem i's outputs; published at t, or (a step ending after this macro step)
 * kept until the macro step that reaches t */
static int get_outputs(Plan *p, int i, int64_t t, int ft_only, int later) {
    int a = p->out_start[i], b = a + p->out_nreal[i], e = p->out_start[i + 1];
    int st = 0;
    if (b > a) st = c_get_real(p, i, p->out_vr + a, (size_t)(b - a), p->out_buf);
    if (st > 1) return st;
    for (int j = b; j < e; j++) { /* non-Real outputs, exact in a double */
        st = c_get_held(p, i, p->out_kind[j], p->out_vr + j, p->out_buf + (j - a));
        if (st > 1) return st;
    }
    if (later) {
        for (int j = a; j < e; j++) p->pend_v[j] = p->out_buf[j - a];
        p->pend[i] = 1;
        p->pend_t[i] = t;
        return 0;
    }
    for (int j = a; j < e; j++)
        if (!ft_only || p->out_ft[j]) push(p, p->out_sig[j], t, p->out_buf[j - a]);
    return 0;
}

static void publish_pending(Plan *p, int64_t t) {
    for (int i = 0; i < p->n_subs; i++) {
        if (!p->pend[i] || p->pend_t[i] > t) continue;
        for (int j = p->out_start[i]; j < p->out_start[i + 1]; j++)
            push(p, p->out_sig[j], p->pend_t[i], p->pend_v[j]);
        p->pend[i] = 0;
    }
}

/* one subsystem's step within the macro step from t (ticks) of H ticks */
static int step_one(Plan *p, int i, int64_t t, int64_t H) {
    int64_t hs = p->rate[i] * H;
    int st = c_do_step(p, i, (double)t * 1e-9, (double)hs * 1e-9, (double)(t + hs) * 1e-9);
    p->sub_t[i] = t + hs;
    p->sub_steps[i]++;
    return st;
}

/* Run n_steps macro steps of H ticks from t0 ticks (macro step k0); rows[k * n_sig + s] is
 * signal s at t0 + (k + 1) H.  Returns the macro steps completed; *status: 0 ok, 2 an FMI 2
 * doStep discarded (the step was completed with that FMU's last outputs: *sub says which),
 * ST_TERMINATED an FMI 3 FMU asked to terminate (the step completed), ST_PYTHON the Python
 * side of an FMI 3 step raised, 3+ an FMI error (*sub, *where: 0 set, 1 doStep, 2 get,
 * 3 settle).  *done counts the completed steps as they complete (their rows written): what
 * an interrupt keeps. */
int cosim_master_run(Plan *p, int64_t t0, int64_t H, int64_t k0, int n_steps, double *rows,
                     int *status, int *sub, int *where, volatile int *done) {
    *status = 0;
    for (int k = 0; k < n_steps; k++) {
        int64_t t = t0 + (int64_t)k * H, te = t + H, kk = k0 + k;
        int ending = -1, end_status = 0, st;
        publish_pending(p, t);
        if (p->gauss_seidel) {
            for (int q = 0; q < p->n_subs; q++) {
                int i = p->order[q];
                if (p->rate[i] != 1 && kk % p->rate[i]) continue;
                if ((st = set_inputs(p, i, t, 0)) > 1) {
                    *status = st; *sub = i; *where = 0; return k;
                }
                st = step_one(p, i, t, H);
                if (st == 2 || st == ST_TERMINATED) { ending = i; end_status = st; }
                else if (st > 1) { *status = st; *sub = i; *where = 1; return k; }
                st = get_outputs(p, i, p->sub_t[i], 0, p->rate[i] > 1);
                if (st > 1 && ending != i) { *status = st; *sub = i; *where = 2; return k; }
            }
        } else {
            for (int q = 0; q < p->n_subs; q++) {
                int i = p->order[q];
                if (p->rate[i] != 1 && kk % p->rate[i]) continue;
                if ((st = set_inputs(p, i, t, 0)) > 1) {
                    *status = st; *sub = i; *where = 0; return k;
                }
            }
            for (int q = 0; q < p->n_subs; q++) {
                int i = p->order[q];
                if (p->rate[i] != 1 && kk % p->rate[i]) continue;
                st = step_one(p, i, t, H);
                if (st == 2 || st == ST_TERMINATED) { ending = i; end_status = st; }
                else if (st > 1) { *status = st; *sub = i; *where = 1; return k; }
            }
            for (int q = 0; q < p->n_subs; q++) {
                int i = p->order[q];
                if (p->rate[i] != 1 && kk % p->rate[i]) continue;
                st = get_outputs(p, i, p->sub_t[i], 0, p->rate[i] > 1);
                if (st > 1 && ending != i) { *status = st; *sub = i; *where = 2; return k; }
            }
        }
        publish_pending(p, te);
        for (int q = 0; q < p->n_settle; q++) {
            int i = p->settle[q];
            if ((st = set_inputs(p, i, te, 1)) > 1 || (st = get_outputs(p, i, te, 1, 0)) > 1) {
                if (ending == i) continue;
                *status = st; *sub = i; *where = 3; return k;
            }
        }
        double *row = rows + (size_t)k * p->n_sig;
        for (int s = 0; s < p->n_sig; s++)
            row[s] = p->hist_v[(size_t)s * DEPTH + p->hist_n[s] - 1];
        *done = k + 1;
        if (ending >= 0) { *status = end_status; *sub = ending; *where = 1; return k + 1; }
    }
    return n_steps;
}

/* ------------------------------------------------------------------ iterative coupling */
typedef int (*state_fn_t)(void *, void **);  /* fmi2GetFMUstate / fmi2SetFMUstate (FMI 3 alike) */
#define ST_HANDOVER 10  /* the step needs the Python loop (a Jacobian, no convergence) */
#define IT_FIXED 0
#define IT_BROYDEN 1
#define IT_NEWTON 2
#define IT_AITKEN 3

typedef struct {
    int method, n;            /* n: the Real coupled outputs z, in the order of pack_last */
    const int *z_sig;         /* their signals */
    const int *z_order;       /* the predictor's order per signal */
    double tol, slow;
    int max_iter, has_M;
    double *M;                /* (J - I)^-1 kept across steps (Newton), row-major n x n */
    double *M0, *z, *y, *g, *zn, *yn, *gn, *w, *r;  /* work: M0 n x n, the others n */
    void **get_state, **set_state, **state;         /* per subsystem */
    void **free_state;        /* per subsystem: to free a state an FMU replaced (below) */
    int *iters;               /* per macro step of this call: the sweeps */
    double *res;              /* per macro step of this call: the last residual */
    int64_t *rollbacks;       /* restores in this call */
} Iter;

static double max_abs(const double *v, int n) {  /* NaN if any is, as Python's _max_abs */
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double a = v[i] < 0 ? -v[i] : v[i];
        if (a > m) m = a;
        else if (a != a) return a;
    }
    return m;
}

static void truncate_after(Plan *p, int64_t t) {
    for (int s = 0; s < p->n_sig; s++) {
        const int64_t *ts = p->hist_t + (size_t)s * DEPTH;
        int n = p->hist_n[s];
        while (n > 0 && ts[n - 1] > t) n--;
        p->hist_n[s] = n;
    }
}

/* the predictor: each Real coupled output extrapolated to t + H (Horner, as Python's) */
static void predict(Plan *p, Iter *it, int64_t t, int64_t H, double *z) {
    double tau = (double)H * 1e-9;
    for (int j = 0; j < it->n; j++) {
        double c[4];
        int n = poly(p, it->z_sig[j], it->z_order[j], t, c);
        if (n == 2) { z[j] = c[1] * tau + c[0]; continue; }
        double acc = c[n - 1];
        for (int k = n - 2; k >= 0; k--) acc = acc * tau + c[k];
        z[j] = acc;
    }
}

/* one sweep of the step from t: roll back (not the first), the inputs through the history
 * and z at t + H, every subsystem stepped (Jacobi), its outputs published and the
 * feedthrough settled at t + H; y: the Real coupled outputs there */
static int sweep(Plan *p, Iter *it, int64_t t, int64_t H, const double *z, int first,
                 double *y, int *sub, int *where) {
    int64_t te = t + H;
    int st;
    if (!first) {
        for (int i = 0; i < p->n_subs; i++) {
            st = ((state_fn_t)it->set_state[i])(p->comp[i], it->state[i]);
            if (st > 1) { *sub = i; *where = 0; return st; }
            p->sub_t[i] = t;
        }
        truncate_after(p, t);
        it->rollbacks[0]++;
    }
    for (int j = 0; j < it->n; j++) push(p, it->z_sig[j], te, z[j]);
    for (int q = 0; q < p->n_subs; q++) {
        int i = p->order[q];
        if ((st = set_inputs(p, i, t, 0)) > 1) { *sub = i; *where = 0; return st; }
    }
    truncate_after(p, t);
    for (int q = 0; q < p->n_subs; q++) {
        int i = p->order[q];
        st = step_one(p, i, t, H);
        if (st > 1) { *sub = i; *where = 1; return st; }
    }
    for (int q = 0; q < p->n_subs; q++) {
        int i = p->order[q];
        if ((st = get_outputs(p, i, te, 0, 0)) > 1) { *sub = i; *where = 2; return st; }
    }
    for (int q = 0; q < p->n_settle; q++) {
        int i = p->settle[q];
        if ((st = set_inputs(p, i, te, 1)) > 1 || (st = get_outputs(p, i, te, 1, 0)) > 1) {
            *sub = i; *where = 3; return st;
        }
    }
    for (int j = 0; j < it->n; j++) {
        int s = it->z_sig[j];
        y[j] = p->hist_v[(size_t)s * DEPTH + p->hist_n[s] - 1];
    }
    return 0;
}

static void mat_vec(const double *M, const double *v, int n, double *out) {
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int j = 0; j < n; j++) acc += M[(size_t)i * n + j] * v[j];
        out[i] = acc;
    }
}

/* Macro steps of iterative coupling (cosim.coupling.Iterative: fixed point, Aitken,
 * Broyden, Newton with the kept inverse Jacobian), the arguments and results as
 * cosim_master_run's; *status ST_HANDOVER: the step from t0 + k H is not done (the FMUs and
 * histories are back at its start, M as it was): the Python loop takes it (a Jacobian to
 * compute, or no convergence to report). */
int cosim_master_run_iterative(Plan *p, Iter *it, int64_t t0, int64_t H, int64_t k0,
                               int n_steps, double *rows, int *status, int *sub, int *where,
                               volatile int *done) {
    int n = it->n;
    size_t nn = (size_t)n * n;
    (void)k0;
    *status = 0;
    for (int k = 0; k < n_steps; k++) {
        int64_t t = t0 + (int64_t)k * H;
        int st;
        int64_t steps0[p->n_subs], rb0 = it->rollbacks[0];
        for (int i = 0; i < p->n_subs; i++) steps0[i] = p->sub_steps[i];
        for (int i = 0; i < p->n_subs; i++) {
            void *old = it->state[i];
            st = ((state_fn_t)it->get_state[i])(p->comp[i], &it->state[i]);
            if (st > 1) { *status = st; *sub = i; *where = 0; return k; }
            /* FMI asks an FMU to overwrite the state it is given; one that hands back a new
             * one (pythonfmu does) gets the old one freed */
            if (old && it->state[i] != old)
                ((state_fn_t)it->free_state[i])(p->comp[i], &old);
        }
        if (it->has_M) memcpy(it->M0, it->M, nn * sizeof(double));
        double *z = it->z, *y = it->y, *g = it->g;
        predict(p, it, t, H, z);
        if ((st = sweep(p, it, t, H, z, 1, y, sub, where)) > 1) { *status = st; return k; }
        int iters = 1, fresh = 0, have_prev = 0, have_r = 0, handover = 0;
        double omega = 0.5, res_prev = 0.0, res;
        for (int j = 0; j < n; j++) g[j] = y[j] - z[j];
        if (it->method == IT_BROYDEN) {  /* inverse Jacobian of g(z) = y - z: -I */
            memset(it->M, 0, nn * sizeof(double));
            for (int j = 0; j < n; j++) it->M[(size_t)j * n + j] = -1.0;
        }
        for (;;) {
            res = max_abs(g, n);
            if (res <= it->tol || res <= it->tol * (1.0 + max_abs(y, n))) break;
            if (iters >= it->max_iter) { handover = 1; break; }  /* Python raises */
            double *zn = it->zn;
            if (it->method == IT_FIXED || n == 0) {
                memcpy(zn, y, (size_t)n * sizeof(double));
            } else if (it->method == IT_AITKEN) {
                if (have_r) {
                    double dd = 0.0, rd = 0.0;
                    for (int j = 0; j < n; j++) {
                        double d = g[j] - it->r[j];
                        dd += d * d;
                        rd += it->r[j] * d;
                    }
                    if (dd > 0) omega = -omega * rd / dd;
                }
                for (int j = 0; j < n; j++) zn[j] = z[j] + omega * g[j];
                memcpy(it->r, g, (size_t)n * sizeof(double));
                have_r = 1;
            } else {
                if (it->method == IT_NEWTON) {
                    int slow = have_prev && res > it->slow * res_prev;
                    if (!it->has_M || (slow && !fresh)) { handover = 1; break; }
                    res_prev = res;
                    have_prev = 1;
                }
                mat_vec(it->M, g, n, it->w);
                for (int j = 0; j < n; j++) zn[j] = z[j] - it->w[j];
            }
            double *yn = it->yn, *gn = it->gn;
            if ((st = sweep(p, it, t, H, zn, 0, yn, sub, where)) > 1) { *status = st; return k; }
            iters++;
            for (int j = 0; j < n; j++) gn[j] = yn[j] - zn[j];
            if ((it->method == IT_BROYDEN || it->method == IT_NEWTON) && n) {
                /* M + outer(dz - M dg, dz M) / (dz M dg) */
                double *dz = it->w, *dg = it->r, denom = 0.0;
                double wv[n], mdg[n];
                for (int j = 0; j < n; j++) { dz[j] = zn[j] - z[j]; dg[j] = gn[j] - g[j]; }
                for (int j = 0; j < n; j++) {  /* w = dz @ M */
                    double acc = 0.0;
                    for (int i = 0; i < n; i++) acc += dz[i] * it->M[(size_t)i * n + j];
                    wv[j] = acc;
                }
                for (int j = 0; j < n; j++) denom += wv[j] * dg[j];
                if (denom != 0.0) {
                    mat_vec(it->M, dg, n, mdg);
                    for (int i = 0; i < n; i++) {
                        double a = dz[i] - mdg[i];
                        for (int j = 0; j < n; j++)
                            it->M[(size_t)i * n + j] += (a * wv[j]) / denom;
                    }
                }
            }
            /* z, y, g <- the new ones (swap the buffers) */
            it->zn = z; it->yn = y; it->gn = g;
            it->z = z = zn; it->y = y = yn; it->g = g = gn;
        }
        if (handover) {  /* back to the start of the step: the Python loop takes it */
            for (int i = 0; i < p->n_subs; i++) {
                st = ((state_fn_t)it->set_state[i])(p->comp[i], it->state[i]);
                if (st > 1) { *status = st; *sub = i; *where = 0; return k; }
                p->sub_t[i] = t;
                p->sub_steps[i] = steps0[i];
            }
            truncate_after(p, t);
            it->rollbacks[0] = rb0;
            if (it->has_M && it->method == IT_NEWTON) memcpy(it->M, it->M0, nn * sizeof(double));
            *status = ST_HANDOVER;
            return k;
        }
        it->iters[k] = iters;
        it->res[k] = res;
        double *row = rows + (size_t)k * p->n_sig;
        for (int s = 0; s < p->n_sig; s++)
            row[s] = p->hist_v[(size_t)s * DEPTH + p->hist_n[s] - 1];
        *done = k + 1;
    }
    return n_steps;
}
"""
