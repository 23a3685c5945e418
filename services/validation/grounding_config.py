"""The thresholds and weights of grounding, one settings block (GLOSSATOR_VALIDATION_GROUNDING__*).

Its own module because the checker, the claim verdicts (support) and the service's settings all
read it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class GroundingConfig(BaseModel):
    """Every threshold and weight of grounding, tuned on the HaluEval dev splits.

    Figures quoted are balanced accuracy on ../shared/eval/halueval (QA / summarization; first
    300 records unless "full split" is said), measured with bench/grounding_eval.py.
    """

    # An answer is grounded when at least this share of its claims (weighted by length) is
    # supported: by default all of them, since one fabricated sentence among true ones is the
    # commonest hallucination of a summary.
    threshold: float = Field(
        1.0, ge=0, le=1, description="Share of claims (by length) that must be supported for is_grounded."
    )
    # Size of a passage in consecutive sentences. One sentence is best on both splits (QA 0.991
    # vs 0.985 with 3, summaries 0.81 vs 0.79 with 2): a claim's words drawn from several
    # sentences are more often a recombination than a merge of neighbours.
    window_sentences: int = Field(
        1, ge=1, description="Consecutive context sentences a claim is compared with at once."
    )
    # Adjacent words of a claim are stated together when the passage has them in the same order
    # with at most this many content words between them ("the harbour of Dunmore East was
    # completed" states "the harbour was completed"). Costs QA 0.0025 against exact adjacency.
    phrase_gap: int = Field(
        2, ge=0, description="Content words allowed between two words of a phrase in the context."
    )
    # Answers of at most this many sentences are direct answers, checked phrase by phrase
    # (QA: 0.99 that way, 0.89 when they were judged as paraphrases instead).
    direct_answer_max_sentences: int = Field(
        1, ge=0, description="Answers this short are checked phrase by phrase, with no paraphrase allowance."
    )
    # A claim of a longer answer whose unsupported mass (see the next field) reaches this share of
    # its content words is not a paraphrase, whatever the claim model says. Summarization, report
    # half, with the claim model retrained each time: 0.6: 0.82, 0.8: 0.854, no cap: 0.851.
    paraphrase_max_share: float = Field(
        0.8,
        ge=0,
        description="Share of a longer answer's claim that may be unsupported before it cannot be a paraphrase.",
    )
    # Weight of a word found in the chunk but outside the claim's best passage, in that mass and
    # in a direct answer's reported score (a word absent from the chunk weighs 1).
    outside_passage_weight: float = Field(
        0.5, ge=0, description="Weight of a claim word found in the chunk but outside its best passage."
    )
    # A direct answer with all its words in one passage but not as the same phrases is accepted
    # as a rephrasing when its cosine with the passage reaches this. Recombined facts ("Neil
    # Gaiman directed Beowulf") sit near 0.82, a reordered sentence near 0.89; every rescue on
    # HaluEval QA is a wrong one (it costs 0.005 there), but it spares real rephrasings. A
    # question asking for other words ("Explain this in simpler words") lets the direct answer
    # reword the passage too, at the same cosine.
    direct_rephrase_similarity: float = Field(
        0.88,
        ge=0,
        le=1,
        description="Cosine at which a reordered direct answer (or, to a question asking for other "
        "words, a reworded one) counts as a rephrasing.",
    )
    # Share of semantic similarity in the reported support score and in choosing the best of
    # several chunks (the rest is lexical coverage). It does not decide longer answers: crediting
    # similar paraphrases let fabrications through on HaluEval summaries (-3 points).
    semantic_weight: float = Field(
        0.3, ge=0, le=1, description="Share of embedding similarity in the reported support score."
    )
    # Passages per claim and chunk (best lexical coverage first) compared by embedding; bounds
    # the embedding work on long contexts.
    semantic_candidates: int = Field(
        3, ge=1, description="Passages per claim and chunk compared by embedding."
    )
    # A clause joined by "and" or ";" becomes a claim of its own when both sides have at least
    # this many words (and "and" joins two statements with verbs of their own).
    min_clause_words: int = Field(
        3,
        ge=1,
        description="Words needed each side of 'and' or ';' to split a clause into a claim of its own.",
    )
    # Hard checks: a number, a capitalised name or a negation of the claim missing from its
    # evidence fails a direct answer whatever the other scores say (in a longer answer the claim
    # model weighs them).
    check_numbers: bool = Field(True, description="A number or date of the claim must be in its evidence.")
    check_names: bool = Field(True, description="A capitalised name of the claim must be in its evidence.")
    check_negations: bool = Field(True, description="A negation of the claim must be in its evidence.")
    # A negation of the claim must appear in one of its best N passages: the sentence that
    # carries the "not" is often the neighbour of the one sharing most words.
    negation_passages: int = Field(3, ge=1, description="Best passages of a claim searched for its negation.")
