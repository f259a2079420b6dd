"""Published reference problems with their exact solutions, as installed modules.

Docs, tests, examples and benchmarks import them from here, so a snippet runs from any
folder (``bench`` and ``examples`` are folders of the repository, not installed packages).

* :mod:`~blocks.benchmarks.lim`: the LIM two-mass linear oscillator co-simulation benchmark
  (fgonzalezLIM/cosim-benchmarks) in its force-displacement, displacement-displacement,
  force-force and power-bond couplings, with the exact solution :func:`~.lim.exact`;
* :mod:`~blocks.benchmarks.bouncing_ball`: a ball falling onto a rigid floor with
  restitution, with its analytic impact instants :func:`~.bouncing_ball.analytic_impacts`.
"""
