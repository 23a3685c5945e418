from __future__ import annotations

import hashlib
import itertools
import uuid

import pytest

from services.retrieval.ingest.chunker import CHUNK_NAMESPACE, chunk_document
from services.retrieval.ingest.documents import ChunkDraft, SourceDocument
from services.retrieval.ingest.parsing import parse_document
from tests.unit.retrieval.ingest.helpers import fences_balanced, words

BASE = "https://example.org/docs/"


def chunks(markdown: str, path: str = "guide/01-page.md", **options) -> list[ChunkDraft]:
    parsed = parse_document(SourceDocument(source_path=path, content=markdown), BASE)
    options = {"max_tokens": 40, "overlap_tokens": 0, "min_tokens": 8, "max_block_tokens": 80} | options
    return chunk_document(parsed, words, **options)


def sentences(count: int, start: int = 0) -> str:
    return " ".join(f"Sentence number {index} says four." for index in range(start, start + count))


def code_block(lines: int) -> str:
    return (
        "```python\n" + "\n".join(f"value_{index} = compute({index}) + 1" for index in range(lines)) + "\n```"
    )


def test_chunks_carry_their_section_and_identity() -> None:
    result = chunks(f"# Guide\n\nIntro {sentences(2)}\n\n## Install on Linux\n\n{sentences(3)}\n")
    assert [(chunk.section_path, chunk.anchor) for chunk in result] == [
        (("Guide",), "guide"),
        (("Guide", "Install on Linux"), "install-on-linux"),
    ]
    second = result[1]
    assert second.source_url == "https://example.org/docs/guide/page#install-on-linux"
    assert second.section_title == "Install on Linux"
    assert (second.title, second.document_id, second.source_path) == (
        "Guide",
        "guide/01-page.md",
        "guide/01-page.md",
    )
    assert [(chunk.chunk_index, chunk.total_chunks) for chunk in result] == [(0, 2), (1, 2)]
    assert second.text.startswith("## Install on Linux\n\nSentence number 0")
    assert second.content_hash == hashlib.sha256(second.text.encode()).hexdigest()
    assert second.chunk_id == str(uuid.uuid5(CHUNK_NAMESPACE, f"guide/01-page.md:1:{second.content_hash}"))
    assert second.token_count == words(second.text)


def test_ids_are_deterministic_and_follow_content_changes() -> None:
    page = f"# Guide\n\n{sentences(4)}\n\n## Part two\n\n{sentences(4, 10)}\n"
    first, again = chunks(page), chunks(page)
    assert first == again
    changed = chunks(page.replace("number 12", "number 99"))
    assert changed[0].chunk_id == first[0].chunk_id
    assert changed[-1].chunk_id != first[-1].chunk_id
    assert changed[-1].content_hash != first[-1].content_hash


def test_long_sections_are_cut_within_budget_into_even_chunks_with_overlap() -> None:
    result = chunks(f"## Long\n\n{sentences(20)}\n", overlap_tokens=10)
    assert len(result) == 4  # 102 words, each chunk after the first repeating up to 10
    assert all(chunk.token_count <= 40 for chunk in result)
    assert max(chunk.token_count for chunk in result) - min(chunk.token_count for chunk in result) <= 10
    for previous, chunk in itertools.pairwise(result):
        repeated = chunk.text.split(" says four.")[0] + " says four."
        assert previous.text.endswith(repeated)  # the next chunk opens with the previous one's end
        assert chunk.section_path == ("Long",)


def test_code_blocks_and_tables_are_never_cut_within_max_block_tokens() -> None:
    table = "| Key | Value |\n|---|---|\n" + "\n".join(
        f"| key {index} | value {index} |" for index in range(8)
    )
    page = f"## Data\n\n{sentences(3)}\n\nThe table:\n\n{table}\n\nThe code:\n\n{code_block(10)}\n\n{sentences(2)}\n"
    result = chunks(page)
    whole = [chunk for chunk in result if table in chunk.text or code_block(10) in chunk.text]
    assert len(whole) == 2
    for chunk in whole:  # over budget, with only its lead-in before it
        assert chunk.token_count > 40
        assert chunk.text.startswith(("The table:", "The code:"))
    assert all(fences_balanced(chunk.text) for chunk in result)


def test_blocks_over_max_block_tokens_are_cut_at_lines_into_valid_blocks() -> None:
    result = chunks(f"## Big\n\n{code_block(30)}\n", max_block_tokens=60)
    assert len(result) >= 4
    for chunk in result:
        assert chunk.token_count <= 40
        assert fences_balanced(chunk.text)
        body = chunk.text.split("```python\n", 1)[1]
        assert body.endswith("\n```")
    table = "| A | B |\n|---|---|\n" + "\n".join(f"| a{index} | b{index} |" for index in range(40))
    pieces = chunks(f"## T\n\n{table}\n", max_block_tokens=60)
    assert len(pieces) > 1
    assert all("| A | B |\n|---|---|\n| a" in chunk.text for chunk in pieces)


def test_tiny_sections_merge_and_keep_the_first_path() -> None:
    result = chunks(
        "# Guide\n\n## Tiny\n\nTwo words.\n\n## Next\n\nA few more words here.\n\n## Last\n\n" + sentences(6)
    )
    assert [chunk.section_path for chunk in result][:1] == [("Guide", "Tiny")]  # the bare H1 hands over
    assert "## Next" in result[0].text
    assert all(chunk.token_count >= 8 for chunk in result)


def test_a_tiny_last_section_joins_the_chunk_before_it() -> None:
    result = chunks(f"## Main\n\n{sentences(4)}\n\n## End\n\nBye.\n")
    assert len(result) == 1
    assert result[0].section_path == ("Main",)
    assert result[0].text.endswith("## End\n\nBye.")


def test_headings_and_lead_ins_move_on_with_their_content() -> None:
    result = chunks(f"## A\n\n{sentences(6)}\n\n#### Example\n\nRun this:\n\n{code_block(3)}\n")
    assert result[-1].text.startswith("#### Example\n\nRun this:\n\n```python")
    assert not result[0].text.endswith(("#### Example", "Run this:"))


def test_real_tokenizer_budget(count_tokens) -> None:
    page = "# Real\n\n" + "\n\n".join(sentences(8, start) for start in range(0, 80, 8))
    parsed = parse_document(SourceDocument(source_path="real.md", content=page))
    result = chunk_document(parsed, count_tokens, max_tokens=64, overlap_tokens=16, min_tokens=16)
    assert len(result) > 3
    assert all(16 <= chunk.token_count <= 64 for chunk in result)
    assert all(chunk.token_count == count_tokens(chunk.text) for chunk in result)


@pytest.mark.parametrize(
    "options",
    [{"max_tokens": 8}, {"overlap_tokens": 30}, {"min_tokens": 50}, {"max_block_tokens": 20}],
)
def test_options_are_checked(options: dict) -> None:
    with pytest.raises(ValueError):
        chunks("# x", **options)
