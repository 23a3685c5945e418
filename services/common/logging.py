"""structlog set-up: one JSON object a line (or console lines for people), with the per-call
context bound by the interceptor.

Library loggers (sentence_transformers, asyncio, ...) and Python warnings go through the same
processors, by the root handler, so that in json mode every line on stderr is JSON; console
mode writes colours only to a terminal, never into a pipe or a file.
"""

from __future__ import annotations

import logging
import sys

import structlog


class _StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a record comes, not when configured: it may be
    replaced later (tests do)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _ignored) -> None:
        """Always sys.stderr."""


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    """Routes structlog and stdlib logging to stderr as JSON or console lines."""
    if fmt == "json":
        render = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        # Plain tracebacks: rich's would print every frame's local variables, request data included.
        plain = structlog.dev.plain_traceback
        render = [structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty(), exception_formatter=plain)]
    stamp = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*stamp, structlog.processors.StackInfoRenderer(), *render],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        # sys.stderr is looked up per logger, not captured now: it may be replaced later (tests do).
        logger_factory=lambda *_args: structlog.PrintLogger(sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = _StderrHandler()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*stamp, structlog.stdlib.add_logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *render],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    logging.captureWarnings(True)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)
