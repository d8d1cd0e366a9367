"""What every decision shares: the response base class, the per-call response models, their contract hash,
request and document rendering and the prepared-question type."""

from __future__ import annotations

import hashlib
import inspect
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from annotated_types import MaxLen
from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from judge.formats.judgments import EarnedAnswer, ShownText
from judge.judging.prompts import inline, render_documents
from judge.labels import RationalePosition
from judge.types import Document, Request

T = TypeVar("T")

RATIONALE_CHARS = 300
# A nugget drafting or relevance prompt shows the document's start: the embedded judge's context holds about 4,000
# tokens, and news articles put their facts first. Longer documents are cut at a space, and the cut is in the
# signature (judge.nuggets.settings.NuggetSettings.tag).
MAX_DOCUMENT_CHARS = 3000
# (field name, the values a call allows in it): how a prepared decision narrows its response schema.
Choices = tuple[tuple[str, tuple[Any, ...]], ...]


class DecisionResponse(BaseModel):
    """Base of every response model. Reasoning comes first so the model thinks before it commits."""

    model_config = ConfigDict(extra="forbid")
    # Bounded so a grammar-constrained local model cannot ramble (llama.cpp enforces maxLength while decoding).
    rationale: str = Field(max_length=RATIONALE_CHARS, description="One short sentence explaining the verdict.")
    # Module-level helpers (functions, patterns, constants) the validators call: part of the contract hash.
    contract_helpers: ClassVar[tuple[object, ...]] = ()
    # The field holding the diamond's answer (None: the answer is a set of labels). A prompt set that moves the
    # rationale after the verdict or leaves it out gets this field first: the verdict's token is then the
    # model's first decision, so its probability is a real confidence and generation can stop soon after it.
    verdict_field: ClassVar[str | None] = None

    def decided(self) -> bool | None:  # pragma: no cover - every subclass overrides
        """The diamond's yes/no; None when the judge said it cannot judge."""
        raise NotImplementedError

    def earned(self, context: dict[str, Any]) -> list[EarnedAnswer]:
        return []

    def evidence_numbers(self) -> list[int]:
        """Numbers of the shown passages the judge gave as evidence (supports_citation)."""
        return []

    def evidence_text(self, context: dict[str, Any]) -> str | None:
        """The exact text those numbers resolve to, from the validation context."""
        return None


@cache
def tailored(model: type[DecisionResponse], rationale: RationalePosition = "first",
             choices: Choices = ()) -> type[DecisionResponse]:
    """The response model one call asks for: `model` with the rationale placed as the prompt set says and each
    field of `choices` narrowed to the values this call allows (passage numbers 1..n, answer labels A1..Ak), so
    a grammar-constrained model cannot write anything else. Same class name, validators and methods as `model`.

    Cached: a call's class is built once per (rationale, choices) and then reused, so the clients' per-class
    caches (e.g. judge.llm.client.json_schema) hold a bounded set of classes and the schema of equal choices is
    always the same object with the same JSON (the decision cache key stays deterministic)."""
    if rationale == "first" and not choices:
        return model
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__module__": model.__module__, "__qualname__": model.__qualname__}
    for name, allowed in choices:
        annotations[name], namespace[name] = _narrowed(model.model_fields[name], allowed)
    if rationale == "omit":
        annotations["rationale"] = str
        namespace["rationale"] = Field(default="", max_length=RATIONALE_CHARS)
    if rationale != "first":
        namespace["model_config"] = ConfigDict(json_schema_extra=_RATIONALE_LAYOUT[rationale])
    namespace["__annotations__"] = annotations
    return type(model)(model.__name__, (model,), namespace)


def _narrowed(info: FieldInfo, allowed: tuple[Any, ...]) -> tuple[Any, FieldInfo]:
    """A list field becomes a list of `Literal[allowed]` (an empty list when nothing is allowed); a scalar field
    becomes `Literal[allowed]`. Description, bounds and default are kept."""
    narrowed = FieldInfo.merge_field_infos(info)
    is_list = getattr(info.annotation, "__origin__", None) is list
    if is_list and not allowed:
        return Annotated[list[int], MaxLen(0)], narrowed
    if not allowed:
        raise ValueError("a scalar field needs at least one allowed value")
    choice = Literal[allowed]  # type: ignore[valid-type]
    return (list[choice] if is_list else choice), narrowed  # type: ignore[valid-type]


def _rationale_last(schema: dict[str, Any], cls: type) -> None:
    properties = schema["properties"]
    properties["rationale"] = properties.pop("rationale")
    schema["required"] = [n for n in schema["required"] if n != "rationale"] + ["rationale"]
    _verdict_first(schema, cls)


def _rationale_omitted(schema: dict[str, Any], cls: type) -> None:
    schema["properties"].pop("rationale", None)
    schema["required"] = [n for n in schema.get("required", []) if n != "rationale"]
    _verdict_first(schema, cls)


def _verdict_first(schema: dict[str, Any], cls: type) -> None:
    verdict = getattr(cls, "verdict_field", None)
    if verdict in schema["properties"]:
        schema["properties"] = {verdict: schema["properties"][verdict]} | schema["properties"]
        schema["required"] = [verdict] + [n for n in schema["required"] if n != verdict]


_RATIONALE_LAYOUT = {"last": _rationale_last, "omit": _rationale_omitted}


def despite_other_threads_parsing(parse: Callable[[], T]) -> T:
    """`parse()` (inspect.getsource, ast.parse), tried again when another thread was compiling at the same moment:
    CPython 3.11 keeps the AST constructor's recursion depth in interpreter-wide state, so an import in a worker
    thread (litellm's executor, a test server's handler) can make this thread's parse raise SystemError "AST
    constructor recursion depth mismatch". The source is unchanged, so a second try gives the same text."""
    for attempt in range(8):
        try:
            return parse()
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == 7:
                raise
            time.sleep(0.005 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def source_of(obj: Any) -> str:
    """inspect.getsource(obj), despite other threads parsing."""
    return despite_other_threads_parsing(lambda: inspect.getsource(obj))


@cache
def contract_hash(response_model: type[DecisionResponse]) -> str:
    """What, beyond the JSON schema, decides which answers are valid: the source of the response class and of its
    bases up to DecisionResponse (fields, validators, docstring), the helpers its validators call, and how a call
    tailors it. Editing `prepare()` or a comment elsewhere in the module keeps cached answers; editing a validator
    retires them."""
    classes = [c for c in response_model.__mro__ if isinstance(c, type) and issubclass(c, DecisionResponse)]
    parts = [source_of(c) for c in classes]
    parts += [source_of(h) if callable(h) else repr(h) for h in response_model.contract_helpers]
    parts += [source_of(f) for f in (tailored, _narrowed, _rationale_last, _rationale_omitted, _verdict_first)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Prepared:
    """A decision ready to ask: template values, validation context, the documents shown, and the values this
    call allows in its response's narrowed fields (see `tailored`)."""

    decision: str
    values: dict[str, str]
    context: dict[str, Any] = field(default_factory=dict)
    doc_ids: tuple[str, ...] = ()
    choices: Choices = ()
    shown: tuple[ShownText, ...] = ()  # how much of each document the prompt shows (supports_citation)
    missing_doc_ids: tuple[str, ...] = ()  # cited documents not in the collection, so not shown (supports_citation)


def render_request(request: Request) -> str:
    """The request's fields, each one fenced line of data."""
    lines = []
    if request.title:
        lines.append(f"Title: {inline(request.title)}")
    if request.background:
        lines.append(f"Background: {inline(request.background)}")
    lines.append(f"Problem statement: {inline(request.problem_statement)}")
    return "\n".join(lines)


def shown_document(document: Document, max_chars: int = MAX_DOCUMENT_CHARS) -> str:
    """The document as a drafting or relevance prompt shows it: its header and at most `max_chars` of its text."""
    text = document.text
    if len(text) > max_chars:
        cut = text.rfind(" ", max_chars // 2, max_chars)
        text = text[: cut if cut > 0 else max_chars] + " [...]"
    return render_documents([(document.doc_id, document.title, text)])


def as_number(value: Any) -> Any:
    """7, "7" and "[7]" are the number 7 (of a passage or a sentence); anything else is left for the validator's
    error message."""
    if isinstance(value, str) and value.strip(" []").isdigit():
        return int(value.strip(" []"))
    return value


_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "«": '"', "»": '"'})


def normalise(text: str) -> str:
    """Case, quote style and white space do not matter when we check that a quote occurs in a document."""
    return _SPACE.sub(" ", text.translate(_QUOTES)).strip().casefold()
