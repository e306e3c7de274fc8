"""A plain text progress bar on stderr for long runs (no dependencies)."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "label") as bar: bar.update(done)`` draws ``label [####....] 42%``
    on one stderr line, at most every ``interval`` seconds, and ends the line when closed."""

    def __init__(self, total: float, label: str = "", width: int = 30, interval: float = 0.2,
                 stream: TextIO | None = None) -> None:
        self.total = max(float(total), 1e-300)
        self.label = label
        self.width = width
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self._last = -1.0
        self._start = time.monotonic()

    def update(self, done: float, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        fraction = min(max(done / self.total, 0.0), 1.0)
        filled = int(round(fraction * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {100 * fraction:3.0f}% "
                          f"{now - self._start:5.1f} s")
        self.stream.flush()

    def __enter__(self) -> "Progress":
        self.update(0, force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.update(self.total, force=True)
        self.stream.write("\n")
        self.stream.flush()
