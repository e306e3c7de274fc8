"""A plain text progress bar on stderr for long runs (no dependencies)."""
from __future__ import annotations

import math
import sys
import time
from typing import TextIO


def is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is an interactive terminal (a closed or odd stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """``with Progress(total, "label") as bar: bar.update(done)``.

    On a terminal: draws ``label [####....] 42%  1.3 s`` on one line, redrawn in place (``\\r``)
    at most every ``interval`` seconds, and ends the line when closed. Anywhere else (a pipe, a
    log file, CI): plain lines ``label  25%  1.3 s``, one when the run starts, one at each
    further ``step`` of the total (a quarter by default) and one at the end, never a ``\\r``."""

    def __init__(self, total: float, label: str = "", width: int = 30, interval: float = 0.2,
                 stream: TextIO | None = None, step: float = 0.25) -> None:
        self.total = max(float(total), 1e-300)
        self.label = label
        self.width = width
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = is_terminal(self.stream)
        self.step = step
        self._next_line = 0.0  # the fraction at which the next plain line is due
        self._last = -1.0
        self._start = time.monotonic()

    def update(self, done: float, force: bool = False) -> None:
        now = time.monotonic()
        fraction = min(max(done / self.total, 0.0), 1.0)
        elapsed = now - self._start
        if not self.terminal:
            if fraction >= self._next_line:
                self.stream.write(f"{self.label} {100 * fraction:3.0f}% {elapsed:5.1f} s\n")
                self.stream.flush()
                # the next multiple of step after this fraction; nothing after 100%
                self._next_line = (math.floor(fraction / self.step + 1e-9) + 1) * self.step
                if fraction >= 1.0:
                    self._next_line = math.inf
            return
        if not force and now - self._last < self.interval:
            return
        self._last = now
        filled = int(round(fraction * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {100 * fraction:3.0f}% {elapsed:5.1f} s")
        self.stream.flush()

    def __enter__(self) -> "Progress":
        self.update(0, force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.update(self.total, force=True)
        if self.terminal:
            self.stream.write("\n")
            self.stream.flush()
