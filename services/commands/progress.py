"""Progress of a long command step on stderr, readable wherever stderr goes.

On a terminal: rich's live bar (percentage, counts, elapsed and remaining time). Anywhere else (a
pipe, a file, a CI log) a live bar cannot redraw, and rich's last frame shrinks its counts to
"…": there, a plain line every few seconds and a last one when the step ends, each whole and
ending its line.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, TaskProgressColumn, TextColumn
from rich.progress import Progress as RichProgress

# A plain line at most this often (and once at the end).
PLAIN_EVERY_SECONDS = 5.0


class Progress:
    """`with Progress("ingesting", total, "documents"):` then `update(done, detail)` as the step goes.

    `total` None: unknown (a crawl). `detail` is the rest of the line ("4 chunks · 0 failed").
    Quiet: nothing is shown.
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        unit: str,
        *,
        quiet: bool = False,
        console: Console | None = None,
    ) -> None:
        self._console = console or Console(stderr=True, soft_wrap=True)
        self._label, self._total, self._unit = label, total, unit
        self._quiet = quiet
        self._live = not quiet and self._console.is_terminal
        self._done, self._detail = 0, ""
        self._started = self._said = time.monotonic()
        # The counts first, the bar last and elastic: a narrow terminal shortens the bar, not them.
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            TextColumn("{task.fields[line]}", markup=False),
            TaskProgressColumn(),
            BarColumn(bar_width=None),
            console=self._console,
            disable=not self._live,
        )
        self._task = self._bar.add_task(label, total=total, line=self._line())

    def __enter__(self) -> Progress:
        self._started = self._said = time.monotonic()
        self._bar.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._bar.stop()
        if not self._live and not self._quiet and kind is None:
            self._say()

    def update(self, done: int, detail: str = "") -> None:
        self._done, self._detail = done, detail
        if self._live:
            self._bar.update(self._task, completed=done, line=self._line())
        elif not self._quiet and time.monotonic() - self._said >= PLAIN_EVERY_SECONDS:
            self._say()

    def _line(self) -> str:
        """The counts: "12/40 documents · 4 chunks · 0 failed"."""
        counted = f"{self._done}/{self._total}" if self._total is not None else f"{self._done}"
        detail = f" · {self._detail}" if self._detail else ""
        return f"{counted} {self._unit}{detail}"

    def _say(self) -> None:
        self._said = time.monotonic()
        elapsed = self._said - self._started
        print(f"{self._label}: {self._line()} ({elapsed:.1f} s)", file=sys.stderr, flush=True)
