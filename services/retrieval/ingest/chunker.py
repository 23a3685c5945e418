"""Cuts a parsed document into chunks along its heading tree, within a token budget.

Rules (every figure is a keyword argument; the defaults are the module constants):
- Sections are the H1-H3 sections of the heading tree (deeper headings stay in their section's
  text). A chunk cites the section of its first content, so a bare heading (one followed directly
  by another) hands over to the section it introduces.
- A chunk ends with its section unless it is still tiny (under `min_tokens`): then it goes on
  into the next section(s) and keeps the first section's path and anchor. A tiny last chunk of a
  document joins the chunk before it when they fit together.
- Within a section, blocks are packed in order up to `max_tokens`, in chunks as even as the
  section allows (no stub at the end). A prose block over budget is cut at lines, then
  sentences, then words. Headings and short lead-ins ending with ":" that would end a chunk move
  on with the content they introduce.
- Code blocks and tables are never cut while they fit in `max_block_tokens`: one over
  `max_tokens` becomes a chunk of its own, over budget. A block keeps the headings and lead-in
  (under `min_tokens` together) that introduce it even when that puts it over budget: a chunk
  over budget is always one code block or table with at most that much text before it. Past
  `max_block_tokens` (the last resort) a block is cut at line boundaries into even pieces within
  budget, each a valid block: the code fence reopened with its info string, the table header
  repeated. A line longer than the budget is cut into pieces; a block with no body lines (a
  header-only table, a fence of backticks alone) or a header over budget is cut as prose.
- No chunk is longer than `max_chars` characters (what the validation service accepts of a
  chunk, with room): text is sized by whichever is larger, its tokens or its characters at
  `max_chars / max_tokens` a token, so a run the tokenizer reads as one token (a 32 KB inline
  base64 image is one [UNK]) is cut too, at words and then every `_MAX_PIECE_CHARS` characters.
- Consecutive chunks of one section overlap by up to `overlap_tokens`: the trailing lines or
  sentences of the previous chunk's last prose block, never code, tables or headings.
Token counts come from `count_tokens` (the embedding model's tokenizer). Blocks are counted once
(memoised) and chunks sized by summing, which is exact for WordPiece (whitespace never makes a
token); each chunk's token_count is counted on its final text.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from services.common.text.units import line_sentences
from services.retrieval.ingest.documents import (
    STORED_SIZE_ALLOWANCE,
    STORED_SIZE_FACTOR,
    ChunkDraft,
    DocumentError,
    ParsedDocument,
    Section,
)

DEFAULT_MAX_TOKENS = 224
"""Budget of a chunk's text. all-MiniLM-L6-v2 reads 256 tokens, [CLS] and [SEP] included: 224
leaves 30 for a short "title > section" prefix at embedding time."""
DEFAULT_OVERLAP_TOKENS = 32
DEFAULT_MIN_TOKENS = 48
DEFAULT_MAX_BLOCK_TOKENS = 1024
"""A code block or table up to this size stays whole in one (over-budget) chunk."""
DEFAULT_MAX_CHARS = 5_000
"""Longest chunk text: a quarter of the 20,000 characters the validation service takes of a chunk
(a code block of max_block_tokens is about 4,000)."""
_MAX_PIECE_CHARS = 100
"""Where a word over budget is cut: WordPiece reads a longer word as one [UNK] anyway."""

CHUNK_NAMESPACE = uuid.UUID("bc851809-aa6e-46c8-9f87-e9a2432fca97")
"""Fixed namespace of chunk ids: uuid5(CHUNK_NAMESPACE, f"{document_id}:{chunk_index}:{content_hash}")."""

_WHOLE_BLOCKS = ("code", "table")

CountTokens = Callable[[str], int]


@dataclass(slots=True)
class _Unit:
    """A piece the packer places whole. separator joins it to the unit before it in a chunk;
    kind "overlap" marks text repeated from the previous chunk."""

    kind: str
    text: str
    tokens: int
    separator: str = "\n\n"
    section: Section | None = None


@dataclass(slots=True)
class _Chunk:
    units: list[_Unit] = field(default_factory=list)
    tokens: int = 0

    def add(self, units: Iterable[_Unit]) -> None:
        for unit in units:
            self.units.append(unit)
            self.tokens += unit.tokens

    @property
    def has_content(self) -> bool:
        return any(unit.kind != "heading" for unit in self.units)

    @property
    def section(self) -> Section:
        return next((unit.section for unit in self.units if unit.kind != "heading"), self.units[0].section)

    @property
    def text(self) -> str:
        units = self.units
        return (units[0].text + "".join(unit.separator + unit.text for unit in units[1:])).strip("\n")


# Bump when the parsing or chunking rules, the sparse terms (services/common/text `stem`, the
# search stop words) or what the payload reads off a chunk's text (the terms it defines) change:
# unchanged documents are then re-chunked and re-encoded too.
RULES_VERSION = "8"


def chunk_id(document_id: str, chunk_index: int, content_hash: str) -> str:
    """Deterministic chunk id: the same document, position and text always give the same id."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{document_id}:{chunk_index}:{content_hash}"))


def chunk_document(
    parsed: ParsedDocument,
    count_tokens: CountTokens,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    max_block_tokens: int = DEFAULT_MAX_BLOCK_TOKENS,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> list[ChunkDraft]:
    """The document's chunks in reading order (see the module docstring for the rules)."""
    if max_tokens < 16:
        raise ValueError(f"max_tokens must be at least 16, not {max_tokens}")
    if not 0 <= overlap_tokens <= max_tokens // 2:
        raise ValueError(f"overlap_tokens must be between 0 and max_tokens / 2, not {overlap_tokens}")
    if not 0 <= min_tokens <= max_tokens:
        raise ValueError(f"min_tokens must be between 0 and max_tokens, not {min_tokens}")
    if max_block_tokens < max_tokens:
        raise ValueError(f"max_block_tokens must be at least max_tokens, not {max_block_tokens}")
    if max_chars < 4 * max_tokens:
        raise ValueError(f"max_chars must be at least 4 * max_tokens, not {max_chars}")
    count = _memoised(_sized(count_tokens, max_chars / max_tokens - 2))
    packer = _Packer(count, max_tokens, overlap_tokens, min_tokens)
    for section in parsed.sections:
        packer.add_section(section, _section_units(section, count, max_tokens, max_block_tokens, max_chars))
    chunks = packer.finish()
    drafts = []
    for index, chunk in enumerate(chunks):
        text = chunk.text
        section = chunk.section
        content_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        drafts.append(
            ChunkDraft(
                chunk_id=chunk_id(parsed.document_id, index, content_hash),
                document_id=parsed.document_id,
                source_url=parsed.url_for(section.anchor),
                source_path=parsed.source_path,
                title=parsed.title,
                section_path=section.path,
                section_title=section.title,
                anchor=section.anchor,
                chunk_index=index,
                total_chunks=len(chunks),
                text=text,
                content_hash=content_hash,
                token_count=count_tokens(text),
            )
        )
    return drafts


def _sized(count_tokens: CountTokens, chars_per_token: float) -> CountTokens:
    """The size the packer goes by: the text's tokens, or its characters at `chars_per_token` a
    token when that is more."""
    return lambda text: max(count_tokens(text), math.ceil(len(text) / chars_per_token))


def check_stored_size(content: str, drafts: list[ChunkDraft]) -> None:
    """DocumentError when the chunks would store far more than the document holds (labels, URLs
    and overlaps repeated per chunk): a page must not cost many times its size to keep."""
    stored = sum(
        len(d.text)
        + len(d.title)
        + sum(map(len, d.section_path))
        + len(d.anchor)
        + len(d.source_url)
        + len(d.source_path)
        + len(d.document_id)
        for d in drafts
    )
    if stored > STORED_SIZE_FACTOR * len(content) + STORED_SIZE_ALLOWANCE:
        raise DocumentError(
            f"its chunks would store {stored:,} characters for {len(content):,}: over "
            f"{STORED_SIZE_FACTOR} times its size"
        )


def _memoised(count_tokens: CountTokens) -> CountTokens:
    counts: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in counts:
            counts[text] = count_tokens(text)
        return counts[text]

    return count


def _section_units(
    section: Section, count: CountTokens, max_tokens: int, max_block_tokens: int, max_chars: int
) -> list[_Unit]:
    units: list[_Unit] = []
    for block in section.blocks:
        tokens = count(block.text)
        whole = block.kind in _WHOLE_BLOCKS and tokens <= max_block_tokens and len(block.text) <= max_chars
        if tokens <= max_tokens or whole:
            units.append(_Unit(block.kind, block.text, tokens))
        elif block.kind == "code":
            units.extend(_split_code(block.text, count, max_tokens))
        elif block.kind == "table":
            units.extend(_split_table(block.text, count, max_tokens))
        else:
            units.extend(_split_text(block.text, count, max_tokens, "\n\n"))
    for unit in units:
        unit.section = section
    return units


def _split_code(text: str, count: CountTokens, max_tokens: int) -> list[_Unit]:
    lines = text.split("\n")
    opening, closing = lines[0], lines[-1]
    return _split_lines(lines[1:-1], count, max_tokens, "code", lambda body: f"{opening}\n{body}\n{closing}")


def _split_table(text: str, count: CountTokens, max_tokens: int) -> list[_Unit]:
    lines = text.split("\n")
    header = "\n".join(lines[:2])
    return _split_lines(lines[2:], count, max_tokens, "table", lambda body: f"{header}\n{body}")


def _split_lines(
    lines: list[str], count: CountTokens, max_tokens: int, kind: str, wrap: Callable[[str], str]
) -> list[_Unit]:
    """Consecutive lines grouped into pieces that each fit the budget once wrapped, as even in size
    as the fewest pieces allow. With no lines, or a wrapping that leaves less than half the budget
    (a header of 150 columns), the block is cut as prose: no piece could hold it whole."""
    budget = max_tokens - count(wrap(""))
    if not lines or budget < max_tokens // 2:
        return _split_text(wrap("\n".join(lines)), count, max_tokens, "\n\n")
    lines = [piece for line in lines for piece in _pieces(line, count, budget)]
    sizes = [count(line) for line in lines]
    fewest = len(_group_lines(sizes, budget))
    limit = math.ceil(sum(sizes) / fewest)
    while len(groups := _group_lines(sizes, limit)) > fewest:
        limit += max(1, limit // 20)
    units = []
    start = 0
    for size in groups:
        text = wrap("\n".join(lines[start : start + size]))
        units.append(_Unit(kind, text, count(text)))
        start += size
    return units


def _group_lines(sizes: list[int], limit: int) -> list[int]:
    """Line counts of consecutive groups of at most `limit` tokens (a longer line alone)."""
    groups: list[int] = []
    used = 0
    for size in sizes:
        if groups and used + size <= limit:
            groups[-1] += 1
            used += size
        else:
            groups.append(1)
            used = size
    return groups


def _pieces(word: str, count: CountTokens, budget: int) -> list[str]:
    """The word (or line) whole when it fits the budget, else cut every few characters (a piece of
    n characters is at most n tokens)."""
    if count(word) <= budget:
        return [word]
    step = max(1, min(_MAX_PIECE_CHARS, budget))
    return [word[start : start + step] for start in range(0, len(word), step)]


def _atoms(text: str, separator: str) -> list[tuple[str, str]]:
    """(piece, separator) pairs: the text's lines, each cut into sentences."""
    atoms = []
    for line_index, line in enumerate(text.split("\n")):
        for sentence_index, sentence in enumerate(line_sentences(line)):
            if sentence_index:
                atoms.append((sentence, " "))
            else:
                atoms.append((sentence, separator if line_index == 0 else "\n"))
    return atoms


def _split_text(text: str, count: CountTokens, max_tokens: int, separator: str) -> list[_Unit]:
    """A prose block cut into units within budget: at lines, then sentences, then words."""
    units = []
    for atom, atom_separator in _atoms(text, separator):
        tokens = count(atom)
        if tokens <= max_tokens:
            units.append(_Unit("text", atom, tokens, atom_separator))
            continue
        words: list[str] = []
        words_tokens = 0
        for word in (piece for spaced in atom.split(" ") for piece in _pieces(spaced, count, max_tokens)):
            word_tokens = count(word)
            if words and words_tokens + word_tokens > max_tokens:
                units.append(_Unit("text", " ".join(words), words_tokens, atom_separator))
                words, words_tokens, atom_separator = [], 0, " "
            words.append(word)
            words_tokens += word_tokens
        units.append(_Unit("text", " ".join(words), words_tokens, atom_separator))
    return units


class _Packer:
    """Packs the units of one document, section after section, into chunks."""

    def __init__(self, count: CountTokens, max_tokens: int, overlap_tokens: int, min_tokens: int) -> None:
        self._count = count
        self._max_tokens = max_tokens
        self._overlap_tokens = overlap_tokens
        self._min_tokens = min_tokens
        self._chunks: list[_Chunk] = []
        self._current = _Chunk()

    def add_section(self, section: Section, units: list[_Unit]) -> None:
        if not units:
            return
        current = self._current
        if current.units and current.has_content and current.tokens >= self._min_tokens:
            self._close()
        limit = self._even_limit(units)
        queue = deque(units)
        while queue:
            self._place(queue.popleft(), queue, limit)

    def finish(self) -> list[_Chunk]:
        if self._current.units:
            self._close()
        chunks = self._chunks
        if len(chunks) > 1 and chunks[-1].tokens < self._min_tokens:
            tail = [unit for unit in chunks[-1].units if unit.kind != "overlap"]
            if chunks[-2].tokens + sum(unit.tokens for unit in tail) <= self._max_tokens:
                chunks.pop()
                chunks[-1].add(tail)
        return chunks

    def _even_limit(self, units: list[_Unit]) -> int:
        """The lowest fill level that still packs the section into the fewest chunks the budget
        allows, so its chunks come out even instead of full ones and a stub."""
        total = self._current.tokens + sum(unit.tokens for unit in units)
        if total <= self._max_tokens:
            return self._max_tokens
        fewest = math.ceil((total - self._overlap_tokens) / (self._max_tokens - self._overlap_tokens))
        limit = max(math.ceil(total / fewest), self._min_tokens)
        while limit < self._max_tokens and self._chunk_count(units, limit) > fewest:
            limit = min(self._max_tokens, limit + max(1, limit // 20))
        return limit

    def _chunk_count(self, units: list[_Unit], limit: int) -> int:
        """How many chunks the section would end in at this fill level (a dry run)."""
        trial = _Packer(self._count, self._max_tokens, self._overlap_tokens, self._min_tokens)
        trial._current.add(self._current.units)
        queue = deque(units)
        while queue:
            trial._place(queue.popleft(), queue, limit)
        return len(trial._chunks) + 1

    def _place(self, unit: _Unit, queue: deque[_Unit], limit: int, fresh: bool = False) -> None:
        """Adds a unit to the current chunk, or closes that chunk and starts the next with it.

        fresh: the current chunk was just started with the overlap or lead-in of this unit.
        """
        current = self._current
        if not current.units or current.tokens + unit.tokens <= limit:
            current.add([unit])
            return
        if current.has_content and all(part.kind in ("heading", "overlap") for part in current.units):
            # Overlap followed by headings is no chunk: the headings start afresh with their content.
            self._current = _Chunk()
            self._current.add(part for part in current.units if part.kind == "heading")
            self._place(unit, queue, limit, fresh)
            return
        tiny = not current.has_content or current.tokens < self._min_tokens
        if tiny and current.tokens + unit.tokens <= self._max_tokens:
            current.add([unit])
            return
        if (
            tiny
            and unit.kind in _WHOLE_BLOCKS
            and not any(part.kind in _WHOLE_BLOCKS for part in current.units)
        ):
            current.add([unit])  # a block keeps the headings and lead-in before it, even over budget
            return
        if tiny and unit.kind not in _WHOLE_BLOCKS:
            fitting, rest = self._fill(unit, self._max_tokens - current.tokens)
            if fitting:
                current.add(fitting)
                queue.extendleft(reversed(rest))
                return
        carried = [] if fresh else _lead_in(current.units, self._min_tokens)
        if not tiny and current.tokens - sum(part.tokens for part in carried) < self._min_tokens:
            carried = []  # what would stay behind is too small to stand alone
        if carried:
            del current.units[-len(carried) :]
            current.tokens -= sum(part.tokens for part in carried)
        previous = self._close()
        self._current.add(carried or ([] if unit.kind in _WHOLE_BLOCKS else self._overlap(previous, unit)))
        self._place(unit, queue, limit, fresh=True)

    def _close(self) -> _Chunk:
        closed = self._current
        self._chunks.append(closed)
        self._current = _Chunk()
        return closed

    def _fill(self, unit: _Unit, budget: int) -> tuple[list[_Unit], list[_Unit]]:
        """Splits a prose unit into the pieces that fit `budget` and the rest."""
        pieces = _split_text(unit.text, self._count, max(budget, 1), unit.separator)
        fitting: list[_Unit] = []
        used = 0
        while pieces and used + pieces[0].tokens <= budget:
            used += pieces[0].tokens
            fitting.append(pieces.pop(0))
        for piece in (*fitting, *pieces):
            piece.section = unit.section
        return fitting, pieces

    def _overlap(self, previous: _Chunk, unit: _Unit) -> list[_Unit]:
        """The last lines or sentences of the previous chunk's last prose unit, up to the overlap."""
        last = previous.units[-1]
        if last.kind not in ("text", "overlap") or last.section is not unit.section:
            return []
        budget = min(self._overlap_tokens, self._max_tokens - unit.tokens)
        picked: list[tuple[str, str]] = []
        used = 0
        for atom, separator in reversed(_atoms(last.text, "\n\n")):
            atom_tokens = self._count(atom)
            if used + atom_tokens > budget:
                break
            picked.insert(0, (atom, separator))
            used += atom_tokens
        if not picked:
            return []
        text = picked[0][0] + "".join(separator + atom for atom, separator in picked[1:])
        return [_Unit("overlap", text, used, section=unit.section)]


def _lead_in(units: list[_Unit], min_tokens: int) -> list[_Unit]:
    """The units that end a chunk but introduce what follows: headings, and short text ending
    with a colon ("Install it:"). They move on to the next chunk."""
    index = len(units)
    while index > 1 and (
        units[index - 1].kind == "heading"
        or (
            units[index - 1].kind == "text"
            and units[index - 1].tokens < min_tokens
            and units[index - 1].text.rstrip().rstrip("*_").endswith(":")
        )
    ):
        index -= 1
    return units[index:]
