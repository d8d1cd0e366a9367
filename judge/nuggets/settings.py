"""The settings of the nugget calls (`create_nuggets`, `pool_nuggets`), their bounds and choices declared once
(the types of its fields, judge.settings): the API checks them when the object is built, the CLI's options read them
(judge.cli.options.setting), so both refuse the same values with the same words. Light: `import judge` loads it.
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal, get_args

from pydantic import Strict

from judge.judging.decisions.base import MAX_DOCUMENT_CHARS
from judge.judging.decisions.draft_nuggets import MAX_DRAFTED
from judge.settings import Bounds, Concurrency, Count, Flag, PassagePolicy, Seconds, settings_class

BankFormat = Literal["v3", "nuggetizer"]
BANK_FORMATS: tuple[BankFormat, ...] = get_args(BankFormat)
SHARE = Bounds(0, 1, low_open=True)
DRAFTED = Bounds(1, MAX_DRAFTED)
EXTRA_BINDINGS = Bounds(0, 1000)
Share = Annotated[float, Strict(), SHARE.constraint(), SHARE]


@settings_class
class NuggetSettings:
    """What a nugget call is asked to do besides its inputs and model. The creation fields change a created bank
    (all of them are in the signature, `tag`); `concurrency`, `batch`, `batch_poll` and `format` change how it
    runs and where it is written, never what it holds; `passages` is what the supports_citation decision shows of
    a document (creation and pooling alike)."""

    max_nuggets: Count = 10          # K: nuggets kept per request
    max_docs: Count | None = None    # M: documents drafted from per request (None: all)
    # nuggets one drafting call may propose; documents besides the drafting one asked to attest each answer
    per_document: Annotated[int, Strict(), DRAFTED.constraint(), DRAFTED] = 5
    merge_overlap: Share = 0.6       # question overlap (Jaccard of content words) that makes two nuggets one
    bind_share: Share = 0.6          # share of an answer's words a document must hold to be asked about it
    claim_share: Share = 0.6         # share of an answer's words a statement must hold to be the claim asked
                                     # (judge.nuggets.text.claim_of; creation and pooling)
    max_extra_bindings: Annotated[int, Strict(), EXTRA_BINDINGS.constraint(), EXTRA_BINDINGS] = 3
    concurrency: Concurrency = 4     # decisions in flight at once
    format: BankFormat = "v3"        # the banks' layout: v3 (Auto-ARGUE, AutoJudge) or castorini's nuggetizer
    batch: Flag = False              # ask through the provider's batch jobs (judge.llm.batch, docs/batch.md)
    batch_poll: Seconds = 30.0       # with batch: seconds between two looks at a running job
    passages: PassagePolicy = field(default_factory=PassagePolicy)

    @property
    def tag(self) -> str:
        """The creation settings in the signature."""
        docs = "all" if self.max_docs is None else str(self.max_docs)
        return (f"K={self.max_nuggets},M={docs},per-doc={self.per_document},merge=jaccard{self.merge_overlap},"
                f"bind={self.bind_share}x{self.max_extra_bindings},claim=answer{self.claim_share},"
                f"doc-chars={MAX_DOCUMENT_CHARS},"
                f"{self.passages.tag}")

    @property
    def pool_tag(self) -> str:
        """The settings pooling reads, in its signature."""
        return f"claim=answer{self.claim_share},{self.passages.tag}"
