"""C shared by the compiled master loops (:mod:`fmus.compiled_master_c`,
:mod:`cosim.codegen.native_loop_c`): the signal histories on arrays."""

#: ``hist_push``: :meth:`SignalHistory.push <cosim.extrapolation.SignalHistory.push>`'s
#: common case on signal ``s``'s ``depth`` slots (oldest first) of ``hist_t``/``hist_v``
#: with ``hist_n[s]`` of them used: samples at or after ``t`` replaced (a redone instant),
#: the oldest dropped when full.
HISTORY_PUSH = r"""
static void hist_push(int64_t *hist_t, double *hist_v, int *hist_n, int depth, int s,
                      int64_t t, double v) {
    int64_t *ts = hist_t + (size_t)s * depth;
    double *vs = hist_v + (size_t)s * depth;
    int n = hist_n[s];
    while (n > 0 && ts[n - 1] >= t) n--;
    if (n == depth) { /* the oldest out (element by element: no call to memmove) */
        for (int i = 1; i < depth; i++) {
            ts[i - 1] = ts[i];
            vs[i - 1] = vs[i];
        }
        n--;
    }
    ts[n] = t;
    vs[n] = v;
    hist_n[s] = n + 1;
}
"""
