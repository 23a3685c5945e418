"""Markdown and MDX: front matter, MDX clean-up, and the cut into blocks for the heading tree.

Docusaurus 3 compiles .md files as MDX too, so both formats get the same clean-up: ESM
import/export paragraphs, JSX components, HTML tags and comments leave the text (the text inside a
component stays: a <TabItem>'s content is content), while fenced code blocks are kept byte for byte,
JSX and `import` lines inside them included. Admonitions (`:::tip`) stay as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from services.retrieval.ingest.documents import DEFAULT_MAX_FRONT_MATTER_BYTES, Block, FrontMatter
from services.retrieval.ingest.frontmatter import split_front_matter
from services.retrieval.ingest.headings import plain_heading_text, split_explicit_id

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# The heading's text, then its closing #s cut off apart: one lazy pattern for both tried the
# closing at every space of a long run (quadratic). Space runs match from their start only.
_ATX_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>.*))?$")
_ATX_CLOSING = re.compile(r"(?:^|(?<![ \t])[ \t]+)#+$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_NOT_PARAGRAPH_START = re.compile(r"^[ \t]*(?:[-*+>|]|\d+[.)]|:::)")

# What the clean-up has to look at: code spans (kept), comments, tags, ESM at a line start.
_MDX_TOKEN = re.compile(r"`+|<!--|\{/\*|<(?=[A-Za-z/>])|^(?:import|export)(?=[\s{*])", re.MULTILINE)
_TAG_START = re.compile(r"</?(?P<name>[A-Za-z][\w.:-]*)?")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_IMPORT = re.compile(r"\bfrom\s*['\"]|^import\s*['\"]")
_EXPORT = re.compile(
    r"^export\s+(?:const|let|var|function|class|default|async|type|interface)\b|^export\s*[{*]"
)
_MAX_TAG_CHARS = 200_000  # a tag whose quotes never balance is text, not a tag
_PROSE_WORDS = 3
# A prop's array whose strings are choices offered, not statements: a quiz's wrong options read
# as facts once they are prose ("Use stateless_http=False to preserve state across requests").
_CHOICE_ARRAYS = frozenset({"options", "choices", "distractors"})
# A prop that names a place rather than saying something (a quiz's source, "Lesson 3: Testing AI
# Safely with Branches", was quoted as an answer's sentence).
_REFERENCE_KEYS = frozenset({"source", "sources", "href", "src", "to", "url", "link", "id"})
_KEY_BEFORE = re.compile(r"""(\w+)["']?\s*:\s*\Z""")
_JS_ESCAPE = re.compile(r"\\(.)")

# fmt: off
_HTML_TAGS = frozenset((
    "a", "abbr", "address", "article", "aside", "audio", "b", "bdi", "bdo", "big", "blockquote", "br",
    "caption", "center", "cite", "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl",
    "dt", "em", "figcaption", "figure", "font", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "i", "iframe", "img", "input", "ins", "kbd", "label", "li", "main", "mark", "nav",
    "noscript", "ol", "p", "picture", "pre", "q", "s", "samp", "script", "section", "small", "source",
    "span", "strike", "strong", "style", "sub", "summary", "sup", "svg", "table", "tbody", "td",
    "tfoot", "th", "thead", "time", "tr", "tt", "u", "ul", "var", "video", "wbr",
))
# fmt: on
_DROPPED_WITH_CONTENT = frozenset({"script", "style", "svg", "noscript", "iframe", "video", "audio"})


def _atx_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line ("## Install ##"), else None."""
    match = _ATX_HEADING.match(line)
    if not match:
        return None
    text = (match["text"] or "").strip(" \t")
    if closing := _ATX_CLOSING.search(text):
        text = text[: closing.start()].rstrip(" \t")
    return len(match["marks"]), text


def parse_markdown(
    content: str, *, max_front_matter_bytes: int = DEFAULT_MAX_FRONT_MATTER_BYTES
) -> tuple[FrontMatter, list[Block]]:
    """Front matter and the body's blocks, in document order."""
    front_matter, body = split_front_matter(content.replace("\r\n", "\n"), max_bytes=max_front_matter_bytes)
    blocks: list[Block] = []
    for kind, text in _segments(body):
        if kind == "code":
            blocks.append(Block(kind="code", text=text))
        else:
            blocks.extend(_prose_blocks(strip_mdx(text)))
    return front_matter, blocks


def _segments(body: str) -> Iterator[tuple[str, str]]:
    """Alternating ("prose", text) and ("code", fenced block) parts; an unclosed fence is closed at
    the end of the document (as CommonMark reads it), so every code block has balanced fences."""
    lines = body.split("\n")
    prose: list[str] = []
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if not opening or (opening["fence"][0] == "`" and "`" in opening["info"]):
            prose.append(lines[index])
            index += 1
            continue
        fence = opening["fence"]
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        code = lines[index : end + 1]
        if end >= len(lines):
            while not code[-1].strip():
                code.pop()
            code.append(opening["indent"] + fence)
        if prose:
            yield "prose", "\n".join(prose)
            prose = []
        yield "code", "\n".join(code).rstrip()
        index = end + 1
    if prose:
        yield "prose", "\n".join(prose)


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and stripped.startswith(fence) and stripped == fence[0] * len(stripped)


def strip_mdx(text: str) -> str:
    """Removes ESM paragraphs, JSX/HTML tags (keeping their children), `{/* */}` and `<!-- -->`
    comments from prose; code spans are copied untouched."""
    out: list[str] = []
    position = 0
    while (match := _MDX_TOKEN.search(text, position)) is not None:
        start, token = match.start(), match.group()
        out.append(text[position:start])
        position = match.end()
        if token[0] == "`":
            end = _code_span_end(text, position, len(token))
            if end > 0:
                out.append(text[start:end])
                position = end
            else:
                out.append(token)
        elif token in ("<!--", "{/*"):
            end = text.find("-->" if token == "<!--" else "*/}", position)
            if end < 0:
                out.append(token)
            else:
                position = end + 3
        elif token == "<":
            end, name, prose = _scan_tag(text, start)
            if end < 0:
                out.append(token)
            elif name in _DROPPED_WITH_CONTENT:
                position = _after_dropped_content(text, end, name)
            else:
                position = end
                if name in ("br", "wbr"):
                    out.append(" ")
                elif prose:  # a paragraph each: a literal without a period ("Lesson 3: Testing AI
                    # Safely with Branches", a quiz's source) must not run on into the next one
                    out.append("\n\n" + "\n\n".join(prose) + "\n\n")
        elif _is_esm(text, start):
            blank = _BLANK_LINE.search(text, start)
            position = blank.start() if blank else len(text)
        else:
            out.append(token)
    out.append(text[position:])
    return "".join(out)


@lru_cache(maxsize=16)
def _backtick_run(length: int) -> re.Pattern[str]:
    return re.compile(rf"(?<!`)`{{{length}}}(?!`)")


def _code_span_end(text: str, after: int, length: int) -> int:
    """End of the code span opened by `length` backticks, within the same paragraph; -1 if none."""
    blank = _BLANK_LINE.search(text, after)
    closing = _backtick_run(length).search(text, after, blank.start() if blank else len(text))
    return closing.end() if closing else -1


def _scan_tag(text: str, start: int) -> tuple[int, str, list[str]]:
    """(end, lower-case name, prose) of the JSX/HTML tag at `start`; end is -1 when it is not a
    tag we strip.

    Attribute values may hold quotes, braces and `>` (JSX expressions span lines): they are skipped,
    but their string literals of three words or more are prose the page shows (a quiz's questions
    and explanations, an image's alt text) and come back as `prose`, except in an array of choices
    (`options: [...]`: a quiz's wrong answers are no statements of the page) or as a reference
    (`source: "Lesson 3: ..."`, `href`). Components (Capitalised or
    dotted names), fragments and known HTML tags are stripped; anything else (`a <b` in prose,
    `<https://...>` autolinks) stays text.
    """
    match = _TAG_START.match(text, start)
    name = match["name"] or ""
    index = match.end()
    if (name and not (name[0].isupper() or "." in name or name.lower() in _HTML_TAGS)) or (
        index < len(text) and text[index] not in " \t\n/>"
    ):
        return -1, "", []
    depth, quote, literal_start, literal_key = 0, "", 0, ""
    arrays: list[str] = []  # the keys of the arrays the scan is in, innermost last
    prose: list[str] = []
    limit = min(len(text), start + _MAX_TAG_CHARS)
    while index < limit:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
                literal = _unescape(text[literal_start:index])
                if (
                    len(literal.split()) >= _PROSE_WORDS
                    and not _CHOICE_ARRAYS.intersection(arrays)
                    and literal_key not in _REFERENCE_KEYS
                ):
                    prose.append(" ".join(literal.split()))
        elif char in "\"'`" and (depth or text[index - 1] == "="):
            quote, literal_start = char, index + 1
            literal_key = _key_before(text, start, index)
        elif char == "[" and depth:
            arrays.append(_key_before(text, start, index))
        elif char == "]" and arrays:
            arrays.pop()
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif depth == 0 and char == ">":
            return index + 1, name.lower(), prose
        elif depth == 0 and char == "<":
            break
        index += 1
    return -1, "", []


def _key_before(text: str, start: int, index: int) -> str:
    """The lower-case property name just before `index` (`options: [`, `source: "`), or ""."""
    key = _KEY_BEFORE.search(text, max(start, index - 64), index)
    return key[1].lower() if key else ""


def _unescape(literal: str) -> str:
    return _JS_ESCAPE.sub(lambda match: {"n": "\n", "t": " "}.get(match.group(1), match.group(1)), literal)


def _after_dropped_content(text: str, end: int, name: str) -> int:
    if text[end - 2] == "/":  # self-closing
        return end
    closing = re.compile(rf"</{name}\s*>", re.IGNORECASE).search(text, end)
    return closing.end() if closing else end


def _is_esm(text: str, start: int) -> bool:
    """An import/export paragraph as MDX reads it: at a paragraph start and parsing as ESM."""
    previous_end = text.rfind("\n", 0, start)
    if previous_end > 0 and text[text.rfind("\n", 0, previous_end) + 1 : previous_end].strip():
        return False
    blank = _BLANK_LINE.search(text, start)
    paragraph = text[start : blank.start() if blank else len(text)]
    pattern = _IMPORT if paragraph.startswith("import") else _EXPORT
    return bool(pattern.search(paragraph))


def _prose_blocks(text: str) -> Iterator[Block]:
    """Headings, tables and paragraphs (lists, quotes and admonitions are paragraphs: text)."""
    lines = [line.rstrip() for line in text.split("\n")]
    paragraph: list[str] = []

    def paragraph_block() -> Iterator[Block]:
        if paragraph:
            yield Block(kind="text", text="\n".join(paragraph))
            paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        heading = _atx_heading(line)
        if not line.strip() or (_THEMATIC_BREAK.match(line) and not paragraph):
            yield from paragraph_block()
        elif heading:
            yield from paragraph_block()
            yield _heading(*heading)
        elif paragraph and _SETEXT_UNDERLINE.match(line) and not _NOT_PARAGRAPH_START.match(paragraph[0]):
            text = " ".join(part.strip() for part in paragraph)
            paragraph.clear()
            yield _heading(1 if line.strip()[0] == "=" else 2, text)
        elif _THEMATIC_BREAK.match(line):
            yield from paragraph_block()
        elif "|" in line and index + 1 < len(lines) and _TABLE_DELIMITER.match(lines[index + 1]):
            yield from paragraph_block()
            end = index + 2
            while end < len(lines) and lines[end].strip() and "|" in lines[end]:
                end += 1
            yield Block(kind="table", text="\n".join(lines[index:end]))
            index = end
            continue
        else:
            paragraph.append(line)
        index += 1
    yield from paragraph_block()


def _heading(level: int, raw: str) -> Block:
    text, explicit_id = split_explicit_id(raw.strip())
    return Block(
        kind="heading",
        text=f"{'#' * level} {text}".rstrip(),
        level=level,
        title=plain_heading_text(text),
        anchor=explicit_id,
    )
