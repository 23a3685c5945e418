"""Shell commands in an answer that a reader should not run blindly: a download piped into a shell,
a command run as root. An ingested page can say anything, and an answer quoting it faithfully is
grounded; the note lets a client warn before the reader copies it into a terminal."""

from __future__ import annotations

import re

# Each part bounded or stopped by the character the next one needs: linear on any text.
_RISKY_COMMANDS = (
    (
        re.compile(r"\b(?:curl|wget|fetch|iwr)\b[^|\n]{0,500}\|[ \t]*(?:sudo[ \t]+)?(?:ba|z|da|k)?sh\b"),
        "pipes a download into a shell",
    ),
    (re.compile(r"\bsudo[ \t]+\S"), "runs a command as root (sudo)"),
)


def command_notes(answer: str) -> list[str]:
    """A note for each kind of risky shell command the answer contains."""
    return [
        f"the answer contains a shell command that {what}: check it before running it"
        for pattern, what in _RISKY_COMMANDS
        if pattern.search(answer)
    ]
