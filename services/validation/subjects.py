"""What a claim is about, and whether a passage is about the same thing; and who says it.

A passage supports a claim only when it states the claim of the claim's subject: "URDF is used
for streaming data" is not supported by a passage saying that *topics* are, although every other
word is there, and "the continuous can move with limits" is not supported by the line about the
revolute joint. The subject is read by surface cues, like the rest of the checker: the content
words before the claim's first verb ("Boston Dynamics Atlas" has ...). A claim that opens with a
verb or a pronoun ("It is used for ...") names no subject, and is not checked this way.
"""

from __future__ import annotations

from services.common.text.lists import word_list
from services.common.text.words import ATTRIBUTION_RE, Analysis, is_content_word, stem
from services.validation.evidence import PARAPHRASE_WORDS

# Verbs that end a subject: finite verbs and auxiliaries (the clause splitter's list), modals, and
# the common verbs of paraphrase ("Revolute joints allow ...").
_VERBS = word_list("clause_verbs") | {"may", "might", "must", "shall", "should", "need", "needs"}
# A subject is a short noun phrase: a claim with no verb among its first words names none.
MAX_SUBJECT_WORDS = 6


def _is_verb(word: str) -> bool:
    return word in _VERBS or stem(word) in PARAPHRASE_WORDS or (len(word) >= 5 and word.endswith("ed"))


def subject_terms(claim: Analysis) -> frozenset[str]:
    """The stemmed content words before the claim's first verb (empty when it names no subject)."""
    words = claim.words
    for i, word in enumerate(words[: MAX_SUBJECT_WORDS + 1]):
        if _is_verb(word):
            return frozenset(stem(w) for w in words[:i] if is_content_word(w))
    return frozenset()


def speaker_terms(claim: Analysis) -> frozenset[str]:
    """The words of whoever the claim is attributed to, verb of saying included ("Frida Ghitis
    argues ...", "...,  says Stefan Wolff", "Richard Klass: ..."): an opinion piece's author is in
    its byline, not its body, so the chunk need not state who speaks, only what is said.

    A leading label is a speaker only when a statement follows it (a verb): in "Prismatic:
    rotational movement with limits" the label is what the claim is about."""
    match = ATTRIBUTION_RE.search(claim.text)
    if not match:
        return frozenset()
    if match.group("label") and not any(_is_verb(word) for word in Analysis(claim.text[match.end() :]).words):
        return frozenset()
    return Analysis(match.group()).term_set
