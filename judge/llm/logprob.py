"""How sure was the model of its verdict? The probability of a JSON field's value from token log-probabilities.

Pure functions over the OpenAI ``logprobs.content`` shape (a list of ``{token, logprob, bytes, top_logprobs}``,
as dicts or litellm objects), so the client can compute a decision's confidence from any provider that returns
log-probabilities: the embedded llama.cpp judge, vLLM, OpenAI-compatible servers. Nothing here knows the
decisions; the caller names the field and, best, the values it may take.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from judge.llm.judges import judge_of
from judge.settings import ModelSettings

TOP_LOGPROBS = 5  # alternatives per token when log-probabilities are asked for
_WHITESPACE = " \t\n\r"
_FLOOR = -1e4


def asks_logprobs(settings: ModelSettings) -> bool:
    """Whether decisions ask for log-probabilities: `settings.logprobs` where the judge takes it, or by default only
    the embedded judge (llama.cpp returns them; not every hosted provider accepts the parameter)."""
    return judge_of(settings).logprobs


def verdict_probability(logprobs_content: Sequence[Any] | None, output_json_text: str, field: str = "verdict",
                        values: Sequence[Any] | None = None) -> float | None:
    """The probability the model gave to the value of ``field`` in the JSON object it wrote; None if unknown.

    The value's tokens are the generated tokens that overlap the value's JSON literal (quotes included), in the
    last place the tokens spell ``output_json_text`` (the answer follows any reasoning). Each
    contributes the share of the alternatives listed at its position (``top_logprobs`` plus the chosen token)
    that still spell the value written — the chosen token and other tokenizations of the same value (``"s"``,
    ``"support"`` where ``"supported"`` was chosen) — against all alternatives that count: with ``values`` (e.g.
    ``["supported", "not_supported", "cannot_judge"]``) those that can still spell one of them, which is what a
    grammar allows; without ``values`` every listed alternative (exact for the embedded judge, which lists only
    grammar-allowed ones). A position without alternatives contributes its raw probability. Paths that leave the
    chosen tokens are followed one token deep only, and alternatives beyond the listed ones are unknown: the
    result is an estimate from what the provider returns, documented rather than guessed.

    None when there are no log-probabilities, the tokens do not spell ``output_json_text``, or the text has no
    top-level ``field`` — never a guess.
    """
    if not logprobs_content:
        return None
    pieces = [_token_bytes(entry) for entry in logprobs_content]
    generated = b"".join(pieces)
    text = output_json_text.encode("utf-8")
    offset = generated.rfind(text)  # the last copy: a reasoning judge may draft its answer in a <think> first
    if offset < 0:
        return None
    span = field_value_span(output_json_text, field)
    if span is None:
        return None
    start = offset + len(output_json_text[: span[0]].encode("utf-8"))
    end = offset + len(output_json_text[: span[1]].encode("utf-8"))
    literals = None if values is None else [json.dumps(v, ensure_ascii=False).encode("utf-8") for v in values]
    written = generated[start:end]

    probability = 1.0
    position = 0
    for entry, piece in zip(logprobs_content, pieces):
        token_start, position = position, position + len(piece)
        if position <= start or token_start >= end or not piece:
            continue
        head = generated[token_start:start] if token_start < start else b""
        before = generated[start:token_start] if token_start > start else b""
        chosen = math.exp(float(_get(entry, "logprob")))
        alternatives = _get(entry, "top_logprobs") or []
        if not alternatives:
            probability *= chosen  # nothing to renormalise over: the raw probability
            continue
        same = total = chosen
        for alternative in alternatives:
            alt_bytes = _token_bytes(alternative)
            if alt_bytes == piece:
                continue
            alt_p = math.exp(float(_get(alternative, "logprob")))
            if _may_spell(alt_bytes, head, before, [written]):
                same += alt_p  # another tokenization of the same value ("support" + "ed"): not a rival
                total += alt_p
            elif literals is None or _may_spell(alt_bytes, head, before, literals):
                total += alt_p
        probability *= same / total
    return probability


def field_value_span(text: str, field: str) -> tuple[int, int] | None:
    """Character offsets of the JSON literal of top-level ``field`` in the object ``text`` holds, or None."""
    decoder = json.JSONDecoder()
    i = text.find("{")
    if i < 0:
        return None
    i += 1
    try:
        while True:
            i = _skip(text, i)
            if text[i] != '"':
                return None
            key, i = json.decoder.scanstring(text, i + 1)
            i = _skip(text, i)
            if text[i] != ":":
                return None
            i = _skip(text, i + 1)
            _value, end = decoder.raw_decode(text, i)
            if key == field:
                return i, end
            i = _skip(text, end)
            if text[i] != ",":
                return None
            i += 1
    except (IndexError, ValueError):  # cut off or not JSON
        return None


def _may_spell(alternative: bytes, head: bytes, before: bytes, literals: list[bytes]) -> bool:
    """Could ``alternative``, written where the chosen token was, still lead to one of the allowed literals?"""
    if not alternative.startswith(head):
        return False
    candidate = before + alternative[len(head):]
    return any(literal.startswith(candidate) or candidate.startswith(literal) for literal in literals)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _get(entry: Any, key: str) -> Any:
    return entry.get(key) if isinstance(entry, dict) else getattr(entry, key, None)


def _token_bytes(entry: Any) -> bytes:
    raw = _get(entry, "bytes")
    if raw is not None:
        return bytes(raw)
    return str(_get(entry, "token") or "").encode("utf-8")


def compact_logprobs(logprobs_content: Sequence[Any] | None) -> list[dict[str, Any]]:
    """``logprobs.content`` (dicts or litellm objects) as plain dicts for the cache: token, log-probability and
    alternatives, with ``bytes`` kept only where they differ from the token's UTF-8 (a token that splits a
    character); ``verdict_probability`` reads the result as it reads the original."""

    def entry(item: Any, alternatives: bool) -> dict[str, Any]:
        token = str(_get(item, "token") or "")
        # -inf (an impossible alternative) is not JSON; exp(-1e4) is the same 0.0 for every sum made of it
        out: dict[str, Any] = {"token": token, "logprob": max(float(_get(item, "logprob")), _FLOOR)}
        raw = _get(item, "bytes")
        if raw is not None and bytes(raw) != token.encode("utf-8"):
            out["bytes"] = list(raw)
        if alternatives:
            out["top_logprobs"] = [entry(alt, False) for alt in _get(item, "top_logprobs") or []]
        return out

    return [entry(item, True) for item in logprobs_content or []]


def completion_logprobs(completion: Any) -> tuple[list[dict[str, Any]], str]:
    """A completion's token log-probabilities (compacted) and the text they spell; ([], text) when the provider
    sent none. Given instructor's completion, that is the attempt that validated."""
    try:
        choice = completion.choices[0]
        text = choice.message.content or ""
        content = getattr(getattr(choice, "logprobs", None), "content", None)
    except (AttributeError, IndexError, TypeError):
        return [], ""
    if content is None and isinstance(getattr(choice, "logprobs", None), dict):
        content = choice.logprobs.get("content")
    return compact_logprobs(content), text
