"""What a decision declares about itself, in one `DecisionSpec` at the foot of its module, and what the walker
knows about a sentence when it asks one (`SentenceCase`). A decision is a question to the judge model: its prompt
template, its response model (tailored per call), the contract hash of that model and its yes / no labels; the
flowchart's diamonds and the questions of nugget creation and pooling are declared alike and asked by the one
asker (judge.judging.decisions.asker.Decider).

Everything per decision that the rest of the judge looks up (the signature's abbreviation, the prompt file, the
response model, the yes/no labels of calibration tables and thresholds files, whether a threshold may flip the
verdict, the view's question, how the walker fills the prompt) is read from here through the registry
(judge.judging.decisions.REGISTRY). The flowchart's table (judge.chart) alone says when a decision is asked, of
what (the sentence, each cited document, the supporting ones) and where its answers lead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judge.formats.judgments import DecisionRecord
from judge.judging.decisions.base import DecisionResponse, Prepared
from judge.judging.prompts import PromptTemplate, load_template
from judge.settings import PassagePolicy
from judge.types import DocumentLookup, NuggetBank, Request, Sentence


@dataclass(frozen=True)
class SentenceCase:
    """What the walker knows when the flowchart asks about one sentence: a decision's `prepare_for` takes what
    its prompt needs from here. `sentence` and `judged` are as the model is shown them (quarantine applied)."""

    request: Request
    sentence: Sentence
    judged: list[Sentence]
    bank: NuggetBank | None
    documents: DocumentLookup
    passages: PassagePolicy


# How the walker fills a decision's prompt for the flowchart's question (its documents, when it has any): a
# Prepared to ask the model, a DecisionRecord the decision takes without a model, or None when there is nothing
# to ask (no candidate nugget, no absence nugget).
PrepareFor = Callable[[SentenceCase, tuple[str, ...]], Prepared | DecisionRecord | None]


@dataclass(frozen=True)
class DecisionSpec:
    """One decision (a diamond of the ARGUE flowchart), declared once by its module as `DECISION`."""

    name: str                       # its records' `decision`, its module's name, its flowchart diamond
    abbreviation: str               # its key in the signature's `prompts:` field (sc=4efaea34+...)
    response_model: type[DecisionResponse]
    prompt: str                     # its prompt file: prompts/<prompt>.md (judge/_prompts/ in the wheel)
    labels: tuple[str, str]         # the yes / no verdict in calibration tables and thresholds files
    question: str                   # the question the HTML view shows beside its verdict
    # How the walker fills the prompt, for a diamond of the flowchart. None for a question nugget creation and
    # pooling ask (judge.chart.NUGGET_QUESTIONS): they call the module's `prepare` themselves; the walker never
    # asks it (judge.judging.decisions.Registry.of_package checks both).
    prepare_for: PrepareFor | None = None

    @property
    def in_flowchart(self) -> bool:
        """A diamond of the flowchart (the walker asks it), not one of nugget creation's and pooling's questions."""
        return self.prepare_for is not None

    @property
    def takes_threshold(self) -> bool:
        """Whether a decision threshold may flip the verdict: only where the verdict is one value of one field
        (the response model's `verdict_field`), so flipping it invents nothing the judge did not say (no nugget
        label); judge.judging.decisions.asker reads the confidence of that field. Only a diamond's: a threshold
        changes where a walk goes, and nothing walks a nugget question."""
        return self.in_flowchart and self.response_model.verdict_field is not None

    def template(self, prompts_dir: Path | None = None) -> PromptTemplate:
        """The prompt template, from `prompts_dir` or the shipped prompts."""
        return load_template(self.prompt, prompts_dir)
