"""Terms a text defines, and the term a question asks to have defined.

Books define a term in a few set shapes: "A **General Agent** is a multi-purpose reasoning system
...", "**ROS#**: C# implementation of ROS client for Unity", "Gazebo is a 3D robot simulator ...".
The chunk holding such a sentence is the one that answers "What is X?", yet hybrid search often
ranks it below chunks that merely repeat X ("General Agents BUILD Custom Agents"): the retrieval
service stores the keys of the terms each chunk defines (`defined_terms`) and, for a question
asking what a term is (`asked_term`), brings the chunks defining it first.

A key is the term's words, lower-cased, each word of letters stemmed like the sparse terms and
the rest kept as written ("ROS#" is not "ROS", "k3s" stays), stop words left out, in sorted order:
"General Agents" and "a general agent" meet.
"""

from __future__ import annotations

import re

from services.common.text.question import AnswerForm, question_form
from services.common.text.words import STOPWORDS, stem

# Where a definition opens: a line (after a blockquote's ">", a bullet or a number) or a sentence
# (one closing in bold too: "**Helm solves this.** Helm is ..."), then an optional article; and the
# aside a term may carry ("Xacro (XML Macros) ...").
_OPENING = r"(?:^[ \t>]*(?:[-*+]|\d+[.)])?[ \t]*|(?:(?<=[.!?])|(?<=[.!?]\*\*))[ \t]+)(?:(?:an?|the)[ \t]+)?"
_ASIDE = r"(?:[ \t]*\([^()\n]{1,60}\))?"
_DEFINING_VERBS = r"is|are|refers?\s+to|means?|stands?\s+for|represents?|describes?"
# The term in bold (a colon may close inside the bold), its aside, then a colon, a dash or a
# defining verb.
_BOLD_RE = re.compile(
    rf"{_OPENING}\*\*(?P<term>[^*\n:]{{1,60}}?)(?::\*\*[ \t]"
    rf"|\*\*{_ASIDE}(?:[ \t]*[:—–][ \t]|[ \t]+(?:{_DEFINING_VERBS})[ \t]))",
    re.IGNORECASE | re.MULTILINE,
)
# A plain "X is a / an / the ..." or "X refers to ...", X of at most four words ("Gazebo is a 3D
# simulator", "The ROS 2 bridge is the ..."; "This is a ..." names no term: its words are stop
# words); the term may open a bold phrase ("**Pydantic is a library ...**").
_PLAIN_RE = re.compile(
    rf"{_OPENING}(?:\*\*)?(?P<term>[A-Za-z][\w#+.-]*(?:[ \t]+[\w#+.-]+){{0,3}}?){_ASIDE}"
    r"[ \t]+(?:(?:is|are)[ \t]+(?:an?|the)|refers[ \t]+to|represents[ \t]+the)[ \t]",
    re.MULTILINE,
)
# After a "Definition:" label the verb alone will do: "**Definition**: Hooks are automated scripts".
_LABELLED_RE = re.compile(
    r"^[ \t>]*(?:[-*+][ \t]+)?(?:\*\*definition\*\*:|\*\*definition:\*\*|definition:)"
    rf"[ \t]+(?:(?:an?|the)[ \t]+)?(?P<term>[A-Za-z][\w#+.-]*(?:[ \t]+[\w#+.-]+){{0,3}}?)"
    rf"{_ASIDE}[ \t]+(?:{_DEFINING_VERBS})[ \t]",
    re.IGNORECASE | re.MULTILINE,
)
# A bold term set off by an article anywhere in a sentence: "This lesson introduces **GitOps**, a
# radically different approach: ...", "install **uv**, a fast package manager".
_APPOSITIVE_RE = re.compile(r"\*\*(?P<term>[^*\n:]{1,60}?)\*\*,[ \t]+(?:an?|the)[ \t]", re.IGNORECASE)
# An abbreviation spelt out, then set off by an article: "This part introduces LLMOps (Large
# Language Model Operations)—the discipline of ...".
_SPELT_OUT_RE = re.compile(
    r"\b(?P<term>[A-Z][\w-]*[A-Z][\w-]*)[ \t]+\([^()\n]{3,60}\)(?:[ \t]*[—–][ \t]*|,[ \t]+)(?:an?|the)[ \t]"
)
# A heading asking the question: "## What Are Hooks?", "### Concept 1: What Are Helm Hooks?".
_HEADING_RE = re.compile(
    r"^#{1,6}[ \t]+(?:[^\n:?]{1,30}:[ \t]+)?what[ \t]+(?:is|are)[ \t]+(?:(?:an?|the)[ \t]+)?"
    r"(?P<term>[^\n?]{1,60})\?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_WORD_RE = re.compile(r"[a-z0-9][\w#+.-]*")


def term_key(term: str) -> str:
    """The key a term is stored and looked up under ("" when it has no content word)."""
    words = (word.rstrip(".-") for word in _WORD_RE.findall(term.lower()))
    kept = {stem(word) if word.isalpha() else word for word in words if word and word not in STOPWORDS}
    return " ".join(sorted(kept))


def defined_terms(text: str) -> list[str]:
    """The keys of the terms a text defines, sorted, each once."""
    found = {
        term_key(match.group("term"))
        for pattern in (_BOLD_RE, _PLAIN_RE, _LABELLED_RE, _APPOSITIVE_RE, _SPELT_OUT_RE, _HEADING_RE)
        for match in pattern.finditer(text)
    }
    return sorted(found - {""})


def asked_term(query: str) -> str:
    """The key of the term a question asks to have defined ("What is a General Agent?"), "" for
    any other question."""
    form = question_form(query)
    return term_key(form.term) if form.form == AnswerForm.DEFINITION else ""
