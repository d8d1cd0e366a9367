"""What of the model settings a run can apply: an option whose effect depends on the model server is dropped,
with a word, when the server cannot take it, so that the signature records what was applied rather than asked.

- `--threads` and `--kernels` steer the embedded judge's llama.cpp; a hosted model ignores them.
- `--seed` and `--logprobs` are passed on only to providers that accept them: litellm drops the others
  (`drop_params=True`, so that one provider's missing parameter does not fail a run), which made a signature
  claim `seed:0` for a provider that never saw a seed.
A provider litellm does not know is given the benefit of the doubt (its settings are kept as asked).
"""

from __future__ import annotations

from dataclasses import replace

from judge.llm.embedded.weights import is_embedded
from judge.settings import ModelSettings


def _provider_params(model: str) -> set[str] | None:
    """The OpenAI parameters litellm passes on to `model`'s provider; None when litellm cannot tell."""
    provider, _, name = model.partition("/")
    if not name:
        return None
    import litellm  # imported here: `score` never pays for it

    try:
        params = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:  # litellm raises its own errors for providers it does not know
        return None
    return set(params) if params else None


def applied_settings(settings: ModelSettings) -> tuple[ModelSettings, list[str]]:
    """The settings a run applies, and one note per option that cannot take effect and was dropped."""
    notes: list[str] = []
    if is_embedded(settings.model):
        return settings, notes
    if settings.threads is not None:
        notes.append(f"--threads {settings.threads} has no effect: {settings.model} is not the embedded judge "
                     "(threads are the server's business); ignored")
        settings = replace(settings, threads=None)
    if settings.kernels != "auto":
        notes.append(f"--kernels {settings.kernels} has no effect: {settings.model} is not the embedded judge; "
                     "ignored")
        settings = replace(settings, kernels="auto")
    params = _provider_params(settings.model)
    if params is None:
        return settings, notes
    if settings.seed is not None and "seed" not in params:
        notes.append(f"--seed {settings.seed} has no effect: {settings.model.partition('/')[0]} takes no seed, so "
                     "reruns may differ; the signature records seed:None")
        settings = replace(settings, seed=None)
    if settings.logprobs and "logprobs" not in params:
        notes.append(f"--logprobs has no effect: {settings.model.partition('/')[0]} returns no log-probabilities, "
                     "so decisions carry no confidence; the signature records no lp")
        settings = replace(settings, logprobs=False)
    return settings, notes
