"""What the evaluations share: a sample spread over a file, calls run a few at a time, figures
printed, and the usage error of `glossator eval answers`."""

from __future__ import annotations

import asyncio
import json
import sys

from services.commands import exit_codes
from services.commands.progress import Progress


def spread(items: list, limit: int) -> list:
    """`limit` items evenly spread over the list (all of them when limit is 0 or too large)."""
    if limit <= 0 or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


async def bounded(concurrency: int, jobs, progress: Progress | None = None) -> list:
    """Runs the coroutines with at most `concurrency` in flight; results in order. `progress`
    counts the jobs done."""
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def run(job):
        nonlocal done
        async with gate:
            result = await job
        done += 1
        if progress is not None:
            progress.update(done)
        return result

    return await asyncio.gather(*(run(job) for job in jobs))


def usage_error(message: str) -> int:
    print(f"glossator eval answers: error: {message}", file=sys.stderr)
    return exit_codes.USAGE


def print_figures(figures: dict, heading: str, count_key: str, width: int, as_json: bool) -> int:
    """The figures as one JSON object, or one a line under a heading that gives the count."""
    if as_json:
        print(json.dumps(figures))
        return exit_codes.OK
    print(heading)
    for key, value in figures.items():
        if key != count_key:
            print(f"  {key:<{width}} {value}")
    return exit_codes.OK
