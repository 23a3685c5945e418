"""Every routine that reads user text (a page, a question, an answer, a model's output) stays
linear on pathological input: runs of each punctuation character, runs alternating with a letter,
a 100,000-character word, long space runs before a closing mark, deep nesting. A quadratic regex
costs seconds here (LINK_RE took 12 s on 20,000 "["); the budget is CPU time, so a busy machine
does not fail it."""

from __future__ import annotations

import string
import time
from collections.abc import Callable

import pytest

from services.agent.citations import cap_answer, filter_markers, marker_indexes
from services.agent.models.textguard import find_leaks, parse_text_tool_call, strip_template_tokens
from services.common.text import units, words
from services.common.text.display import display_text, show_links
from services.common.text.prose import normalise, prose_sentences
from services.retrieval.ingest import DocumentError, SourceDocument, parse_document
from services.retrieval.ingest.headings import plain_heading_text, split_explicit_id
from services.retrieval.ingest.markdown import parse_markdown, strip_mdx
from services.retrieval.sparse import SparseEncoder
from services.validation.claims import find_citations, split_claims, strip_citations
from services.validation.commands import command_notes

SIZE = 30_000
CPU_BUDGET_SECONDS = 0.5
# Over the budget, a routine passes if doubling its input at most LINEAR_RATIO times its cost,
# below a hard ceiling: a quadratic one quadruples, and costs seconds at this size.
LINEAR_RATIO = 2.8
LINEAR_CEILING_SECONDS = 2.0


def _inputs() -> dict[str, str]:
    inputs = {}
    for char in string.punctuation + " \t\n":
        inputs[f"run of {char!r}"] = char * SIZE
        inputs[f"{char!r} alternating"] = (char + "a") * (SIZE // 2)
        inputs[f"{char!r} spaced"] = (char + "a ") * (SIZE // 3)
    return inputs | {
        "one long word": "a" * 100_000,
        "unclosed links": "[a](" * (SIZE // 4),
        "links into links": "[a](x" * (SIZE // 5),
        "unclosed strong": "**a " * (SIZE // 4),
        "unclosed strike": "~~a " * (SIZE // 4),
        "unclosed comments": "<!--" * (SIZE // 4),
        "unclosed tags": "<a " * (SIZE // 3),
        "spaces before a closing #": "# a" + " " * SIZE + "#x",
        "spaces before a word": "a" + " " * SIZE + "x",
        "explicit id openers": "{#" * (SIZE // 2),
        "nested components": "<A>" * (SIZE // 3) + "text" + "</A>" * (SIZE // 3),
        "nested divs": "<div>" * 5000 + "text" + "</div>" * 5000,
        "nested lists": "<ul><li>item" * 2000 + "</li></ul>" * 2000,
        "nested tables": "<table><tr><td>" * 1000 + "cell" + "</td></tr></table>" * 1000,
        "nested brackets": "[" * SIZE + "]" * SIZE,
        "digits": "1" * SIZE,
        "citation markers": "[1]" * (SIZE // 3),
        "tool-call openers": '{"name": "' * (SIZE // 10),
        "template tokens": "<|im_start|>" * (SIZE // 12),
        "downloads never piped": "curl x " * (SIZE // 7),
    }


_SPARSE = SparseEncoder()


def _document(path: str) -> Callable[[str], object]:
    def parse(content: str) -> object:
        try:
            return parse_document(SourceDocument(source_path=path, content=content))
        except DocumentError:  # refusing is fine; taking long is not
            return None

    return parse


ROUTINES: dict[str, Callable[[str], object]] = {
    "display_text": display_text,
    "show_links": show_links,
    "plain_heading_text": plain_heading_text,
    "split_explicit_id": split_explicit_id,
    "parse_markdown": parse_markdown,
    "strip_mdx": strip_mdx,
    "parse_document markdown": _document("page.md"),
    "parse_document html": _document("page.html"),
    "prose_sentences": prose_sentences,
    "normalise": normalise,
    "sparse encode": _SPARSE.encode_document,
    "find_citations": find_citations,
    "strip_citations": strip_citations,
    "split_claims": split_claims,
    "command_notes": command_notes,
    "tokens": words.tokens,
    "capitalised_words": words.capitalised_words,
    "attribution_span": words.attribution_span,
    "unwrap_soft_breaks": units.unwrap_soft_breaks,
    "sentence_units": units.sentence_units,
    "line_sentences": units.line_sentences,
    "line_kinds": lambda value: units.line_kinds(value.split("\n")),
    "marker_indexes": marker_indexes,
    "filter_markers": lambda value: filter_markers(value, lambda number: number < 3),
    "cap_answer": lambda value: cap_answer(value, 2000),
    "strip_template_tokens": strip_template_tokens,
    "parse_text_tool_call": lambda value: parse_text_tool_call(value, ["retrieval_tool"]),
    "find_leaks": lambda value: find_leaks(value, "Answer from the passages.", tool_names=["retrieval_tool"]),
}


@pytest.mark.parametrize("routine", ROUTINES, ids=list(ROUTINES))
def test_every_text_routine_stays_within_its_cpu_budget_on_pathological_input(routine: str) -> None:
    run = ROUTINES[routine]
    slow = {}
    for name, value in _inputs().items():
        spent = _cpu_seconds(run, value)
        # Over budget once may be the shared machine (a busy neighbour slows even CPU time, by up
        # to 3x here): the least of three runs is the routine's own cost. A quadratic routine is
        # over it every time (seconds, not a fraction).
        if spent > CPU_BUDGET_SECONDS:
            spent = min(spent, _cpu_seconds(run, value), _cpu_seconds(run, value))
        if spent > CPU_BUDGET_SECONDS and not _linear(run, value, spent):
            slow[name] = round(spent, 2)
    assert not slow, f"{routine} over {CPU_BUDGET_SECONDS} s of CPU on: {slow}"


def _linear(run, value: str, spent: float) -> bool:
    """Whether a routine just over the budget is only slow, not quadratic: within LINEAR_CEILING
    and no more than LINEAR_RATIO times its cost on the first half of the input (a quadratic one
    costs four times as much). 10,000 nested HTML components parse linearly in 0.34-0.59 s here."""
    if spent > LINEAR_CEILING_SECONDS:
        return False
    half = value[: len(value) // 2]
    half_spent = min(_cpu_seconds(run, half) for _ in range(3))
    return spent <= LINEAR_RATIO * max(half_spent, 0.01)


def _cpu_seconds(run, value: str) -> float:
    started = time.process_time()
    run(value)
    return time.process_time() - started
