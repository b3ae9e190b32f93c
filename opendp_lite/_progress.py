"""A plain-text progress bar for long loops (sensitivity sampling)."""

import sys
from typing import IO


class ProgressBar:
    """A plain-text progress bar on stderr: ``sensitivity sampling [#####-----]  50% 500/1000``.

    >>> import io
    >>> buf = io.StringIO()
    >>> bar = ProgressBar(4, file=buf, width=4)
    >>> bar.update(2); bar.close()
    >>> buf.getvalue().splitlines()[-1].strip()
    'sensitivity sampling [####] 100% 4/4'
    """

    def __init__(
        self, total: int, *, file: IO[str] | None = None, width: int = 30, label: str = ""
    ) -> None:
        self.total = max(1, total)
        self.done = 0
        self.width = width
        self.label = label or "sensitivity sampling"
        self.file = file if file is not None else sys.stderr
        self._shown = -1

    def update(self, n: int) -> None:
        """Advance by ``n`` steps; redraws at most once per percent."""
        self.done = min(self.total, self.done + n)
        pct = 100 * self.done // self.total
        if pct != self._shown:
            self._shown = pct
            fill = self.width * self.done // self.total
            bar = "#" * fill + "-" * (self.width - fill)
            self.file.write(f"\r{self.label} [{bar}] {pct:3d}% {self.done}/{self.total}")
            self.file.flush()

    def close(self) -> None:
        """Complete the bar and end its line."""
        self.update(self.total - self.done)
        self.file.write("\n")
        self.file.flush()
