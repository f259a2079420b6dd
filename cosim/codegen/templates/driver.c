/* ---------------------------------------------------------------- the compiled Simulator
 * Appended to the model core by cosim.compiled_run: a Model of its own (no FMI), and the
 * fixed-step run of cosim.fixed_step.FixedStepAdvancer with the recording of
 * cosim.observers.Recorder (one sample per stop, its Decimator) and the location of the
 * blocks' zero crossings (FixedStepAdvancer._locate, cosim.run_events.RunEvents.handle). */

#ifndef COSIM_ZENO_N  /* Simulator.zeno_events / zeno_span_s */
#define COSIM_ZENO_N 100
#define COSIM_ZENO_SPAN 1e-6
#endif
#ifndef COSIM_EVENT_LEFT  /* event_samples == "both": the left limit is sampled at an event */
#define COSIM_EVENT_LEFT 0
#endif

/* The Model and what the Python loop keeps of its zero crossings between steps
 * (cosim.zero_crossings.ZeroCrossings, RunEvents._recent), handed over each call. */
typedef struct {
    Model m;
    int resume;                   /* a monitor returned to Python between major_a and _b */
    double zc_prev[NZ1];          /* ZeroCrossings.previous: the witnesses at the last point */
    unsigned char zc_zero[NZ1];   /* ZeroCrossings._zero_after_event */
    int zc_post;                  /* ZeroCrossings._post_event */
    int zeno_n;                   /* the ticks of the last events (oldest first) */
    int64_t zeno[COSIM_ZENO_N];
} SimModel;

void *cosim_sim_new(void) {
    SimModel *SM = (SimModel *)calloc(1, sizeof(SimModel));
    if (!SM) return NULL;
    cosim_reset(&SM->m);
    SM->m.st.initialized = 1;
    return SM;
}
void cosim_sim_free(void *p) { free(p); }
size_t cosim_sim_model_size(void) { return sizeof(SimModel); }
ModelState *cosim_sim_state(void *p) { return &((Model *)p)->st; }
const char *cosim_sim_error(void *p) { return ((Model *)p)->error; }
void cosim_sim_clear_error(void *p) { ((Model *)p)->error = NULL; }

/* The right-hand side of a variable-step run (cosim.compiled_rhs; the Simulator's rhs): the
 * time t and the states x set, the outputs the derivatives read evaluated, the derivatives
 * into dx.  0, or -1 on an error (cosim_sim_error). */
int cosim_sim_rhs(void *p, double t, const double *x, double *dx) {
    Model *M = (Model *)p;
#if NX > 0
    M->st.time = t;
    memcpy(M->st.x, x, sizeof(double) * NX);
    cosim_eval_deriv(M, M->st.x);
    cosim_derivs(M, M->st.x, dx);
#else
    (void)t; (void)x; (void)dx;
#endif
    return M->error ? -1 : 0;
}

/* The outputs of continuous and direct blocks at the current tick (Simulator.evaluate_outputs:
 * a co-simulation master changed the inputs; sampled blocks hold theirs): 0, or -1 on an
 * error (cosim_sim_error; an earlier one is cleared first). */
int cosim_sim_outputs(void *p) {
    Model *M = (Model *)p;
    ModelState *S = &M->st;
    M->error = NULL;
    S->time = S->mode_time = (double)S->ticks * 1e-9;
    cosim_eval(M, S->x, NULL);
    S->dirty = 0;
    return M->error ? -1 : 0;
}

/* The zero crossings' state from (set) and to (get) the Python loop: n witnesses at prev, the
 * flags of those left on zero by an event at zero, post (an event since the last point), the
 * ticks of the last nz events at zeno (oldest first); get returns nz. */
void cosim_sim_zc_set(void *p, const double *prev, const unsigned char *zero, int post,
                      const int64_t *zeno, int nz) {
    SimModel *SM = (SimModel *)p;
    int k;
    for (k = 0; k < NZ; k++) {
        SM->zc_prev[k] = prev[k];
        SM->zc_zero[k] = zero[k];
    }
    SM->zc_post = post;
    if (nz > COSIM_ZENO_N) {
        zeno += nz - COSIM_ZENO_N;
        nz = COSIM_ZENO_N;
    }
    SM->zeno_n = nz;
    for (k = 0; k < nz; k++) SM->zeno[k] = zeno[k];
}
int cosim_sim_zc_get(void *p, double *prev, unsigned char *zero, int *post, int64_t *zeno) {
    SimModel *SM = (SimModel *)p;
    int k;
    for (k = 0; k < NZ; k++) {
        prev[k] = SM->zc_prev[k];
        zero[k] = SM->zc_zero[k];
    }
    *post = SM->zc_post;
    for (k = 0; k < SM->zeno_n; k++) zeno[k] = SM->zeno[k];
    return SM->zeno_n;
}

#if COSIM_METHOD == COSIM_AB3
/* The AB3 history across calls (cosim.compiled_run hands it over from and to the Python
 * solver, cosim.solvers.AB3.history / restore): n right-hand sides of NX (oldest first) at
 * f, the step size h (0: none); drop: forget it at the next stop (a parameter change: the
 * Python loop rebuilds its program, and solver, at the first stop after the first step). */
void cosim_sim_ab3_set(void *p, int n, double h, const double *f, int drop) {
    Model *M = (Model *)p;
    int j;
    M->ab3_n = n;
    M->ab3_h = h;
    for (j = 0; j < n; j++) memcpy(M->ab3_f[j], f + (size_t)j * NX, sizeof(double) * NX);
    M->ab3_drop = drop;
}
int cosim_sim_ab3_get(void *p, double *h, double *f) {
    Model *M = (Model *)p;
    int j;
    *h = M->ab3_h;
    for (j = 0; j < M->ab3_n; j++) memcpy(f + (size_t)j * NX, M->ab3_f[j], sizeof(double) * NX);
    return M->ab3_n;
}

/* whether tick is a breakpoint (a time event: a possible discontinuity) */
static int cosim_is_breakpoint(int64_t tick) {
    int lo = 0, hi = NBP;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (COSIM_BREAKPOINTS[mid] < tick) lo = mid + 1;
        else hi = mid;
    }
    return lo < NBP && COSIM_BREAKPOINTS[lo] == tick;
}

/* forget the AB3 history (Simulator.reset_solver_history) */
static void cosim_sim_forget(Model *M) {
    M->ab3_n = 0;
    M->ab3_h = 0.0;
}
#endif

/* The major point of Simulator.major at tick, in two parts around the monitors: (a) the
 * outputs (sampled blocks if due); AB3: the history is forgotten at a breakpoint, and at a
 * sample hit where a watched held output (COSIM_WATCH: the signal offsets of rate group g from
 * COSIM_WATCH_START[g], per multistep_restart) changes value in the hit's output evaluation
 * (counted in cnt[4]); (b) the witnesses of the zero crossings there
 * (ZeroCrossings.set_previous), the due discrete updates. */
static void cosim_sim_major_a(SimModel *SM, int64_t tick, volatile int64_t *cnt) {
    Model *M = &SM->m;
    ModelState *S = &M->st;
    int due[NG1];
#if COSIM_METHOD == COSIM_AB3
    double before[NWATCH1];
    int g, k, n = 0, changed = 0;
#endif
    S->ticks = tick;
    S->time = S->mode_time = (double)tick * 1e-9;
#if COSIM_METHOD == COSIM_AB3
    if (M->ab3_drop || cosim_is_breakpoint(tick)) {
        cosim_sim_forget(M);
        M->ab3_drop = 0;
    }
#endif
    cosim_due(tick, due);
#if COSIM_METHOD == COSIM_AB3
    for (g = 0; g < NG; g++)
        if (due[g])
            for (k = COSIM_WATCH_START[g]; k < COSIM_WATCH_START[g + 1]; k++)
                before[n++] = S->s[COSIM_WATCH[k]];
#endif
    cosim_eval(M, S->x, due);
#if COSIM_METHOD == COSIM_AB3
    n = 0;
    for (g = 0; g < NG; g++)
        if (due[g])
            for (k = COSIM_WATCH_START[g]; k < COSIM_WATCH_START[g + 1]; k++)
                if (before[n++] != S->s[COSIM_WATCH[k]]) changed = 1;
    if (changed) {
        cosim_sim_forget(M);
        cnt[4]++;
    }
#endif
    (void)cnt;
}

static void cosim_sim_major_b(SimModel *SM, int64_t tick) {
    Model *M = &SM->m;
    int due[NG1];
    cosim_due(tick, due);
#if NZ > 0
    {
        int i;
        cosim_indicators(M, SM->zc_prev);
        for (i = 0; i < NZ; i++) SM->zc_zero[i] = SM->zc_post && SM->zc_prev[i] == 0.0;
        SM->zc_post = 0;
    }
#endif
    cosim_updates(M, due);
    M->st.dirty = 0;
}

/* where and how a run records (cosim_sim_run's arguments) */
typedef struct {
    const int *off;
    int nrec;
    int64_t t0, dt, grid, every;
    int64_t *count;
    double *t, *rows;
    volatile int64_t *cnt;
} Rec;

/* Decimator.keep: on the dt grid (grid > 0: dt * every, with every sample off the dt grid
 * kept), else by count; a kept sample's time and signals go to the next row */
static void cosim_sim_sample(Model *M, const Rec *R, int64_t tick) {
    int64_t k = tick - R->t0;
    int keep = R->grid > 0 ? (k % R->grid == 0 || k % R->dt != 0)
                           : ((*R->count)++) % R->every == 0;
    if (keep) {
        int64_t n = R->cnt[0];
        int j;
        R->t[n] = M->st.time;
        for (j = 0; j < R->nrec; j++) R->rows[n * R->nrec + j] = M->st.s[R->off[j]];
        R->cnt[0] = n + 1;
    }
}

#if NX > 0 && NZ > 0
/* ------------------------------------------------------------ zero crossings in C
 * FixedStepAdvancer._locate, operation for operation: the witnesses at the end of the step,
 * the crossed ones by ZeroCrossings.crossed, the first root of each by first_root (Brent's
 * method of SciPy's brentq, xtol 1e-13, rtol 1e-14, 100 iterations) on the state of a fresh
 * step of the solver from the step's start (AB3: its RK4 starter, or the chord of the step
 * taken when the starter ends on the other side of zero), the event at the first of them
 * rounded to a tick, the handler (RunEvents.handle).  A failure the Python loop raises there
 * (no sign change, a NaN witness, no convergence, Zeno) fails the run: the Python loop then
 * takes the slice over and raises its own error. */
typedef struct {
    SimModel *SM;
    const double *x0, *x1;
    double t0s, span;
    int linear;
    int64_t stages;
} Locate;

/* state_at(theta) into S->x */
static void cosim_zc_state_at(Locate *L, double theta) {
    Model *M = &L->SM->m;
    double *x = M->st.x;
    int i;
    if (theta <= 0) {
        memcpy(x, L->x0, sizeof(double) * NX);
        return;
    }
    if (L->linear) {
        for (i = 0; i < NX; i++) x[i] = L->x0[i] + (theta / L->span) * (L->x1[i] - L->x0[i]);
        return;
    }
    memcpy(x, L->x0, sizeof(double) * NX);
    cosim_rk_step(M, L->t0s, theta);
#if COSIM_METHOD == COSIM_EULER
    L->stages += 1;
#elif COSIM_METHOD == COSIM_HEUN || COSIM_METHOD == COSIM_MIDPOINT
    L->stages += 2;
#else
    L->stages += 4;
#endif
}

/* g_at(i, theta): witness i at the state theta into the step (NAN after an error) */
static double cosim_zc_g(Locate *L, int i, double theta) {
    Model *M = &L->SM->m;
    double z[NZ1];
    cosim_zc_state_at(L, theta);
    M->st.time = L->t0s + theta;
    cosim_eval(M, M->st.x, NULL);
    if (M->error) return NAN;
    cosim_indicators(M, z);
    return z[i];
}

/* brentq's function: g_at, failing on NaN as SciPy's wrapper raises */
static double cosim_zc_f(Locate *L, int i, double theta) {
    Model *M = &L->SM->m;
    double g = cosim_zc_g(L, i, theta);
    if (!M->error && isnan(g)) {
        snprintf(M->errbuf, sizeof M->errbuf, "zero crossing %d: its witness is NaN at "
                 "t = %.9g s", i, M->st.time);
        cosim_fail(M, M->errbuf);
    }
    return g;
}

/* scipy.optimize.brentq (SciPy 1.17's brentq.c, the zeros and signs tested as there) */
static double cosim_zc_brentq(Locate *L, int k, double xa, double xb) {
    const double xtol = 1e-13, rtol = 1e-14;
    Model *M = &L->SM->m;
    double xpre = xa, xcur = xb;
    double xblk = 0., fpre, fcur, fblk = 0., spre = 0., scur = 0., sbis;
    double delta, stry, dpre, dblk;
    int i;
    fpre = cosim_zc_f(L, k, xpre);
    if (M->error) return 0.0;
    fcur = cosim_zc_f(L, k, xcur);
    if (M->error) return 0.0;
    if (fpre == 0) return xpre;
    if (fcur == 0) return xcur;
    if (signbit(fpre) == signbit(fcur)) {
        cosim_fail(M, "zero crossing location: f(a) and f(b) must have different signs");
        return 0.0;
    }
    for (i = 0; i < 100; i++) {
        if (fpre != 0 && fcur != 0 && signbit(fpre) != signbit(fcur)) {
            xblk = xpre;
            fblk = fpre;
            spre = scur = xcur - xpre;
        }
        if (fabs(fblk) < fabs(fcur)) {
            xpre = xcur;
            xcur = xblk;
            xblk = xpre;
            fpre = fcur;
            fcur = fblk;
            fblk = fpre;
        }
        delta = (xtol + rtol * fabs(xcur)) / 2;
        sbis = (xblk - xcur) / 2;
        if (fcur == 0 || fabs(sbis) < delta) return xcur;
        if (fabs(spre) > delta && fabs(fcur) < fabs(fpre)) {
            if (xpre == xblk) {
                stry = -fcur * (xcur - xpre) / (fcur - fpre);
            } else {
                dpre = (fpre - fcur) / (xpre - xcur);
                dblk = (fblk - fcur) / (xblk - xcur);
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre));
            }
            if (2 * fabs(stry) < fmin(fabs(spre), 3 * fabs(sbis) - delta)) {
                spre = scur;
                scur = stry;
            } else {
                spre = sbis;
                scur = sbis;
            }
        } else {
            spre = sbis;
            scur = sbis;
        }
        xpre = xcur;
        fpre = fcur;
        if (fabs(scur) > delta) xcur += scur;
        else xcur += (sbis > 0 ? delta : -delta);
        fcur = cosim_zc_f(L, k, xcur);
        if (M->error) return 0.0;
    }
    cosim_fail(M, "zero crossing location: brentq failed to converge after 100 iterations");
    return 0.0;
}

/* cosim.event_location.first_root of witness k in (lo, hi]; *none: no departure seen */
static double cosim_zc_first_root(Locate *L, int k, double lo, double hi, double g_lo,
                                  double g_hi, int *none) {
    const int probes = 16;
    int side, has_prev = 0, j;
    double prev = 0.0;
    *none = 0;
    if (g_lo != 0.0) return cosim_zc_brentq(L, k, lo, hi);
    side = g_hi > 0.0;
    for (j = 1; j <= probes; j++) {
        double th = j == probes ? hi : lo + (hi - lo) * j / probes;
        double gk = j == probes ? g_hi : cosim_zc_g(L, k, th);
        if (L->SM->m.error) return 0.0;
        if (!has_prev) {
            if (gk != 0.0 && (gk > 0.0) != side) {
                prev = th;
                has_prev = 1;
            }
            continue;
        }
        if (gk == 0.0 || (gk > 0.0) == side) return cosim_zc_brentq(L, k, prev, th);
        prev = th;
    }
    *none = 1;
    return 0.0;
}

/* RunEvents.handle of crossing k at the current tick: the Zeno guard, the left sample, the
 * handler, the multistep history forgotten; returns 1 for a terminal crossing */
static int cosim_zc_handle_event(SimModel *SM, int k, const Rec *R) {
    Model *M = &SM->m;
    int64_t tick = M->st.ticks;
    R->cnt[6]++;
    SM->zc_post = 1;
    if (SM->zeno_n == COSIM_ZENO_N) {
        memmove(SM->zeno, SM->zeno + 1, sizeof(int64_t) * (COSIM_ZENO_N - 1));
        SM->zeno_n--;
    }
    SM->zeno[SM->zeno_n++] = tick;
    if (SM->zeno_n == COSIM_ZENO_N &&
            (double)(SM->zeno[COSIM_ZENO_N - 1] - SM->zeno[0]) * 1e-9 < COSIM_ZENO_SPAN) {
        cosim_fail(M, "zero crossings: Zeno behaviour (the Python loop raises ZenoError)");
        return 0;
    }
    if (COSIM_EVENT_LEFT) cosim_sim_sample(M, R, tick);
    cosim_zc_handle(M, k);
#if COSIM_METHOD == COSIM_AB3
    cosim_sim_forget(M);
#endif
    return COSIM_ZC_TERMINAL[k];
}

/* FixedStepAdvancer._locate after the step from (t0, x0) to stop (the state S->x): the new
 * stop; *term = k + 1 when the terminal crossing k ended the run there */
static int64_t cosim_zc_locate(SimModel *SM, int64_t t0, const double *x0, int64_t stop,
                               const Rec *R, int *term) {
    Model *M = &SM->m;
    ModelState *S = &M->st;
    double g_new[NZ1], x1[NX1], best_th = 0.0;
    int crossed[NZ1], nc = 0, i, c, best = -1;
    int64_t t_ev;
    Locate L;
    S->ticks = stop;
    S->time = (double)stop * 1e-9;
    S->mode_time = (double)t0 * 1e-9;
    cosim_eval(M, S->x, NULL);
    if (M->error) return stop;
    cosim_indicators(M, g_new);
    for (i = 0; i < NZ; i++) {
        double a = SM->zc_prev[i], b = g_new[i];
        int d = COSIM_ZC_DIR[i];
        int rising = (a < 0.0 && 0.0 <= b) || (a == 0.0 && b > 0.0 && SM->zc_zero[i]);
        int falling = (a > 0.0 && 0.0 >= b) || (a == 0.0 && b < 0.0 && SM->zc_zero[i]);
        if ((d >= 0 && rising) || (d <= 0 && falling)) crossed[nc++] = i;
    }
    if (!nc) return stop;
    memcpy(x1, S->x, sizeof(double) * NX);
    L.SM = SM;
    L.x0 = x0;
    L.x1 = x1;
    L.t0s = (double)t0 * 1e-9;
    L.span = (double)(stop - t0) * 1e-9;
    L.linear = 0;
    L.stages = 0;
#if COSIM_METHOD == COSIM_AB3
    for (c = 0; c < nc; c++) {
        double g = cosim_zc_g(&L, crossed[c], L.span);
        if (M->error) return stop;
        if ((g > 0.0) != (g_new[crossed[c]] > 0.0)) {
            L.linear = 1;  /* bracket on the chord of the step actually taken */
            break;
        }
    }
#endif
    for (c = 0; c < nc; c++) {
        int none;
        i = crossed[c];
        double th = cosim_zc_first_root(&L, i, 0.0, L.span, SM->zc_prev[i], g_new[i], &none);
        if (M->error) {
            R->cnt[5] += L.stages;
            return stop;
        }
        if (none) th = 0.0;
        if (best < 0 || th < best_th) {
            best_th = th;
            best = i;
        }
    }
    {
        int64_t r = (int64_t)nearbyint(best_th * 1e9);  /* round(): half to even */
        if (r > stop - t0) r = stop - t0;
        if (r < 1) r = 1;
        t_ev = t0 + r;
    }
    cosim_zc_state_at(&L, (double)(t_ev - t0) * 1e-9);
    R->cnt[5] += L.stages;
    S->ticks = t_ev;
    S->time = (double)t_ev * 1e-9;
    cosim_eval(M, S->x, NULL);
    if (M->error) return stop;
    if (cosim_zc_handle_event(SM, best, R)) {
        *term = best + 1;
        return t_ev;
    }
    if (t_ev < stop) R->cnt[2]++;
    return t_ev;
}
#endif

/* At most max_stops stops from the state's time towards end [ns] on the grid dt (0: none),
 * as FixedStepAdvancer.advance (a stop at every grid point, sample hit, breakpoint and at
 * end; one Runge-Kutta step to each when there are continuous states; a zero crossing located
 * inside the step makes its instant the stop; the major point there).  At each stop kept by
 * the decimation (t0, grid, every, *count as Decimator) the time goes to t[n] and the signals
 * at off[0..nrec) to rows[n * nrec ..] (an event sampled at its left limit too: up to two rows
 * a stop).  cnt[0] counts the rows written, cnt[1] the steps, cnt[2] the partial steps
 * (shorter than dt, and steps cut by an event), each as the stop completes (what an
 * interrupted caller keeps); cnt[4] the AB3 restarts at sample hits (cosim_sim_major_a), cnt[5]
 * the right-hand-side evaluations of AB3's steps, of the event location and (exact linear
 * steps, COSIM_PROPAGATE) of the partial steps, cnt[6] the events.
 * Returns 0; 1 when the terminal crossing cnt[7] ended the run (the state at its instant,
 * after its handler, before the major point); 2 when a monitor's C condition holds at the
 * major point just evaluated (outputs there, discrete updates not yet run): the caller runs
 * the monitors on that state, hands it back, and the next call (max_stops 0: only that) does
 * the rest of the point; -1 on an error (cosim_sim_error; cnt[3] the stop whose step
 * failed). */
int cosim_sim_run(void *p, int64_t end, int64_t max_stops, int64_t dt, const int *off,
                  int nrec, int64_t t0, int64_t grid, int64_t every, int64_t *count,
                  double *t, double *rows, volatile int64_t *cnt) {
    SimModel *SM = (SimModel *)p;
    Model *M = &SM->m;
    ModelState *S = &M->st;
    int64_t stops = 0;
    Rec R;
    R.off = off;
    R.nrec = nrec;
    R.t0 = t0;
    R.dt = dt;
    R.grid = grid;
    R.every = every;
    R.count = count;
    R.t = t;
    R.rows = rows;
    R.cnt = cnt;
    if (SM->resume) {  /* the rest of the major point where the monitors ran in Python */
        SM->resume = 0;
        cosim_sim_sample(M, &R, S->ticks);  /* (Simulator.major: observers, then updates) */
        cosim_sim_major_b(SM, S->ticks);
        if (M->error) return -1;
    }
    while (S->ticks < end && stops < max_stops && !M->error) {
        int64_t tick = S->ticks;
        int64_t stop = cosim_next_event(tick);
        if (stop > end) stop = end;
        if (dt > 0) {
            int64_t g = (cosim_floordiv(tick, dt) + 1) * dt;
            if (g < stop) stop = g;
        }
#if NX > 0
        {
#if NZ > 0
            double x0[NX1];
            int term = 0;
            memcpy(x0, S->x, sizeof(double) * NX);
#endif
#if COSIM_METHOD == COSIM_AB3
            cnt[5] += cosim_ab3_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
#elif defined(COSIM_PROPAGATE)  /* whole steps exactly, others by stages (counted) */
            if (stop - tick == COSIM_PROP_H_TICKS) {
                cosim_prop_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
            } else {
                cosim_rk_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
                cnt[5] += COSIM_RK_STAGES;
            }
#else
            cosim_rk_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
#endif
            if (M->error || cosim_check_finite(M, stop)) {
                cnt[3] = stop;
                return -1;
            }
            cnt[1]++;
            if (dt > 0 && stop - tick != dt) cnt[2]++;
#if NZ > 0
            stop = cosim_zc_locate(SM, tick, x0, stop, &R, &term);
            if (M->error) {
                cnt[3] = stop;
                return -1;
            }
            if (term) {
                cnt[7] = term - 1;
                return 1;
            }
#endif
        }
#endif
        cosim_sim_major_a(SM, stop, cnt);
        if (M->error) return -1;
        stops++;
#if COSIM_NMON > 0
        if (cosim_monitors_due(M)) {  /* the monitors run in Python, then major_b */
            SM->resume = 1;
            return 2;
        }
#endif
        cosim_sim_sample(M, &R, stop);  /* (Simulator.major: observers, then updates) */
        cosim_sim_major_b(SM, stop);
        if (M->error) return -1;
    }
    return M->error ? -1 : 0;
}

/* One macro step of a state held in C (cosim.held_step; CompiledRun._held_step and the
 * native master loop, cosim.native_loop): the state as a push of it would leave it, a
 * snapshot into keep (cosim_sim_model_size bytes), then cosim_sim_run to end (no recording:
 * the stops' times into tbuf, 512 doubles) with the counts in cnt[8] (zeroed here).  0, or
 * -1 with the state as it was (the caller redoes the step the whole way) when a call did not
 * complete (an error, a terminal event, a monitor). */
int cosim_sim_held_step(void *p, int64_t end, int64_t dt, double *tbuf, int64_t *cnt,
                        void *keep) {
    SimModel *SM = (SimModel *)p;
    ModelState *S = &SM->m.st;
    int64_t count = 0;
    int j;
    for (j = 0; j < 8; j++) cnt[j] = 0;
    S->dirty = 0;
    S->tc_ok[0] = S->tc_ok[1] = 0;
    SM->m.error = NULL;
    memcpy(keep, SM, sizeof(SimModel));
    while (S->ticks < end) {
        cnt[0] = 0;
        if (cosim_sim_run(p, end, 256, dt, NULL, 0, 0, 0, 1, &count, tbuf, tbuf, cnt) != 0) {
            memcpy(SM, keep, sizeof(SimModel));
            return -1;
        }
    }
    return 0;
}
