"""Claim splitting: sentences, clauses, citation markers and offsets into the original answer."""

from __future__ import annotations

from services.validation.claims import find_citations, split_claims, strip_citations


def test_offsets_point_into_the_original_answer():
    answer = "Arthur's Magazine was founded in 1844 [1].  It was published in Philadelphia [2]."
    claims = split_claims(answer)
    assert [c.text for c in claims] == [
        "Arthur's Magazine was founded in 1844.",
        "It was published in Philadelphia.",
    ]
    for claim in claims:
        assert strip_citations(answer[claim.start : claim.end]) == claim.text
    assert answer[claims[1].start : claims[1].end] == "It was published in Philadelphia [2]."


def test_citation_markers_in_all_three_forms():
    answer = "Born in 1846 [1]. Moved to Paris [2][3]. Died in London [1, 3]."
    assert [c.citations for c in split_claims(answer)] == [[1], [2, 3], [1, 3]]
    assert [m.number for m in find_citations(answer)] == [1, 2, 3, 1, 3]


def test_marker_after_the_period_belongs_to_the_sentence_before():
    claims = split_claims("He won the race.[2] She came second.")
    assert [(c.text, c.citations) for c in claims] == [("He won the race.", [2]), ("She came second.", [])]


def test_a_marker_after_a_stop_ends_the_sentence_an_initial_would_go_on():
    # "A." reads as an initial ("A. Smith"), but a writer cites a sentence where it ends.
    answer = (
        "Subclasses before parents: check D before B before A. [1] Inheritance order is kept: "
        "search B before C. [1][2] No class is visited twice. [1]"
    )
    claims = split_claims(answer)
    assert [(c.text, c.citations) for c in claims] == [
        ("Subclasses before parents: check D before B before A.", [1]),
        ("Inheritance order is kept: search B before C.", [1, 2]),
        ("No class is visited twice.", [1]),
    ]
    assert answer[claims[1].start : claims[1].end] == "Inheritance order is kept: search B before C. [1][2]"


def test_a_marker_after_a_quoted_question_belongs_to_it():
    """A list's label quoting a question ends at its closing quote; its marker is still its own
    (the answer check added a second one: '"Should I enable hooks right now?" [5] [5]:')."""
    answer = '"Should I enable hooks right now?" [5]:\nUse Claude Code without any hooks. [5]'
    claims = split_claims(answer)
    assert [(c.text, c.citations) for c in claims] == [
        ('"Should I enable hooks right now?":', [5]),
        ("Use Claude Code without any hooks.", [5]),
    ]


def test_a_marker_opening_a_line_cites_the_sentences_after_it_on_that_line():
    # The 0.5B model copies the layout of its sources: "[n] text" paragraphs (the rest of a line
    # was uncited, and the markers the answer check added after its clauses could unground it).
    answer = (
        "[1] Streaming sends data as it arrives. SSE is the simplest protocol.\n\n"
        "  [3][4] SSE works through proxies; the browser reconnects by itself.\nIt won the race.[2]\nA line. [5]"
    )
    claims = split_claims(answer)
    assert [(c.text, c.citations) for c in claims] == [
        ("Streaming sends data as it arrives.", [1]),
        ("SSE is the simplest protocol.", [1]),
        ("SSE works through proxies", [3, 4]),
        ("the browser reconnects by itself.", [3, 4]),
        ("It won the race.", [2]),
        ("A line.", [5]),
    ]
    assert answer[claims[2].start : claims[2].end] == "[3][4] SSE works through proxies"


def test_clauses_joined_by_and_with_their_own_verbs_are_separate_claims():
    answer = "He was born in Paris in 1846 [1] and he died in London in 1901 [2]."
    claims = split_claims(answer)
    assert [(c.text, c.citations) for c in claims] == [
        ("He was born in Paris in 1846", [1]),
        ("he died in London in 1901.", [2]),
    ]
    assert answer[claims[1].start : claims[1].end] == "he died in London in 1901 [2]."


def test_a_trailing_marker_vouches_for_every_clause_of_its_sentence():
    claims = split_claims("The band formed in Leeds and released four albums [3].")
    assert [(c.text, c.citations) for c in claims] == [
        ("The band formed in Leeds", [3]),
        ("released four albums.", [3]),
    ]


def test_and_inside_a_list_or_a_name_does_not_split():
    for sentence in (
        "Israel and the United States opposed the move.",
        "She studied physics and chemistry at Oxford.",
        "Tom and Jerry is a cartoon series.",
    ):
        assert [c.text for c in split_claims(sentence)] == [sentence]


def test_semicolon_separates_statements():
    assert [c.text for c in split_claims("The first print sold out; critics praised it.")] == [
        "The first print sold out",
        "critics praised it.",
    ]


def test_abbreviations_initials_and_decimals_do_not_end_sentences():
    answer = (
        "Lt. Col. Jean-Marc Menichini told the U.S. press that J. K. Rowling paid 6.5 million. Then he left."
    )
    assert len(split_claims(answer)) == 2


def test_the_number_of_a_numbered_item_does_not_end_a_sentence_but_a_number_closing_one_does():
    answer = "Steps:\n1. It opened in 1902.\n  2. It closed in 1950 after 48 years in 2. Then it reopened."
    assert [c.text for c in split_claims(answer)] == [
        "Steps:",
        "It opened in 1902.",
        "It closed in 1950 after 48 years in 2.",
        "Then it reopened.",
    ]


def test_passages_glued_without_a_space_are_two_sentences():
    answer = "It was published in the 19th century.First for Women is a magazine."
    assert [c.text for c in split_claims(answer)] == [
        "It was published in the 19th century.",
        "First for Women is a magazine.",
    ]


def test_questions_and_bare_markers_are_not_claims():
    claims = split_claims("Did he win? He won in 1990 [1]. [2]")
    assert [c.text for c in claims] == ["He won in 1990."]
    assert [c.sentence for c in claims] == [1]


def test_list_items_are_claims_without_their_bullets():
    answer = "Key facts:\n- It opened in 1902.\n- It closed in 1950 [1]."
    texts = [c.text for c in split_claims(answer)]
    assert texts == ["Key facts:", "It opened in 1902.", "It closed in 1950."]


def test_lines_opening_with_a_marker_are_items_of_their_own_not_soft_wraps():
    answer = "[1] Proprioceptive sensors measure internal state\n[2] Exteroceptive sensors measure the world"
    claims = split_claims(answer)
    assert [c.text for c in claims] == [
        "Proprioceptive sensors measure internal state",
        "Exteroceptive sensors measure the world",
    ]
    wrapped = split_claims("Proprioceptive sensors measure\ninternal state.")
    assert [c.text for c in wrapped] == ["Proprioceptive sensors measure internal state."]


def test_a_citation_number_too_large_for_any_chunk_reads_as_the_largest_int32():
    answer = "Born in 1846 [2147483648]. Died in 1901 [0007][" + "9" * 5000 + "]."
    assert [m.number for m in find_citations(answer)] == [2**31 - 1, 7, 2**31 - 1]


def test_a_semicolon_inside_a_marker_cuts_no_clause():
    claims = split_claims("The lighthouse was built in 1902 [1; 2] by the Irish Lights board.")
    assert [(c.text, c.citations) for c in claims] == [
        ("The lighthouse was built in 1902 by the Irish Lights board.", [1, 2])
    ]


def texts(answer: str) -> list[str]:
    return [claim.text for claim in split_claims(answer)]


def test_a_lead_in_and_what_it_announces_are_separate_claims():
    answer = (
        "A Physical AI development environment requires several foundational components: Operating "
        "System: Linux-based systems provide compatibility with ROS 2 [1]."
    )
    assert texts(answer) == [
        "A Physical AI development environment requires several foundational components",
        "Operating System: Linux-based systems provide compatibility with ROS 2.",
    ]
    # A label stays with its item, a time is no colon of a lead-in, a decline naming sections stays whole.
    assert texts("Operating System: Linux-based systems [1].") == ["Operating System: Linux-based systems."]
    assert len(texts("The meeting in the hall starts at 10:30 sharp.")) == 1
    assert len(texts("Nearby, the book covers: Lighthouse > History [1], Lighthouse > Keepers [2].")) == 1


def test_a_quotation_running_into_the_next_statement_ends_a_sentence():
    """News highlights run their lines together after a quotation: two sentences, so a summary
    of them is judged as a longer answer, each line against its own passage."""
    answer = 'A review found the article "deeply flawed" Danny Cevallos says the case is weak [1].'
    claims = split_claims(answer)
    assert [claim.text for claim in claims] == [
        'A review found the article "deeply flawed"',
        "Danny Cevallos says the case is weak.",
    ]
    assert [claim.sentence for claim in claims] == [0, 1]
    assert claims[1].citations == [1]


def test_a_quotation_after_a_label_or_a_possessive_is_no_nickname():
    """A nickname follows a first name; a label's colon or a possessive ends a word no name
    continues past, so the quotation after it can end a run-on line."""
    assert texts('Father: "I know he went through a lot" Louis Jordan was found on his boat.') == [
        'Father: "I know he went through a lot"',
        "Louis Jordan was found on his boat.",
    ]
    assert texts('She was the youngest member of TV\'s "Partridge Family" Crough died Monday.') == [
        'She was the youngest member of TV\'s "Partridge Family"',
        "Crough died Monday.",
    ]


def test_a_run_on_line_may_open_with_a_quotation():
    assert texts('He is now a "convicted killer" "Justice has been served," says an officer.') == [
        'He is now a "convicted killer"',
        '"Justice has been served," says an officer.',
    ]


def test_a_run_on_line_may_have_a_long_subject():
    """A highlight's verb may come late ("The 10 death row inmates being held have had ...")."""
    answer = (
        'Officials were told to travel to the "execution island" The 10 death row inmates being '
        "held have had their bids rejected."
    )
    assert texts(answer) == [
        'Officials were told to travel to the "execution island"',
        "The 10 death row inmates being held have had their bids rejected.",
    ]


def test_the_names_of_who_speaks_are_no_lead_in():
    """ "Sam Erman and Nathan Perl-Rosenthal: ..." labels a statement with its authors: cut off,
    the names would be a claim of their own that no article states."""
    for answer in (
        "Sam Erman and Nathan Perl-Rosenthal: It is outrageous that he is denied citizenship.",
        "Meaghan Keeler-Pettigrew, Stuart Bradin: U.S. must rethink special forces.",
    ):
        assert texts(answer) == [answer]


def test_a_quoted_name_before_a_capitalised_word_is_no_sentence_end():
    for answer in (
        'The "Publisher" Node sends messages.',
        'He named it "Atlas" Robotics, not "Atlas".',
        'Krav Maga was created by Emrich "Imi" Lichtenfeld, who was known as Imi Sde-Or.',
    ):
        assert [claim.text for claim in split_claims(answer)] == [answer]
