"""Token log-probabilities for the fake endpoint, in OpenAI's `choices[0].logprobs.content` shape.

`tokenize` cuts an answer text into tokens that join back to it; a `LogprobSource` says, per token, which
candidates the "model" weighed (best first, the emitted token first); `logprobs_block` builds the JSON the
endpoint sends. Standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

__all__ = ["DEFAULT_LOGPROB", "LogprobSource", "constant_logprobs", "logprobs_block", "tokenize", "verdict_at",
           "verdict_index"]

#: ``(request, tokens) -> candidates per token``: [(token, logprob), ...] best first, the emitted token first
LogprobSource = Callable[[dict, list[str]], Sequence[Sequence[tuple[str, float]]]]

#: the log-probability every token gets by default (probability about 0.99)
DEFAULT_LOGPROB = -0.01

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """The answer text as tokens for log-probabilities: word runs, whitespace runs, single other characters."""
    return _TOKEN.findall(text)


def constant_logprobs(request: dict, tokens: list[str]) -> list[list[tuple[str, float]]]:
    """The default `LogprobSource`: every token emitted with `DEFAULT_LOGPROB`, no alternatives."""
    return [[(token, DEFAULT_LOGPROB)] for token in tokens]


def verdict_index(tokens: list[str]) -> int:
    """Position of the verdict's word token in a tokenized answer (`"verdict": "<word>"`)."""
    start = tokens.index("verdict")
    return next(i for i in range(start + 1, len(tokens)) if tokens[i][0].isalnum())


def verdict_at(tokens: list[str], probability: float) -> list[list[tuple[str, float]]]:
    """Candidates that put a verdict word at `probability` and its rival label (supported / not_supported) at
    the rest; every other token certain (log-probability 0, no alternatives)."""
    out = [[(token, 0.0)] for token in tokens]
    if "verdict" in tokens:
        i = verdict_index(tokens)
        rival = "supported" if tokens[i] == "not_supported" else "not_supported"
        out[i] = [(tokens[i], math.log(probability)), (rival, math.log(1 - probability))]
    return out


def logprobs_block(request: dict, content: str, source: LogprobSource) -> dict:
    """`choices[0].logprobs` in OpenAI's shape; ValueError when the source contradicts the content."""
    tokens = tokenize(content)
    candidates = [list(c) for c in source(request, tokens)]
    if len(candidates) != len(tokens):
        raise ValueError(f"logprob source gave {len(candidates)} positions for {len(tokens)} tokens")
    top = int(request.get("top_logprobs") or 0)

    def entry(tok: str, lp: float) -> dict:
        return {"token": tok, "logprob": float(lp), "bytes": list(tok.encode("utf-8"))}

    entries = []
    for position, (token, options) in enumerate(zip(tokens, candidates)):
        if not options or options[0][0] != token:
            raise ValueError(f"logprob source: position {position} must list the emitted token {token!r} first")
        if any(not (lp <= 0.0 and math.isfinite(lp)) for _, lp in options):
            raise ValueError(f"logprob source: position {position} has a log-probability outside (-inf, 0]")
        entries.append({**entry(token, options[0][1]), "top_logprobs": [entry(t, lp) for t, lp in options[:top]]})
    return {"content": entries, "refusal": None}
