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
    for comment in root.find_all(string=lambda text: isinstance(text, Comment)):
        comment.extract()
    for tag in root.find_all(_DROPPED_TAGS):
        tag.decompose()
    for tag in root.find_all(True):
        if tag.decomposed:
            continue
        classes = " ".join(tag.get("class") or ()) + " " + (tag.get("id") or "")
        boilerplate = (
            tag.get("role") in _DROPPED_ROLES
            or any(_BOILERPLATE_CLASS.search(name) for name in classes.split())
            or (tag.name == "header" and not tag.find(list(_HEADINGS)))
        )
        if boilerplate:
            tag.decompose()


def _walk(node: Tag, blocks: list[Block]) -> None:
    """Block elements become blocks; runs of inline content between them become paragraphs."""
    inline: list[str] = []

    def paragraph() -> None:
        text = _clean("".join(inline))
        inline.clear()
        if text:
            blocks.append(Block(kind="text", text=text))

    for child in node.children:
        if isinstance(child, NavigableString):
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
                _walk(child, blocks)
    paragraph()


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
    rows = [
        [_clean(cell.get_text()).replace("|", "\\|") for cell in row.find_all(("th", "td"))]
        for row in table.find_all("tr")
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
            if isinstance(child, Tag) and child.name in ("ul", "ol"):
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
