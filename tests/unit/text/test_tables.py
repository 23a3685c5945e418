"""Table rows read as a reader takes them: each cell under its column's header."""

from __future__ import annotations

from services.common.text.prose import sectioned_sentences
from services.common.text.tables import cells, is_separator, row_reading, table_rows
from services.common.text.units import sentence_units

RUBRIC = (
    "### 4. Assessment Rubric\n"
    "Use the following rubric to evaluate your submission:\n"
    "| Component | Points | Evaluation Criteria |\n"
    "|-----------|:------:|-------------------|\n"
    "| **Code Quality** | 20 | Well-structured, properly commented |\n"
    "| **Documentation** | 15 | Clear README, inline comments, and setup instructions |\n"
    "\n"
    "Submit it by Friday at noon.\n"
)


def test_a_data_row_reads_its_first_cell_then_each_cell_under_its_header():
    units = sentence_units(RUBRIC)
    rows = list(table_rows(RUBRIC, units).values())
    assert [row.reading for row in rows] == [
        "Code Quality — Points: 20; Evaluation Criteria: Well-structured, properly commented",
        "Documentation — Points: 15; Evaluation Criteria: Clear README, inline comments, and setup instructions",
    ]
    assert all(row.rows == ((rows[0].start, rows[0].end), (rows[1].start, rows[1].end)) for row in rows)
    assert RUBRIC[rows[1].start : rows[1].end].startswith("| **Documentation**")


def test_cells_are_rendered_and_an_escaped_pipe_stays_in_its_cell():
    assert cells("| `a \\| b` | **bold** |") == ["a | b", "bold"]
    assert is_separator("|---|:---:|---:|") and not is_separator("| --- | text |")


def test_a_table_without_a_header_reads_its_cells_in_order_and_empty_cells_are_left_out():
    assert row_reading([], ["RAM", "16 GB", ""]) == "RAM; 16 GB"
    assert row_reading(["Part", "Size", "Note"], ["Disk", "", "fast"]) == "Disk — Note: fast"
    assert row_reading(["Part", "Size"], ["", ""]) == ""


def test_the_answerer_sees_rows_under_the_heading_above_the_table_and_search_does_not():
    read = sectioned_sentences(RUBRIC, for_answers=True)
    rows = [s for s in read if s.reading]
    assert [s.label for s in rows] == ["Assessment Rubric", "Assessment Rubric"]
    assert [s.reading for s in sectioned_sentences(RUBRIC)] == [""]  # prose alone, as Search scores it
    assert len(read) == len(sectioned_sentences(RUBRIC)) + 2
