"""A plain text progress bar on stderr for long runs (no dependencies)."""
from __future__ import annotations

import subprocess
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


def _last_time(csv_path: str) -> float:
    """Simulated time of the last complete row cusp-sim has flushed to its CSV (0 if none)."""
    try:
        with open(csv_path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 4096))
            lines = f.read().split(b"\n")
    except OSError:
        return 0.0
    for line in reversed(lines[:-1]):  # the last piece may be a partial row
        try:
            return float(line.split(b",", 1)[0])
        except ValueError:
            continue
    return 0.0


def run_with_progress(cmd: list[str], csv_path: str, seconds: float | None,
                      label: str) -> tuple[int, str, str]:
    """Run cusp-sim (writing its CSV to csv_path) and show its simulated time as a progress bar.
    Returns (returncode, stdout, stderr)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with Progress(seconds or 1.0, label) as bar:
        while proc.poll() is None:
            bar.update(_last_time(csv_path))
            time.sleep(0.1)
    stdout, stderr = proc.communicate()
    return proc.returncode, stdout, stderr
