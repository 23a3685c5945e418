"""Shell commands in an answer, or in the sources it cites, that a reader should not run blindly:
a download piped into a shell, a command run as root. An ingested page can say anything, and an
answer quoting it faithfully is grounded; the note lets a client warn before the reader copies it
(or the cited page's command) into a terminal."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

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
        for what in _risks(answer)
    ]


def cited_command_notes(cited: Iterable[int], passages: Sequence[str]) -> list[str]:
    """A note for each kind of risky shell command in each passage the answer cites (numbered 1..):
    a reader following the citation finds it there even when the answer does not quote it."""
    return [
        f"source [{number}] contains a shell command that {what}: check it before running it"
        for number in sorted(set(cited))
        if 1 <= number <= len(passages)
        for what in _risks(passages[number - 1])
    ]


def _risks(text: str) -> list[str]:
    return [what for pattern, what in _RISKY_COMMANDS if pattern.search(text)]
