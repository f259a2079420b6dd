"""Plots of results (matplotlib, in the ``plot`` extra, imported lazily)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import OutputError


def panels(results: Any, signals: list[str] | None = None) -> list[tuple[str, list]]:
    """``[(unit, [(signal, scale, bias)])]``: one panel per physical dimension.

    Signals whose units differ only by scale share a panel (rpm and rad/s, mm and m): each
    is converted to the unit of the first signal of its panel (``value * scale + bias``).
    Unitless signals and units that do not parse share a ``-`` panel of their own unit.
    """
    from .units import conversion, parse_unit
    names = signals or [k for k, v in results.signals.items() if np.ndim(v) == 1]
    out: list[tuple[str, list]] = []
    keys: dict = {}
    for n in names:
        text = results.units.get(n, "") or ""
        try:
            u = parse_unit(text) if text else None
        except Exception:  # noqa: BLE001 - an unknown unit gets a panel of its own
            u = None
        key = (u.exponents if u is not None and not u.is_dimensionless else ("text", text))
        if key not in keys:
            keys[key] = len(out)
            out.append((text or "-", []))
        unit = out[keys[key]][0]
        scale, bias = (1.0, 0.0) if unit in ("-", text) else conversion(text, unit)
        out[keys[key]][1].append((n, scale, bias))
    return out


def draw_results(results: Any, axes: Any, groups: list) -> None:
    """Draw the panels of :func:`panels` on ``axes`` (one per panel), every axis labelled."""
    for ax, (unit, group) in zip(axes, groups):
        for n, scale, bias in group[:8]:
            y = np.asarray(results[n], dtype=float) * scale + bias
            own = results.units.get(n, "") or ""
            label = n if own in ("", unit) else f"{n} (from {own})"
            ax.plot(results.time, y, label=label)
        ax.set_ylabel(f"[{unit}]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[-1].set_xlabel("time [s]")


def figure(results: Any, signals: list[str] | None = None, title: str | None = None) -> Any:
    """A matplotlib Figure of ``results`` (one panel per physical dimension), on the
    current backend (inline in a notebook): what :meth:`Results.plot` returns."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OutputError("plotting needs matplotlib, a dependency of cosim that is "
                          "missing here: reinstall cosim (pip install cosim)") from exc
    groups = panels(results, signals)
    n_axes = max(1, len(groups))
    fig, axes = plt.subplots(n_axes, 1, sharex=True, figsize=(8, 2.2 * n_axes + 0.8),
                             squeeze=False)
    draw_results(results, axes[:, 0], groups)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_results(results: Any, path: str, signals: list[str] | None = None,
                 title: str | None = None) -> str:
    """Save a PNG with one panel per physical dimension (:func:`panels`); returns the
    path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OutputError("plotting needs matplotlib, a dependency of cosim that is "
                          "missing here: reinstall cosim (pip install cosim)") from exc
    fig = figure(results, signals, title)
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
