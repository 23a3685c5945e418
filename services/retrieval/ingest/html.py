"""HTML pages: the main content only, turned into the same blocks as Markdown.

The content root is the first of `.theme-doc-markdown` (Docusaurus's rendered Markdown),
`article`, `[role=main]`, `main`, `body`. Inside it, navigation and boilerplate go (nav, aside,
footer, scripts, styles, forms, sidebars, breadcrumbs, tables of contents, pagination, "edit this
page", heading hash links); a <header> goes unless it holds a heading (Docusaurus puts the page's
H1 in one). Headings keep their level and their `id` (the anchor the site really uses); <pre>
becomes a fenced code block, <table> a Markdown table, lists "- item" lines.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from services.retrieval.ingest.documents import Block

_ROOT_SELECTORS = (".theme-doc-markdown", "article", "[role=main]", "main", "body")
_DROPPED_TAGS = (
    "nav", "aside", "footer", "script", "style", "noscript", "template", "svg", "form", "button",
    "iframe", "head", "link", "meta",
)  # fmt: skip
_DROPPED_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_BOILERPLATE_CLASS = re.compile(
    r"(?:^|[-_])(?:sidebar|breadcrumbs?|pagination|toc|table-of-contents|navbar|footer|hash-link|"
    r"edit-this-page|skip-?link|cookie|theme-last-updated)(?:$|[-_])|tableOfContents|tocCollapsible",
    re.IGNORECASE,
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
# fmt: off
_INLINE_TAGS = frozenset((
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i",
    "img", "input", "ins", "kbd", "label", "mark", "q", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
))
# fmt: on
_WHITESPACE = re.compile(r"\s+")
_LANGUAGE = re.compile(r"^(?:language|lang)-(\S+)$")
_MAX_LIST_DEPTH = 16
"""Lists nested deeper than this are read as the text of their item (a hostile page nests
thousands: recursion has a limit)."""


def parse_html(content: str) -> tuple[str, list[Block]]:
    """The page's <title> and the blocks of its main content."""
    soup = BeautifulSoup(content, "lxml")
    page_title = _clean(soup.title.get_text()) if soup.title else ""
    root = next((found for selector in _ROOT_SELECTORS if (found := soup.select_one(selector))), soup)
    _drop_boilerplate(root)
    blocks: list[Block] = []
    _walk(root, blocks)
    return page_title, blocks


def _drop_boilerplate(root: Tag) -> None:
    """Removes comments and boilerplate elements, in one walk of its own that does not enter what
    it drops. (bs4's `tag.decomposed`, on a live tag, and `tag.find` search the tag's whole subtree:
    asked of every tag, that was quadratic, 82 s of CPU on 20,000 nested <div>s.)"""
    holders = _heading_holders(root)
    dropped: list[Tag | Comment] = []
    pending = [root]
    while pending:
        for child in pending.pop().children:
            if isinstance(child, Comment) or (isinstance(child, Tag) and _is_boilerplate(child, holders)):
                dropped.append(child)
            elif isinstance(child, Tag):
                pending.append(child)
    for node in dropped:
        if isinstance(node, Tag):
            node.decompose()
        else:
            node.extract()


def _heading_holders(root: Tag) -> set[int]:
    """ids of the elements that hold a heading (each climb stops where an earlier one passed)."""
    holders: set[int] = set()
    for heading in root.find_all(list(_HEADINGS)):
        parent = heading.parent
        while parent is not None and id(parent) not in holders:
            holders.add(id(parent))
            parent = parent.parent
    return holders


def _is_boilerplate(tag: Tag, heading_holders: set[int]) -> bool:
    if tag.name in _DROPPED_TAGS or tag.get("role") in _DROPPED_ROLES:
        return True
    classes = " ".join(tag.get("class") or ()) + " " + (tag.get("id") or "")
    if any(_BOILERPLATE_CLASS.search(name) for name in classes.split()):
        return True
    return tag.name == "header" and id(tag) not in heading_holders


def _walk(root: Tag, blocks: list[Block]) -> None:
    """Block elements become blocks; runs of inline content between them become paragraphs.

    Depth-first with a stack of its own, not recursion: a page of a thousand nested <div>s is a
    page like any other (recursion ended it in RecursionError). One inline buffer serves every
    level, since a block element flushes it before its children are read.
    """
    inline: list[str] = []

    def paragraph() -> None:
        text = _clean("".join(inline))
        inline.clear()
        if text:
            blocks.append(Block(kind="text", text=text))

    pending = [iter(root.children)]
    while pending:
        child = next(pending[-1], None)
        if child is None:
            pending.pop()
            paragraph()
        elif isinstance(child, NavigableString):
            inline.append(str(child))
        elif not isinstance(child, Tag):
            continue
        elif child.name == "br":
            inline.append("\n")
        elif child.name in _INLINE_TAGS:
            inline.append(_inline_text(child))
        else:
            paragraph()
            if child.name in _HEADINGS:
                blocks.append(_heading(child))
            elif child.name == "pre":
                blocks.append(_code(child))
            elif child.name == "table":
                blocks.append(_table(child))
            elif child.name in ("ul", "ol"):
                text = "\n".join(_list_lines(child, 0))
                if text.strip():
                    blocks.append(Block(kind="text", text=text))
            else:
                pending.append(iter(child.children))


def _heading(tag: Tag) -> Block:
    level = _HEADINGS[tag.name]
    title = _clean(tag.get_text())
    return Block(
        kind="heading", text=f"{'#' * level} {title}", level=level, title=title, anchor=tag.get("id") or ""
    )


def _code(pre: Tag) -> Block:
    """A fenced block, with the language from a `language-*` class and a fence longer than any
    backtick run inside the code."""
    language = ""
    for tag in (pre, pre.find("code")):
        for name in (tag.get("class") or ()) if isinstance(tag, Tag) else ():
            if match := _LANGUAGE.match(name):
                language = match.group(1)
    for line_break in pre.find_all("br"):
        line_break.replace_with("\n")
    code = pre.get_text().strip("\n")
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return Block(kind="code", text=f"{fence}{language}\n{code}\n{fence}")


def _table(table: Tag) -> Block:
    # Its own rows and their own cells: a table nested in a cell is that cell's text (every nested
    # row's cells read again at each level was cubic: 92 s of CPU on 1,000 nested tables).
    rows = [
        [_clean(cell.get_text()).replace("|", "\\|") for cell in row.find_all(("th", "td"), recursive=False)]
        for row in table.find_all("tr")
        if row.find_parent("table") is table
    ]
    rows = [row for row in rows if row] or [[""]]
    width = max(len(row) for row in rows)
    lines = [_row(rows[0], width), _row(["---"] * width, width)]
    lines.extend(_row(row, width) for row in rows[1:])
    return Block(kind="table", text="\n".join(lines))


def _row(cells: list[str], width: int) -> str:
    return "| " + " | ".join(cells + [""] * (width - len(cells))) + " |"


def _list_lines(list_tag: Tag, depth: int) -> list[str]:
    lines = []
    for number, item in enumerate(list_tag.find_all("li", recursive=False), start=1):
        marker = f"{number}." if list_tag.name == "ol" else "-"
        own, nested = [], []
        for child in item.children:
            if isinstance(child, Tag) and child.name in ("ul", "ol") and depth < _MAX_LIST_DEPTH:
                nested.extend(_list_lines(child, depth + 1))
            elif isinstance(child, Tag):
                own.append(child.get_text())
            elif isinstance(child, NavigableString):
                own.append(str(child))
        lines.append(f"{'  ' * depth}{marker} {_clean(' '.join(own))}".rstrip())
        lines.extend(nested)
    return lines


def _inline_text(tag: Tag) -> str:
    for line_break in tag.find_all("br"):
        line_break.replace_with("\n")
    return tag.get_text()


def _clean(text: str) -> str:
    return _WHITESPACE.sub(" ", text.replace("\u200b", "")).strip()
