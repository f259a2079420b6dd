"""The progress bar (tqdm): drawn on a terminal only, after its delay."""

import io

from cosim.progress import ProgressBar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(stream, enabled=True):
    bar = ProgressBar(0, 10**9, enabled, delay=0.0, stream=stream)
    for k in range(1, 2049):
        bar.tick(k * 100_000)
    bar.done()
    return stream.getvalue()


def test_the_bar_is_drawn_on_a_terminal():
    text = _run(_Terminal())
    assert "t = " in text and "of 1 s" in text


def test_no_bar_off_a_terminal_or_when_disabled():
    assert _run(io.StringIO()) == ""  # a pipe or a log file: nothing
    assert _run(_Terminal(), enabled=False) == ""
