"""Every label vocabulary, defined once. Prompts, response models, the flowchart and the metrics import these."""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import Literal, get_args

SupportVerdict = Literal["supported", "not_supported", "cannot_judge"]

# Where a response's rationale goes: before the verdict (think first; the default), after it (the verdict is
# generated first, the rationale may be cut short), or nowhere (nothing but the verdict is generated). Set per
# prompt set, by an option line in the template (judge.judging.prompts).
RationalePosition = Literal["first", "last", "omit"]
RATIONALE_POSITIONS: tuple[RationalePosition, ...] = get_args(RationalePosition)

CitationPolicy = Literal["all", "any", "joint"]
CITATION_POLICIES: tuple[CitationPolicy, ...] = get_args(CitationPolicy)

# What a request's length limit counts: NeuCLIR/RAGTIME `limit` is characters, a `word_limit` (TREC RAG) is words.
LimitUnit = Literal["characters", "words"]

# How the human sample of prediction-powered estimates was drawn (`--sample`; judge.metrics.sampling says what each
# design means).
SampleDesign = Literal["reports", "requests"]
SAMPLE_DESIGNS: tuple[SampleDesign, ...] = get_args(SampleDesign)

Aggregator = Literal["OR", "AND"]
Importance = Literal["vital", "okay"]
IMPORTANCE_WEIGHT: dict[str, int] = {"vital": 2, "okay": 1}


class Value(str, Enum):
    """What an outcome is worth to sentence precision."""

    POSITIVE = "+"
    NEGATIVE = "-"
    NEUTRAL = "0"


class Outcome(IntEnum):
    """The eight leaves of the ARGUE flowchart (Mayfield et al., SIGIR 2024, Figure 2)."""

    UNSUPPORTED_CITATION = 1      # cited, and a cited document does not support it
    SUPPORTED_NO_NUGGET = 2       # cited, supported, answers no nugget its documents attest
    SUPPORTED_NUGGET = 3          # cited, supported, answers >= 1 nugget its documents attest
    NO_CITATION_NEEDED = 4        # uncited; intro, transition, restating the request
    UNCITED_NEW_CLAIM = 5         # uncited; needs a citation; new claim
    UNCITED_REPEATED_CLAIM = 6    # uncited; needs a citation; repeats / leads into / sums up cited text
    ABSENCE_NOT_NUGGET = 7        # uncited; claims absence; no absence nugget confirms it
    ABSENCE_NUGGET = 8            # uncited; claims absence; an absence nugget confirms it


OUTCOME_VALUE: dict[Outcome, Value] = {
    Outcome.UNSUPPORTED_CITATION: Value.NEGATIVE,
    Outcome.SUPPORTED_NO_NUGGET: Value.NEUTRAL,
    Outcome.SUPPORTED_NUGGET: Value.POSITIVE,
    Outcome.NO_CITATION_NEEDED: Value.NEUTRAL,
    Outcome.UNCITED_NEW_CLAIM: Value.NEGATIVE,
    Outcome.UNCITED_REPEATED_CLAIM: Value.NEUTRAL,
    Outcome.ABSENCE_NOT_NUGGET: Value.NEGATIVE,
    Outcome.ABSENCE_NUGGET: Value.POSITIVE,
}

# Sentence precision (ARGUE): positives over everything that is not neutral.
PRECISION_NUMERATOR = frozenset({Outcome.SUPPORTED_NUGGET, Outcome.ABSENCE_NUGGET})
PRECISION_DENOMINATOR = frozenset(o for o, v in OUTCOME_VALUE.items() if v is not Value.NEUTRAL)

# Why a sentence has no outcome. Such sentences are counted and reported, never scored.
SentenceStatus = Literal["judged", "truncated", "failed", "undetermined"]
