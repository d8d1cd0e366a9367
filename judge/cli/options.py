"""Options shared by several commands, defined once."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from judge.llm.cache import DEFAULT_CACHE_DIR
from judge.llm.embedded import EMBEDDED_MODEL
from judge.llm.kernels import KERNELS


def non_negative(value: float | None) -> float | None:
    """Callback for float options: `nan`, `inf` and negative values are usage errors, not silent settings."""
    if value is not None and (not math.isfinite(value) or value < 0):
        raise typer.BadParameter(f"{value} is not a finite number >= 0")
    return value


def one_of(value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise typer.BadParameter(f"choose one of {', '.join(choices)}")
    return value


def fraction(value: float) -> float:
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise typer.BadParameter(f"{value} is not a fraction between 0 and 1")
    return value


Model = Annotated[str, typer.Option(
    "--model", "-m", help="Any litellm model id (openai/gpt-4o-mini, anthropic/..., ollama/..., hosted_vllm/...). "
    f"Default: the embedded offline judge {EMBEDDED_MODEL}.")]
ApiBase = Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible or other server.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", envvar="ARGUE_JUDGE_API_KEY", show_envvar=True,
                                            help="Key for the provider (litellm also reads e.g. OPENAI_API_KEY).")]
Temperature = Annotated[float, typer.Option("--temperature", callback=non_negative,
                                           help="Sampling temperature (recorded in the signature).")]
Seed = Annotated[int, typer.Option("--seed", help="Sampling seed passed to the model (recorded in the signature).")]
MaxTokens = Annotated[int, typer.Option("--max-tokens", min=1, help="Maximum tokens per judgment.")]
Concurrency = Annotated[int, typer.Option("--concurrency", "-j", min=1, help="Decisions in flight at once.")]
Threads = Annotated[int | None, typer.Option(
    "--threads", min=1, help="CPU threads of the embedded judge. Default: the cores free when the model loads "
    "(one more thread than free cores can make it several times slower).")]
Kernels = Annotated[str, typer.Option(
    "--kernels", callback=lambda value: one_of(value, KERNELS), help="llama.cpp CPU kernels of the embedded judge: "
    "'fast' (weights repacked for the CPU's widest kernels, AMX where compiled in), 'safe' (no AMX, no repacking), "
    "'auto' (safe on CPUs with AMX, whose kernels crash llama-cpp-python 0.3.36, fast elsewhere). Recorded in "
    "run-summary.json; hosted models ignore it.")]
CacheDir = Annotated[Path, typer.Option("--cache-dir", help="Decision cache directory.")]
# --cache-dir stays as an alias: the same option, now also taking a URL.
Cache = Annotated[str, typer.Option(
    "--cache", "--cache-dir", help="Decision cache: a directory, or redis://HOST:PORT/DB to share one cache between "
    "machines (the document index then stays in ./caches/docstore).")]
ApiBases = Annotated[list[str] | None, typer.Option(
    "--api-base", help="Base URL of an OpenAI-compatible or other server. Give it several times for several servers "
    "of the same model: litellm's Router spreads the calls and fails over.")]
RouterConfig = Annotated[Path | None, typer.Option(
    "--router", help="A litellm Router config (YAML or JSON, `model_list` [+ `router_settings`]); its deployments "
    "of --model serve the run.", exists=True, dir_okay=False)]
Timeout = Annotated[float, typer.Option(
    "--timeout", help="Seconds per request attempt before it is abandoned and retried (not in the signature).")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the decision cache.")]
Prompts = Annotated[Path | None, typer.Option("--prompts", help="Directory of prompt templates (default: prompts/).",
                                              exists=True, file_okay=False)]
# file_okay=False: `--out` naming an existing file is a usage error before anything runs (not after judging)
Out = Annotated[Path, typer.Option("--out", "-o", help="Output directory.", file_okay=False, writable=True)]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")]
Logprobs = Annotated[bool | None, typer.Option(
    "--logprobs/--no-logprobs", help="Ask the model for token log-probabilities and record each decision's "
    "confidence. Default: on for the embedded judge, off for hosted models (not every provider accepts it).")]

DEFAULT_CACHE = DEFAULT_CACHE_DIR
DEFAULT_CACHE_TARGET = str(DEFAULT_CACHE_DIR)
