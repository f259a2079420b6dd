/* ---------------------------------------------------------------- the compiled Simulator
 * Appended to the model core by cosim.compiled_run: a Model of its own (no FMI), and the
 * fixed-step run of cosim.fixed_step.FixedStepAdvancer with the recording of
 * cosim.observers.Recorder (one sample per stop, its Decimator). */

void *cosim_sim_new(void) {
    Model *M = (Model *)calloc(1, sizeof(Model));
    if (!M) return NULL;
    cosim_reset(M);
    M->st.initialized = 1;
    return M;
}
void cosim_sim_free(void *p) { free(p); }
size_t cosim_sim_model_size(void) { return sizeof(Model); }
ModelState *cosim_sim_state(void *p) { return &((Model *)p)->st; }
const char *cosim_sim_error(void *p) { return ((Model *)p)->error; }
void cosim_sim_clear_error(void *p) { ((Model *)p)->error = NULL; }

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

/* cosim_major with the restarts of Simulator.major: the history is forgotten at a
 * breakpoint, and at a sample hit where a watched held output (COSIM_WATCH: the signal
 * offsets of rate group g from COSIM_WATCH_START[g], per multistep_restart) changes value
 * in the hit's output evaluation (counted in cnt[4]). */
static void cosim_sim_major(Model *M, int64_t tick, volatile int64_t *cnt) {
    ModelState *S = &M->st;
    double before[NWATCH1];
    int due[NG1], g, k, n = 0, changed = 0;
    S->ticks = tick;
    S->time = S->mode_time = (double)tick * 1e-9;
    if (M->ab3_drop || cosim_is_breakpoint(tick)) {
        M->ab3_n = 0;
        M->ab3_h = 0.0;
        M->ab3_drop = 0;
    }
    cosim_due(tick, due);
    for (g = 0; g < NG; g++)
        if (due[g])
            for (k = COSIM_WATCH_START[g]; k < COSIM_WATCH_START[g + 1]; k++)
                before[n++] = S->s[COSIM_WATCH[k]];
    cosim_eval(M, S->x, due);
    n = 0;
    for (g = 0; g < NG; g++)
        if (due[g])
            for (k = COSIM_WATCH_START[g]; k < COSIM_WATCH_START[g + 1]; k++)
                if (before[n++] != S->s[COSIM_WATCH[k]]) changed = 1;
    if (changed) {
        M->ab3_n = 0;
        M->ab3_h = 0.0;
        cnt[4]++;
    }
    cosim_updates(M, due);
    S->dirty = 0;
}
#endif

/* Decimator.keep: on the dt grid (grid > 0: dt * every, with every sample off the dt grid
 * kept), else by count */
static int cosim_keep(int64_t tick, int64_t t0, int64_t dt, int64_t grid, int64_t every,
                      int64_t *count) {
    int64_t k = tick - t0;
    if (grid > 0) return k % grid == 0 || k % dt != 0;
    return ((*count)++) % every == 0;
}

/* At most max_stops stops from the state's time towards end [ns] on the grid dt (0: none),
 * as FixedStepAdvancer.advance (a stop at every grid point, sample hit, breakpoint and at
 * end; one Runge-Kutta step to each when there are continuous states; the major point
 * there).  At each stop kept by the decimation (t0, grid, every, *count as Decimator) the
 * time goes to t[n] and the signals at off[0..nrec) to rows[n * nrec ..].  cnt[0] counts
 * the rows written, cnt[1] the steps, cnt[2] the partial steps (shorter than dt), each as
 * the stop completes (what an interrupted caller keeps); AB3: cnt[4] the restarts at sample
 * hits (cosim_sim_major), cnt[5] the right-hand-side evaluations.  Returns 0, or -1 on an error
 * (cosim_sim_error; cnt[3] the stop whose step failed; the state is that of the failed step). */
int cosim_sim_run(void *p, int64_t end, int64_t max_stops, int64_t dt, const int *off,
                  int nrec, int64_t t0, int64_t grid, int64_t every, int64_t *count,
                  double *t, double *rows, volatile int64_t *cnt) {
    Model *M = (Model *)p;
    ModelState *S = &M->st;
    int64_t stops = 0;
    while (S->ticks < end && stops < max_stops && !M->error) {
        int64_t tick = S->ticks;
        int64_t stop = cosim_next_event(tick);
        if (stop > end) stop = end;
        if (dt > 0) {
            int64_t g = (cosim_floordiv(tick, dt) + 1) * dt;
            if (g < stop) stop = g;
        }
#if NX > 0
#if COSIM_METHOD == COSIM_AB3
        cnt[5] += cosim_ab3_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
#else
        cosim_rk_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
#endif
        if (M->error || cosim_check_finite(M, stop)) {
            cnt[3] = stop;
            return -1;
        }
        cnt[1]++;
        if (dt > 0 && stop - tick != dt) cnt[2]++;
#endif
#if COSIM_METHOD == COSIM_AB3
        cosim_sim_major(M, stop, cnt);
#else
        cosim_major(M, stop, 0);
#endif
        if (M->error) return -1;
        stops++;
        if (cosim_keep(stop, t0, dt, grid, every, count)) {
            int64_t n = cnt[0];
            int j;
            t[n] = S->time;
            for (j = 0; j < nrec; j++) rows[n * nrec + j] = S->s[off[j]];
            cnt[0] = n + 1;
        }
    }
    return M->error ? -1 : 0;
}
