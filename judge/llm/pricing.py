"""What decisions cost: litellm's price map, or a flat `--price-per-1k`, and the estimate that `--max-cost` checks
before each call. The price map only feeds cost reporting and the budget, never a score."""

from __future__ import annotations

from typing import Any

import litellm

from judge.llm.judges import judge_type
from judge.llm.router import registered_by_router
from judge.settings import ModelSettings


def price_known(model: str) -> bool:
    """Whether litellm's price map knows `model` (a free judge, the embedded one, needs none), i.e. whether
    --max-cost can be enforced without --price-per-1k."""
    if judge_type(model).free:
        return True
    if registered_by_router(model):  # priced at 0 by a Router's registration, not by anyone who knows it
        return False
    try:
        litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
    except Exception:  # litellm raises a bare Exception for models missing from its price map
        return False
    return True


def estimate_cost(settings: ModelSettings, messages: list[dict[str, str]], price_per_1k: float | None = None
                  ) -> float:
    """An upper-ish estimate of one decision's cost before it is asked: ~4 characters a token in, `max_tokens`
    out; 0.0 when no price is known (the budget is then enforced only after each call)."""
    prompt_tokens = sum(len(m["content"]) for m in messages) // 4 + 16
    if price_per_1k is not None:
        return (prompt_tokens + settings.max_tokens) / 1000 * price_per_1k
    try:
        cost_in, cost_out = litellm.cost_per_token(model=settings.model, prompt_tokens=prompt_tokens,
                                                   completion_tokens=settings.max_tokens)
        return float(cost_in + cost_out)
    except Exception:  # unknown price: the budget cannot be enforced before the call, only after it
        return 0.0


class Prices:
    """The cost of each completion of one model. Made before a Router is built: the Router registers its
    deployments in litellm's price map at price 0, after which an unpriced model would look free."""

    def __init__(self, model: str, price_per_1k: float | None = None):
        self.model = model
        self.price_per_1k = price_per_1k  # USD per 1,000 tokens, in or out; overrides litellm's price map
        self._free = judge_type(model).free
        self._unpriced = not price_known(model)

    def cost_of(self, completion: Any, tokens_in: int, tokens_out: int) -> float | None:
        """The completion's cost in USD; None when no price is known."""
        if self.price_per_1k is not None:
            return (tokens_in + tokens_out) / 1000 * self.price_per_1k
        if self._free:
            return 0.0
        if self._unpriced:
            return None
        # litellm has priced the response already (None: no price known); asking it again cost ~2 ms a call
        priced = (getattr(completion, "_hidden_params", None) or {}).get("response_cost")
        if priced is None:
            try:
                priced = litellm.completion_cost(completion_response=completion)
            except Exception:  # litellm raises for models missing from its price map: never ask again
                self._unpriced = True
        return None if priced is None else float(priced)

    def output_cost(self, tokens: int) -> float | None:
        """What `tokens` completion tokens cost (reasoning tokens are billed as completion tokens); None when no
        price is known."""
        if self.price_per_1k is not None:
            return tokens / 1000 * self.price_per_1k
        if self._free:
            return 0.0
        if self._unpriced:
            return None
        try:
            return float(litellm.cost_per_token(model=self.model, prompt_tokens=0, completion_tokens=tokens)[1])
        except Exception:  # litellm raises for models missing from its price map
            return None


def cached_prompt_tokens(usage: Any) -> int:
    """The prompt tokens a completion's usage says were served from the provider's prompt cache (0 when it does
    not say). litellm puts every provider's figure (OpenAI's and vLLM's `prompt_tokens_details.cached_tokens`,
    Anthropic's cache reads) in the OpenAI place."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):
        return int(details.get("cached_tokens") or 0)
    return int(getattr(details, "cached_tokens", 0) or 0)
