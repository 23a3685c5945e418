"""Word lists kept as data files, one entry a line ("#" starts a comment line), read once.

The English lists live in `wordlists/` beside this module; a service keeps lists of its own
beside its code and reads them with `read_list`. Lists are data, not code: reviewing one is
reading a file, and a test checks that each is lower case (the English ones) and free of repeats.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

WORDLISTS = "wordlists"


@cache
def read_list(package: str, filename: str) -> tuple[str, ...]:
    """The entries of a list file of `package`, in file order, stripped; blank and comment lines
    are skipped."""
    text = resources.files(package).joinpath(*filename.split("/")).read_text(encoding="utf-8")
    return tuple(
        line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )


def word_list(name: str) -> frozenset[str]:
    """The English word list `wordlists/<name>.txt`."""
    return frozenset(read_list(__package__, f"{WORDLISTS}/{name}.txt"))


def word_map(name: str) -> dict[str, str]:
    """The list `wordlists/<name>.txt` of "<word> <value>" lines as a mapping."""
    return dict(line.split(maxsplit=1) for line in read_list(__package__, f"{WORDLISTS}/{name}.txt"))
