"""Table rows as a reader takes them: each cell under its column's header.

A row alone means little: "| **Documentation** | 15 | Clear README ... |" says that documentation
is worth 15 *points* only under the header "| Component | Points | Evaluation Criteria |". So a
data row is read as its first cell, then each other cell after its header:

    "Documentation — Points: 15; Evaluation Criteria: Clear README, inline comments, and setup
    instructions"

Both the extractive answerer (which quotes a row in this form) and the validator (which reads the
chunk's rows in it, and checks a quoted row against it) use this one reading. A table without a
header row (no "|---|" line under its first row) reads its cells in order, "; " between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.common.text.display import display_text
from services.common.text.units import Unit, UnitKind, runs

_SEPARATOR_CELL_RE = re.compile(r":?-{3,}:?")
# A cell boundary: a pipe not escaped ("\|" is a pipe inside a cell).
_CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")
NAME_SEPARATOR = " — "
CELL_SEPARATOR = "; "


@dataclass(frozen=True)
class TableRow:
    """A data row of a table: its span, how it reads, and the spans of every data row of its
    table (itself included), in order."""

    start: int
    end: int
    reading: str
    rows: tuple[tuple[int, int], ...]


def cells(line: str) -> list[str]:
    """A row's cells as displayed (Markdown rendered), without the outer pipes."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [display_text(cell.replace("\\|", "|")).strip() for cell in _CELL_SPLIT_RE.split(inner)]


def is_separator(line: str) -> bool:
    """The "|---|:---:|" line under a table's header row."""
    found = [cell.strip() for cell in _CELL_SPLIT_RE.split(line.strip().strip("|"))]
    return bool(found) and all(_SEPARATOR_CELL_RE.fullmatch(cell) for cell in found)


def row_reading(header: list[str], row: list[str]) -> str:
    """A data row's cells, each but the first after its column's header (see the module)."""
    if not any(row):
        return ""
    if not header:
        return CELL_SEPARATOR.join(cell for cell in row if cell)
    name, rest = row[0], row[1:]
    described = CELL_SEPARATOR.join(
        f"{title}: {cell}" if title else cell for title, cell in zip(header[1:], rest, strict=False) if cell
    )
    if not name:
        return described
    return f"{name}{NAME_SEPARATOR}{described}" if described else name


def table_rows(text: str, units: list[Unit]) -> dict[int, TableRow]:
    """For each data row among the units (by unit index), how it reads and its table's rows. A
    table is a run of table row units; its header is the first row when a separator follows it."""
    found: dict[int, TableRow] = {}
    for index, end in runs(units, UnitKind.TABLE_ROW):
        lines = [text[unit.start : unit.end] for unit in units[index:end]]
        headed = len(lines) > 1 and is_separator(lines[1])
        header = cells(lines[0]) if headed else []
        data = [i for i in range(index + (2 if headed else 0), end) if not is_separator(lines[i - index])]
        readings = {i: row_reading(header, cells(lines[i - index])) for i in data}
        spans = tuple((units[i].start, units[i].end) for i in data if readings[i])
        for i in data:
            if readings[i]:
                found[i] = TableRow(units[i].start, units[i].end, readings[i], spans)
    return found
