"""The creation settings of nugget banks (`create_nuggets`, the `creation` section of judge.nuggets.spec.CreateSpec),
their bounds and choices declared once (the types of its fields, judge.settings): the API checks them when the object
is built, the CLI's options read them (judge.cli.options.setting), so both refuse the same values with the same
words. Light: `import judge` loads it.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Strict

from judge.judging.decisions.base import MAX_DOCUMENT_CHARS
from judge.judging.decisions.draft_nuggets import MAX_DRAFTED
from judge.settings import Bounds, Count, PassagePolicy, settings_class

BankFormat = Literal["v3", "nuggetizer"]
BANK_FORMATS: tuple[BankFormat, ...] = get_args(BankFormat)
SHARE = Bounds(0, 1, low_open=True)
DRAFTED = Bounds(1, MAX_DRAFTED)
EXTRA_BINDINGS = Bounds(0, 1000)
Share = Annotated[float, Strict(), SHARE.constraint(), SHARE]


@settings_class
class NuggetSettings:
    """What a created bank holds besides its inputs and model: every field changes it, and all are in the
    signature (`signed`). Pooling reads `claim_share` alone, at its default."""

    max_nuggets: Count = 10          # K: nuggets kept per request
    max_docs: Count | None = None    # M: documents drafted from per request (None: all)
    # nuggets one drafting call may propose; documents besides the drafting one asked to attest each answer
    per_document: Annotated[int, Strict(), DRAFTED.constraint(), DRAFTED] = 5
    merge_overlap: Share = 0.6       # question overlap (Jaccard of content words) that makes two nuggets one
    bind_share: Share = 0.6          # share of an answer's words a document must hold to be asked about it
    claim_share: Share = 0.6         # share of an answer's words a statement must hold to be the claim asked
                                     # (judge.nuggets.text.claim_of; creation and pooling)
    max_extra_bindings: Annotated[int, Strict(), EXTRA_BINDINGS.constraint(), EXTRA_BINDINGS] = 3

    def signed(self, passages: PassagePolicy) -> str:
        """The creation settings in the signature, with what the bindings show of a document (`passages`)."""
        docs = "all" if self.max_docs is None else str(self.max_docs)
        return (f"K={self.max_nuggets},M={docs},per-doc={self.per_document},merge=jaccard{self.merge_overlap},"
                f"bind={self.bind_share}x{self.max_extra_bindings},claim=answer{self.claim_share},"
                f"doc-chars={MAX_DOCUMENT_CHARS},"
                f"{passages.tag}")

    def pooled(self, passages: PassagePolicy) -> str:
        """The settings pooling reads, in its signature."""
        return f"claim=answer{self.claim_share},{passages.tag}"
