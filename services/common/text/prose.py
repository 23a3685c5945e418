"""Prose sentences of a chunk: what Search scores for highlights and the extractive answerer quotes.

The chunk is cut by the one splitter (`units.sentence_units`), so a highlight, a quoted sentence
and the sentence the validator checks it against are the same unit. Only prose answers a question
on its own, so these are left out:
- what is not prose: code, headings, table rows, lines of links, markup (fences, `:::note`,
  HTML/JSX tags, MDX imports);
- lines introducing what follows ("as follows:") and questions (an FAQ's "Q: ...?");
- fragments: fewer than MIN_SENTENCE_WORDS words, or, for a list item or a line that does not
  end like a sentence ("**Cause**: DDS configuration issues"), fewer than MIN_LIST_ITEM_WORDS
  ("Restart ROS 2 daemon" is a step, not an answer). A labelled figure ("**Era**: 2000-2018",
  "RAM: 16 GB") is a fact however short: the one place a book states it is often such a line.
Words are counted in the text as displayed (`display.display_text`). Spans are offsets into the
chunk text (in code points), so a client can highlight a sentence where it stands.

The extractive answerer also reads a table's data rows, the lines ending with ":" that state a
fact, and the steps that introduce a short command, read with it (`for_answers`; rows read each
cell under its header, tables.py; steps.py); Search scores prose alone.

A list item means little without what it is a list of ("Used for streaming data" is about
Topics only under "#### Publisher-Subscriber (Topics)"), so each one knows its label (the line
introducing the list, a bold title line just above it, or else the heading above it) and the spans
of every item of its list, fragments included: an answer quotes the list whole, under its label.

A lead-in may introduce blocks rather than a list: "Three General Agents dominate 2025:" then
"**Claude Code** (Anthropic)" and its bullets, "**Gemini CLI** (Google)" and its bullets, ...; or
"The bridge has two parts:" then "### Network layer", "### Message translation". For the answerer
(`for_answers`) the blocks' titles are the items of a list under the lead-in, however short: they
are what the lead-in announces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.common.text.display import display_text
from services.common.text.steps import step_readings
from services.common.text.tables import table_rows
from services.common.text.units import LIST_BULLET_RE, PROSE_KINDS, Unit, UnitKind, sentence_units
from services.common.text.words import TOKEN_RE, Analysis, announced_count

MIN_SENTENCE_WORDS = 3
# A sentence going on about the one before it: it opens by referring back to it.
REFERS_BACK_RE = re.compile(r"(?:this|these|that|those|it|its|it's|such|they|their)\b", re.IGNORECASE)
MIN_LIST_ITEM_WORDS = 5
_SENTENCE_CLOSE_RE = re.compile(r"[.!]['\"”’)\]]*$")
# A heading's numbering ("3. ", "Step 4.1: "), which a label quoting it leaves out.
HEADING_NUMBER_RE = re.compile(
    r"^(?:(?:step|phase|part|issue|scenario)\s+)?\d+(?:\.\d+)*[.:)]?\s+", re.IGNORECASE
)
# A finite verb saying that something is so (not an instruction to the reader).
_STATEMENT_RE = re.compile(
    r"\b(?:is|are|was|were|has|have|requires?|needs?|supports?|must|should|can|cannot|will|means)\b",
    re.IGNORECASE,
)
# A verb of doing after its subject ("Templated resources use URI patterns with placeholders
# ...:", "The bridge sends ..."): first in its line ("Use the following settings:") or after "and"
# ("Build and run tests:") it is an instruction, after "to" a purpose.
_DOING = (
    "use", "provide", "allow", "let", "enable", "contain", "include", "define", "represent", "return",
    "store", "hold", "handle", "take", "give", "work", "run", "create", "send", "read", "write",
)  # fmt: skip
_ACTION_RE = re.compile(
    rf"(?<!\bto )\b(?:{'|'.join(verb + 's' for verb in _DOING)})\b|(?<=[a-z]s )(?:{'|'.join(_DOING)})\b",
    re.IGNORECASE,
)
# A line that is a bold title and nothing else ("**Claude Code** (Anthropic)", "**Traditional (GIL)**:").
_TITLE_LINE_RE = re.compile(r"^(?:\*\*[^*\n]+\*\*|__[^_\n]+__)(?:\s*\([^()\n]*\))?\s*:?$")
_HEADING_MARKS_RE = re.compile(r"^\s*(#+)")
# "Label: value" where the value holds a figure.
_LABELLED_FIGURE_RE = re.compile(r"^[^:]{1,40}:\s*\S*\d")


@dataclass(frozen=True)
class ProseSentence:
    start: int
    end: int
    # The text of the last heading above the sentence in the chunk ("" when none is).
    heading: str
    # For a list item: what the list is a list of, as displayed and without its closing ":" (the
    # lead-in line just above the list, or else `heading`), and the (start, end) of every item of
    # its list in order, itself included. Empty for other sentences.
    label: str = ""
    items: tuple[tuple[int, int], ...] = ()
    # For a table's data row: how it reads, each cell under its header (tables.row_reading); its
    # label is the heading above the table and its items are the table's rows. For a step that
    # introduces a short command: the step with its command (steps.step_readings).
    reading: str = ""
    # Too short to answer on its own, but one of the things its list names: a block's title (the
    # items of a lead-in's list of blocks are their titles) or a list item of a few words
    # ("ProBuilder (for quick prototyping)"). It answers a question asking for several things.
    list_only: bool = False
    # A block title whose blocks run on past the end of the chunk: the chunks after it continue
    # its list (the answerer takes their section titles from the passages retrieved with it).
    runs_on: bool = False


def prose_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each prose sentence of the text, in order."""
    return [(sentence.start, sentence.end) for sentence in sectioned_sentences(text)]


def sectioned_sentences(text: str, *, for_answers: bool = False) -> list[ProseSentence]:
    """The prose sentences of the text, in order, each with the heading it stands under (and, for
    a list item, its label and its list). `for_answers` adds what the answerer quotes besides
    (Search scores prose only): the data rows of its tables, as they read, and the lines ending
    with ":" that introduce no list ("Python 3.10+ is required for ROS 2 Humble:" above a code
    block states a fact; a list's lead-in is its items' label)."""
    found = []
    heading = ""
    units = sentence_units(text)
    lists = _lists(text, units)
    rows = table_rows(text, units) if for_answers else {}
    titles = _announced_titles(text, units) if for_answers else {}
    steps = step_readings(text, units) if for_answers else {}
    for index, unit in enumerate(units):
        if unit.kind == UnitKind.HEADING:
            heading = display_text(text[unit.start : unit.end])
        if index in titles:
            lead_in, items, runs_on = titles[index]
            found.append(
                ProseSentence(
                    unit.start, unit.end, heading, _label(lead_in), items, list_only=True, runs_on=runs_on
                )
            )
            continue
        if index in rows:
            row = rows[index]
            found.append(ProseSentence(unit.start, unit.end, heading, _label(heading), row.rows, row.reading))
            continue
        if index in steps and not _states(display_text(text[unit.start : unit.end]), units, index):
            lead_in, items = lists.get(index, ("", ()))
            label = _label(lead_in or heading) if items else ""
            found.append(ProseSentence(unit.start, unit.end, heading, label, items, steps[index]))
            continue
        if unit.kind not in PROSE_KINDS:
            continue
        shown = display_text(text[unit.start : unit.end])
        if shown.endswith("?") or (
            shown.endswith(":")
            and not (for_answers and index + 1 not in titles and _states(shown, units, index))
        ):
            continue
        lead_in, items = lists.get(index, ("", ()))
        label = _label(lead_in or heading) if items else ""
        fragment = unit.kind == UnitKind.LIST_ITEM or not _SENTENCE_CLOSE_RE.search(shown)
        fragment = fragment and not _LABELLED_FIGURE_RE.match(shown)
        least = MIN_LIST_ITEM_WORDS if fragment else MIN_SENTENCE_WORDS
        if len(TOKEN_RE.findall(shown)) >= least:
            found.append(ProseSentence(unit.start, unit.end, heading, label, items))
        elif for_answers and label and len(items) > 1 and says_something(shown):
            # one of the things its list names, too short to answer alone ("ProBuilder")
            found.append(ProseSentence(unit.start, unit.end, heading, label, items, list_only=True))
    return found


def _label(lead_in: str) -> str:
    """A list's or table's label as quoted: its lead-in or heading without numbering, "" when
    it says nothing."""
    label = HEADING_NUMBER_RE.sub("", lead_in)
    return label if says_something(label) else ""


def _states(shown: str, units: list[Unit], index: int) -> bool:
    """Whether a line ending with ":" states a fact of its own: it introduces no list (a list's
    lead-in is its items' label) and no section ("A handoff has three components:" above "### 1.
    Register the target agent" announces them), and says something is so ("Python 3.10+ is
    required for ROS 2 Humble:"), where "Create a validation script to check LiDAR data:" only
    announces the code below it."""
    introduces = index + 1 < len(units) and units[index + 1].kind in (UnitKind.LIST_ITEM, UnitKind.HEADING)
    subject_end = len(shown.split(maxsplit=1)[0]) if shown.strip() else 0
    return not introduces and bool(_STATEMENT_RE.search(shown) or _ACTION_RE.search(shown, subject_end))


def _lists(text: str, units: list[Unit]) -> dict[int, tuple[str, tuple[tuple[int, int], ...]]]:
    """For each list item unit (by index): the lead-in of its list and the spans of the list's
    items. A list is its items at one indentation: what is indented deeper between them (a
    sub-list, a code block, a continued paragraph) belongs to an item and does not end the list,
    and a sub-list is a list of its own. A heading, or a line indented no deeper than the items,
    ends it. The lead-in is the unit just above the list when that says something and introduces
    it: a line ending with ":", a bold title line, or the item a sub-list is nested in ("" else:
    "You can:" says nothing)."""
    found: dict[int, tuple[str, tuple[tuple[int, int], ...]]] = {}
    open_lists: list[tuple[int, str, list[int]]] = []  # (indentation, lead-in, item units), innermost last

    def close(depth: int) -> None:
        while len(open_lists) > depth:
            _, lead_in, members = open_lists.pop()
            items = tuple((units[i].start, units[i].end) for i in members)
            found.update({i: (lead_in, items) for i in members})

    for index, unit in enumerate(units):
        indent = _indentation(text, unit)
        if unit.kind != UnitKind.LIST_ITEM:
            close(0 if unit.kind == UnitKind.HEADING else sum(level < indent for level, _, _ in open_lists))
            continue
        close(sum(level <= indent for level, _, _ in open_lists))
        if open_lists and open_lists[-1][0] == indent:
            open_lists[-1][2].append(index)
        else:
            open_lists.append((indent, _lead_in(text, units, index, nested=bool(open_lists)), [index]))
    close(0)
    return found


def list_runs(text: str, units: list[Unit]) -> list[tuple[int, int, str]]:
    """Each list whose items stand one after another (no sub-list or code between them), as the
    indexes [first, end) of its item units and its lead-in (see _lists)."""
    members: dict[tuple[tuple[int, int], ...], list[int]] = {}
    lead_ins = {}
    for index, (lead_in, items) in _lists(text, units).items():
        members.setdefault(items, []).append(index)
        lead_ins[items] = lead_in
    return sorted(
        (min(indexes), max(indexes) + 1, lead_ins[items])
        for items, indexes in members.items()
        if max(indexes) + 1 - min(indexes) == len(indexes)
    )


def _lead_in(text: str, units: list[Unit], first: int, *, nested: bool) -> str:
    """The lead-in of the list whose first item is units[first] (see _lists)."""
    if first == 0:
        return ""
    above = units[first - 1]
    shown = display_text(text[above.start : above.end])
    parent = nested and above.kind == UnitKind.LIST_ITEM
    introduces = parent or (
        above.kind != UnitKind.LIST_ITEM and (shown.endswith(":") or _is_title(text, above))
    )
    return shown.rstrip(" :") if introduces and says_something(shown) else ""


def _indentation(text: str, unit: Unit) -> int:
    """How deep a unit is indented: for a list item, the line its bullet opens (a second sentence
    of an item, or a wrapped line of it, is as deep as the item); for any other unit, its line."""
    line_start = text.rfind("\n", 0, unit.start) + 1
    if unit.kind == UnitKind.LIST_ITEM:
        while line_start and not LIST_BULLET_RE.match(text[line_start : text.find("\n", line_start) + 1]):
            line_start = text.rfind("\n", 0, line_start - 1) + 1
    line = text[line_start : unit.end]
    return len(line) - len(line.lstrip(" \t"))


def blocks_run_on(text: str) -> bool:
    """Whether the text ends among headed blocks a lead-in in it announces (a chunk cut after
    "### Mode 1: default" below "... four permission modes:"): the chunks after it go on."""
    return any(runs_on for _, _, runs_on in _announced_titles(text, sentence_units(text)).values())


def sections_counted(text: str) -> int:
    """How many things the last paragraph of the text (an image or a link line may follow it)
    says there are ("Enter the Piggyback Protocol Pivot: a three-phase strategy ...", and the
    sections after the chunk are "Phase 1: ..." to "Phase 3: ..."), 0 when it counts nothing."""
    units = sentence_units(text)
    shown = (u for u in reversed(units) if u.kind not in (UnitKind.LINK_LINE, UnitKind.MARKUP))
    last = next(shown, None)
    return announced_count(text[last.start : last.end]) if last and last.kind == UnitKind.PARAGRAPH else 0


def inner_sections(text: str) -> list[str]:
    """The titles of the sections a chunk opens inside it, one level under the heading it starts
    with ("## The 5-Step Safety Pattern", a line of intro, then "### Step 1: Ask": ["Step 1:
    Ask"]); empty when it starts with no heading."""
    units = sentence_units(text)
    if not units or not (level := _heading_level(text, units[0])):
        return []
    return [
        display_text(text[unit.start : unit.end])
        for unit in units[1:]
        if _heading_level(text, unit) == level + 1
    ]


def _announced_titles(
    text: str, units: list[Unit]
) -> dict[int, tuple[str, tuple[tuple[int, int], ...], bool]]:
    """For each title of the blocks a lead-in announces (by unit index): the lead-in, the spans
    of all the titles, and whether the blocks run on past the end of the text. The blocks are
    those following a prose line ending with ":" that opens with a bold title line (up to the
    next heading) or with a heading (up to one of a higher level), when there are two of them or
    more, or headed blocks that run on past the text (a chunk cut after "### Mode 1: default": the
    chunks after it hold the other modes); a list's lead-in introduces its list instead."""
    found: dict[int, tuple[str, tuple[tuple[int, int], ...], bool]] = {}
    for index, unit in enumerate(units[:-1]):
        lead_in = display_text(text[unit.start : unit.end])
        if unit.kind != UnitKind.PARAGRAPH or not lead_in.endswith(":") or not says_something(lead_in):
            continue
        first = units[index + 1]
        level = _heading_level(text, first)
        if not level and not _is_title(text, first):
            continue
        titled = []
        runs_on = bool(level)
        for later in range(index + 1, len(units)):
            kind = units[later].kind
            if level and kind == UnitKind.HEADING and _heading_level(text, units[later]) < level:
                runs_on = False
                break
            if not level and kind == UnitKind.HEADING:
                break
            if (level and kind == UnitKind.HEADING and _heading_level(text, units[later]) == level) or (
                not level and _is_title(text, units[later])
            ):
                titled.append(later)
        if len(titled) > 1 or (titled and runs_on):
            spans = tuple((units[i].start, units[i].end) for i in titled)
            found.update({i: (lead_in.rstrip(" :"), spans, runs_on) for i in titled})
    return found


def _is_title(text: str, unit: Unit) -> bool:
    """A paragraph line that is a bold title and nothing else ("**Claude Code** (Anthropic)")."""
    return unit.kind == UnitKind.PARAGRAPH and bool(_TITLE_LINE_RE.match(text[unit.start : unit.end]))


def _heading_level(text: str, unit: Unit) -> int:
    """A heading's level (the number of its "#"), 0 for any other unit."""
    marks = _HEADING_MARKS_RE.match(text[unit.start : unit.end]) if unit.kind == UnitKind.HEADING else None
    return len(marks.group(1)) if marks else 0


def says_something(text: str) -> bool:
    """Whether a text has a content word: a label of stop words alone ("You can:", "What it's
    NOT") says nothing a validator could check, and labels nothing."""
    return bool(Analysis(text).term_set)


def normalise(sentence: str) -> str:
    """One space between words: the form sentences are compared and embedded in."""
    return " ".join(sentence.split())
