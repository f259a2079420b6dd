"""Plots of results (matplotlib, in the ``plot`` extra, imported lazily)."""

from __future__ import annotations

from typing import Any

from .errors import OutputError


def plot_results(results: Any, path: str, signals: list[str] | None = None,
                 title: str | None = None) -> str:
    """Save a PNG with one subplot per unit; returns the path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OutputError("plotting needs matplotlib: pip install 'cosim[plot]'") from exc
    names = signals or [k for k, v in results.signals.items() if v.ndim == 1]
    by_unit: dict[str, list[str]] = {}
    for n in names:
        by_unit.setdefault(results.units.get(n, "") or "-", []).append(n)
    n_axes = max(1, len(by_unit))
    fig, axes = plt.subplots(n_axes, 1, sharex=True, figsize=(8, 2.2 * n_axes + 0.8),
                             squeeze=False)
    for ax, (unit, group) in zip(axes[:, 0], by_unit.items()):
        for n in group[:8]:
            ax.plot(results.time, results[n], label=n)
        ax.set_ylabel(f"[{unit}]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        raise OutputError(f"cannot write plot {path!r}: {exc}") from exc
    finally:
        plt.close(fig)
    return path


def save_figure(path: str, draw: Any, nrows: int = 1, ncols: int = 1,
                figsize: tuple = (7, 4), **subplots: Any) -> str | None:
    """An optional figure for an example: ``draw(fig, axes)`` on the Agg backend, saved to
    ``path`` and closed; prints ``plot: PATH`` and returns it, or prints why there is no
    plot (matplotlib missing, a drawing error) and returns None: plots never stop a run."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(nrows, ncols, figsize=figsize, **subplots)
        try:
            draw(fig, axes)
            fig.tight_layout()
            fig.savefig(path, dpi=100)
        finally:
            plt.close(fig)
    except Exception as exc:  # plotting is optional
        print(f"  (no plot: {exc})")
        return None
    print("  plot:", path)
    return path
