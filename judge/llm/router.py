"""Several servers of one judge model behind litellm's Router: load balancing and fail-over.

Two ways in, one result: `--api-base` given several times (each base one deployment of `--model`), or `--router
FILE`, a litellm Router config (YAML or JSON: `model_list`, optional `router_settings`) whose deployments of the
judge model serve the run. Every deployment must serve the same litellm model id: that id, not the server that
answered, is in the cache key and the signature, so the answers (temperature 0, cached) are the same whichever
server gave them, and a run that loses a server mid-way finishes on the others with identical results.

What we pin, whatever the file says: `simple-shuffle` with weighted fail-over (a call that fails on one server
is retried at once on another server of the group, never the failed one), and `num_retries=0` (our own retry
policy in judge.llm.client stays the one that counts transport retries and backs off).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judge.errors import ConfigurationError, InputError
from judge.settings import ModelSettings

GROUP = "argue-judge"  # the one model group our calls name; every deployment of the judge model is put in it
# Router settings that would change which server answers or add a retry loop we cannot count.
_PINNED = {"routing_strategy": "simple-shuffle", "enable_weighted_failover": True, "num_retries": 0}


def read_router_config(path: Path) -> dict[str, Any]:
    """The parsed config: a mapping with a non-empty `model_list` of `{model_name, litellm_params: {model}}`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the router config: {exc.strerror}", path) from None
    except UnicodeDecodeError as exc:  # e.g. saved as Latin-1
        raise InputError(f"not valid UTF-8 at byte {exc.start + 1}; save the file as UTF-8", path) from None
    try:
        if path.suffix.lower() == ".json":
            config = json.loads(text)
        else:
            import yaml

            config = yaml.safe_load(text)
    except RecursionError:
        raise InputError("nested too deeply to read; is this the right file?", path) from None
    except (json.JSONDecodeError, ValueError) as exc:  # yaml.YAMLError derives from Exception only
        raise InputError(f"not valid JSON: {exc}", path) from None
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError, whose import is lazy
        raise InputError(f"not valid YAML: {' '.join(str(exc).split())}", path) from None
    if not isinstance(config, dict) or not isinstance(config.get("model_list"), list) or not config["model_list"]:
        raise InputError("a litellm Router config needs a non-empty `model_list` (see the litellm Router docs)",
                         path)
    for number, deployment in enumerate(config["model_list"], start=1):
        params = deployment.get("litellm_params") if isinstance(deployment, dict) else None
        if not isinstance(params, dict) or not isinstance(params.get("model"), str) \
                or not isinstance(deployment.get("model_name"), str):
            raise InputError(f"model_list entry {number} needs `model_name` and `litellm_params.model`", path)
    settings = config.get("router_settings", {})
    if not isinstance(settings, dict):
        raise InputError("`router_settings` must be a mapping", path)
    return config


def resolve_model(path: Path, requested: str | None) -> str:
    """The litellm model id the run judges with: `requested` may name a group of the file (`model_name`) or a
    deployment's model; None picks the file's only model."""
    model_list = read_router_config(path)["model_list"]
    served = {d["litellm_params"]["model"] for d in model_list}
    if requested is not None:
        by_group = {d["litellm_params"]["model"] for d in model_list if d["model_name"] == requested}
        if len(by_group) > 1:
            raise ConfigurationError(f"{path}: group {requested!r} serves several models "
                                     f"({', '.join(sorted(by_group))}); a judge must be one model, so give --model "
                                     "one of them")
        if by_group:
            return by_group.pop()
        if requested in served:
            return requested
        raise ConfigurationError(f"{path}: no deployment serves --model {requested!r} (it serves "
                                 f"{', '.join(sorted(served))})")
    if len(served) > 1:
        raise ConfigurationError(f"{path} serves several models ({', '.join(sorted(served))}); choose one with "
                                 "--model")
    return served.pop()


def deployments(settings: ModelSettings) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(model_list, router settings) for `settings`: the judge model's deployments, all in group GROUP."""
    if settings.router_config is not None:
        config = read_router_config(settings.router_config)
        chosen = [d for d in config["model_list"] if d["litellm_params"]["model"] == settings.model]
        if not chosen:
            raise ConfigurationError(f"{settings.router_config}: no deployment serves {settings.model!r}")
        model_list = [{**d, "model_name": GROUP, "litellm_params": dict(d["litellm_params"])} for d in chosen]
        extra = {k: v for k, v in config.get("router_settings", {}).items() if k not in _PINNED}
    else:
        model_list = [{"model_name": GROUP,
                       "litellm_params": {"model": settings.model, "api_base": base, "api_key": settings.api_key}}
                      for base in settings.api_bases]
        extra = {}
    for number, deployment in enumerate(model_list, start=1):
        deployment.setdefault("model_info", {}).setdefault("id", f"server-{number}")
        # our transport retries stay the only retry loop below the router too
        deployment["litellm_params"]["max_retries"] = 0
    return model_list, {**extra, **_PINNED}


# Models litellm had no price for when a Router was built for them: the Router registers its deployments in
# litellm's (process-wide) price map at price 0, after which they would look free (judge.llm.pricing.price_known).
# model -> the entry the Router registered (a price registered later replaces it and counts again).
UNPRICED: dict[str, Any] = {}


def build_router(settings: ModelSettings) -> Any:
    import litellm
    from litellm import Router

    model_list, router_settings = deployments(settings)
    unpriced = []
    for model in {d["litellm_params"]["model"] for d in model_list}:
        try:
            litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
        except Exception:  # noqa: BLE001 - litellm raises a bare Exception for a model it has no price for
            unpriced.append(model)
    try:
        router = Router(model_list=model_list, **router_settings)
    except TypeError as exc:  # an unknown router_settings key
        raise ConfigurationError(f"{settings.router_config}: router_settings: {exc}") from None
    for model in unpriced:
        UNPRICED[model] = dict(litellm.model_cost.get(model) or {})
    return router


def registered_by_router(model: str) -> bool:
    """Whether litellm's price entry for `model` is still the placeholder a Router registered."""
    import litellm

    return model in UNPRICED and dict(litellm.model_cost.get(model) or {}) == UNPRICED[model]


def servers(settings: ModelSettings) -> list[str]:
    """The api bases a run talks to, for the run summary (a router config's deployments without keys)."""
    if settings.router_config is not None:
        model_list, _ = deployments(settings)
        return [str(d["litellm_params"].get("api_base") or d["litellm_params"]["model"]) for d in model_list]
    return list(settings.api_bases) or ([settings.api_base] if settings.api_base else [])
