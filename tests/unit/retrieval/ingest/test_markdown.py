from __future__ import annotations

from services.retrieval.ingest.markdown import parse_markdown, strip_mdx

MDX_PAGE = """---
title: Tabs and quizzes
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const version = "1.2";

# Installing

{/* a comment for editors */}
<!-- another comment -->

<Tabs groupId="os">
  <TabItem value="linux" label="Linux">

Run the installer from your package manager.

```jsx title="App.jsx"
import React from 'react';
export default function App() {
  return <Tabs><TabItem value="a">kept</TabItem></Tabs>;
}
```

  </TabItem>
</Tabs>

:::tip Keep going
Admonitions stay as text.
:::

Use `<Tabs>` inline, keep a <b>bold</b> word<br/>and a line break.

<Quiz
  title="Installing: check yourself"
  questions={[
    { question: "Which command installs the package?", options: ["apt install it", "no"],
      explanation: 'It\\'s the package manager that installs it.', source: "Lesson 2: Installing Packages" },
  ]}
/>
"""


def texts(content: str) -> list[tuple[str, str]]:
    return [(block.kind, block.text) for block in parse_markdown(content)[1]]


def test_mdx_imports_exports_components_and_comments_leave_the_text() -> None:
    front_matter, blocks = parse_markdown(MDX_PAGE)
    assert front_matter.title == "Tabs and quizzes"
    prose = "\n".join(block.text for block in blocks if block.kind != "code")
    for gone in (
        "import Tabs",
        "export const",
        "<Tabs groupId",
        "</TabItem>",
        "comment",
        "<Quiz",
        "questions={",
        "<b>",
        "<br",
    ):
        assert gone not in prose, gone
    assert "Run the installer from your package manager." in prose  # a component's children stay
    assert ":::tip Keep going\nAdmonitions stay as text.\n:::" in prose
    assert "Use `<Tabs>` inline, keep a bold word and a line break." in prose  # code spans untouched


def test_code_blocks_are_kept_verbatim_with_their_jsx_and_imports() -> None:
    code = [block.text for block in parse_markdown(MDX_PAGE)[1] if block.kind == "code"]
    assert code == [
        '```jsx title="App.jsx"\n'
        "import React from 'react';\n"
        "export default function App() {\n"
        '  return <Tabs><TabItem value="a">kept</TabItem></Tabs>;\n'
        "}\n"
        "```"
    ]


def test_prose_inside_component_props_is_kept_but_not_the_choices_offered() -> None:
    prose = [block.text for block in parse_markdown(MDX_PAGE)[1] if block.kind == "text"]
    at = prose.index("Installing: check yourself")  # a paragraph each, never run on into the next
    assert prose[at : at + 3] == [
        "Installing: check yourself",
        "Which command installs the package?",
        "It's the package manager that installs it.",
    ]
    assert not any("apt install it" in text for text in prose)  # a quiz's options state nothing
    assert not any("Lesson 2" in text for text in prose)  # nor does where its answer is taught


def test_esm_lines_inside_a_paragraph_are_text() -> None:
    content = "Some prose that goes on\nimport this from 'that' is just a sentence.\n"
    assert strip_mdx(content) == content


def test_not_a_tag_stays_text() -> None:
    content = "If a <b or c <d holds, see <https://example.org> and <my-placeholder>.\n"
    assert strip_mdx(content) == content


def test_tables_are_blocks_of_their_own() -> None:
    content = "Intro line.\n| Name | Value |\n|------|:-----:|\n| a | 1 |\n| b | 2 |\nAfter the table.\n"
    assert texts(content) == [
        ("text", "Intro line."),
        ("table", "| Name | Value |\n|------|:-----:|\n| a | 1 |\n| b | 2 |"),
        ("text", "After the table."),
    ]


def test_headings_custom_ids_and_setext() -> None:
    _, blocks = parse_markdown(
        "# Guide {#start}\n\nTitle Line\n==========\n\nSub\n---\n\n## Closing hashes ##\n"
    )
    headings = [(block.level, block.title, block.anchor) for block in blocks if block.kind == "heading"]
    assert headings == [
        (1, "Guide", "start"),
        (1, "Title Line", ""),
        (2, "Sub", ""),
        (2, "Closing hashes", ""),
    ]
    assert blocks[0].text == "# Guide"  # the {#id} leaves the heading text


def test_headings_inside_code_are_code() -> None:
    _, blocks = parse_markdown("# Real\n\n~~~bash\n# not a heading\n```\nstill code\n~~~\n")
    assert [block.kind for block in blocks] == ["heading", "code"]
    assert blocks[1].text == "~~~bash\n# not a heading\n```\nstill code\n~~~"


def test_an_unclosed_fence_is_closed_at_the_end() -> None:
    _, blocks = parse_markdown("Text\n\n````python\nprint(1)\n")
    assert blocks[-1].text == "````python\nprint(1)\n````"


def test_thematic_breaks_are_dropped() -> None:
    assert texts("## Part\n---\nText\n\n***\n") == [("heading", "## Part"), ("text", "Text")]
