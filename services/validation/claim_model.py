"""A trained signal for the claims of longer answers: how likely the context supports each one.

Paraphrase is what separates a longer answer from a quote, so word counts alone cannot decide it:
hand-set allowances on unsupported words fitted the HaluEval summaries they were tuned on (0.82
balanced accuracy) and fell to 0.77 on later records. No natural-language-inference model ships
its weights in a package here, so the signal is ours: a logistic model over the evidence the
checker already gathers (words of the claim absent from the chunk, weighed by how far each is
from the chunk's nearest word, or outside its best passage, adjacent word pairs not stated
together, missing numbers, names and negations, and the first three again scaled by the claim's
length), trained by `bench/train_claim_model.py` on one half of the HaluEval summarization
dev split and reported on the other.

It is trained as a noisy AND: an answer is grounded when all its claims are, so the model's
probability for an answer is the product of its claims' probabilities. A claim's *doubt* is
−log of its probability (less a quote's); an answer may carry at most `doubt_budget` in all. Claims are
flagged, most doubtful first, until the rest fit the budget: for one claim that is "probability
under exp(−budget)", and a sentence that would pass alone can still fail beside other weak ones.

Embedding similarity is not a feature: given the word evidence it took a negative weight
(HaluEval's fabricated sentences are fluent paraphrases of their article), and leaving it out
spares longer answers the embedding model altogether: novel_distance reads the model's input word
vectors from its export folder, and never runs it.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from services.common.text.words import Analysis
    from services.validation.lexical import LexicalEvidence

# The model shipped with the package (written by bench/train_claim_model.py).
MODEL_PATH = Path(__file__).with_name("claim_model.json")

FEATURES = (
    # content words of the claim absent from the chunk, each weighed by its distance to the
    # chunk's nearest word (services.validation.word_vectors): a synonym is little evidence
    "novel_distance",
    "outside",  # ... in the chunk, but not in the claim's best passage
    "missing_pairs",  # adjacent content-word pairs not stated together there
    "missing_numbers",  # numbers and dates the chunk never states
    "missing_names",  # capitalised names it never mentions
    "unmatched_negations",  # negations absent from the best passages
    # The same gaps weigh more in a longer claim (log of 1 + its content words): fabricated
    # sentences are long compounds. A product, so that a quote of any length has no doubt.
    "novel_distance_x_length",
    "outside_x_length",
    "missing_pairs_x_length",
)


def claim_features(claim: Analysis, evidence: LexicalEvidence) -> np.ndarray:
    """The claim's evidence against one chunk, in the order of FEATURES: all 0 for a quote."""
    match, failures = evidence.match, evidence.hard_checks
    gaps = [evidence.novel_distance(claim), len(match.outside_terms), len(match.missing_bigrams)]
    length = math.log1p(len(claim.term_set))
    return np.array(
        [
            *gaps,
            len(failures.numbers),
            len(failures.names),
            len(failures.negations),
            *(gap * length for gap in gaps),
        ],
        dtype=float,
    )


@dataclass(frozen=True)
class ClaimModel:
    """Logistic weights over standardised FEATURES, and the answer's doubt budget."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    doubt_budget: float
    # How it was trained and what it scored, for whoever reads the file.
    provenance: dict = field(default_factory=dict)

    def doubt(self, features: np.ndarray) -> float:
        """−log P(supported), less that of a quote (all features 0): a claim's doubt is what its
        gaps add, so an answer of many quoted sentences carries none. Every weight is ≤ 0, so a
        further gap never lowers it."""
        return max(0.0, self._neg_log_probability(features) - self._quote_neg_log_probability)

    def _neg_log_probability(self, features: np.ndarray) -> float:
        mean, scale, weights = self._arrays
        z = float((features - mean) / scale @ weights)
        return float(np.logaddexp(0.0, -(z + self.bias)))

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """mean, scale and weights as arrays, made once rather than at every claim."""
        return np.array(self.mean), np.array(self.scale), np.array(self.weights)

    @cached_property
    def _quote_neg_log_probability(self) -> float:
        return self._neg_log_probability(np.zeros(len(self.features)))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> ClaimModel:
        raw = json.loads(path.read_text(encoding="utf-8"))
        model = cls(**{**raw, **{k: tuple(raw[k]) for k in ("features", "mean", "scale", "weights")}})
        if model.features != FEATURES:
            raise ValueError(
                f"{path} was trained on features {model.features}, this code computes {FEATURES}"
            )
        return model


@lru_cache(maxsize=1)
def shipped_claim_model() -> ClaimModel:
    return ClaimModel.load(MODEL_PATH)


def doubtful_claims(doubts: list[float], budget: float) -> set[int]:
    """Indexes of the claims to flag: the most doubtful first, until the others fit the budget."""
    flagged: set[int] = set()
    total = sum(doubts)
    for index in sorted(range(len(doubts)), key=lambda i: -doubts[i]):
        if total <= budget:
            break
        flagged.add(index)
        total -= doubts[index]
    return flagged
