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
ModelState *cosim_sim_state(void *p) { return &((Model *)p)->st; }
const char *cosim_sim_error(void *p) { return ((Model *)p)->error; }
void cosim_sim_clear_error(void *p) { ((Model *)p)->error = NULL; }

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
 * the stop completes (what an interrupted caller keeps).  Returns 0, or -1 on an error
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
        cosim_rk_step(M, (double)tick * 1e-9, (double)(stop - tick) * 1e-9);
        if (M->error || cosim_check_finite(M, stop)) {
            cnt[3] = stop;
            return -1;
        }
        cnt[1]++;
        if (dt > 0 && stop - tick != dt) cnt[2]++;
#endif
        cosim_major(M, stop, 0);
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
