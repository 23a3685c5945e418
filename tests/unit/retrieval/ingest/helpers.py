"""Helpers of the ingestion tests: where the real corpora are, and checks on chunk text."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

EVAL_DIR = Path(__file__).resolve().parents[5] / "shared" / "eval"
PHYSICAL_AI_DOCS = EVAL_DIR / "corpora" / "physical-ai-book" / "docs"
AGENTFACTORY_DOCS = EVAL_DIR / "corpora" / "agentfactory" / "docs"

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


def corpus(path: Path) -> Path:
    """The corpus folder (read in place, never copied), or a skip saying where it was expected."""
    if not path.is_dir():
        pytest.skip(f"evaluation corpus not found at {path} (../shared/eval beside the repository)")
    return path


def words(text: str) -> int:
    """A tokenizer stand-in for small fixtures: one token per whitespace-separated word."""
    return len(text.split())


def fences_balanced(text: str) -> bool:
    """Every fenced code block that opens in `text` closes in it (CommonMark's fence rules)."""
    open_fence = ""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if not match:
            continue
        fence, info = match.groups()
        if not open_fence:
            if not (fence[0] == "`" and "`" in info):
                open_fence = fence
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence) and not info.strip():
            open_fence = ""
    return not open_fence


def alias_bomb(levels: int = 9) -> str:
    """A page whose front matter is a billion laughs: level one a list of nine strings, each next
    level a list of nine aliases of the one below (9**levels strings once expanded, in a few hundred
    bytes), the last where a number is expected (the error about it used to quote the value)."""
    names = "abcdefghijklmnop"[:levels]
    lines = ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
    lines += [
        f"{name}: &{name} [" + ",".join([f"*{below}"] * 9) + "]" for below, name in itertools.pairwise(names)
    ]
    return (
        "---\n" + "\n".join(lines) + f"\nsidebar_position: *{names[-1]}\n---\n# Laughs\n\nNothing to see.\n"
    )
