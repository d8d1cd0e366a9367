"""The decision cache: one `DecisionCache` over a backend (judge.llm.cache.backends: a directory, or Redis).

The key is a hash of everything that can change an answer: model id, rendered messages, response schema,
the caller's contract hash (for decisions: the response class and its validators) and sampling parameters. The
re-ask budget is not in it: the budget decides whether a decision fails, never what an answer is (an answer that
validated after k re-asks is the same under any budget of k or more, and failures are not cached), so raising it
keeps every cached answer; it is in the judge signature instead.

Only answers are stored, never failures: a decision that failed (invalid output after every re-ask, or a
transport fault) is asked again by the next run, so a flaky server cannot make a failure permanent.

Each value is sealed: canonical JSON of the answer plus the SHA-256 of its key and that JSON, so a flipped bit or
a hand-edited value is detected instead of scored. An entry that cannot be read (a damaged database page, bad
JSON, the wrong shape, a checksum that does not match) is treated as absent: the decision is asked again and the
entry replaced; `unreadable` counts them for the run's diagnostics. A write that fails is an OutputError. A cache
database that cannot be opened at all, or a Redis server that cannot be reached, is a ConfigurationError that
says how to reset or reach it.

An answer asked with log-probabilities also keeps them (`logprobs`, compacted by `judge.llm.logprob`; an empty
list when the provider sent none) and the raw JSON text they spell (`output`), so a rerun computes the same
confidence. Both keys are optional and left out of answers without them. So is `reasoning`: what a reasoning judge
thought before it answered, kept when a run asked to keep it ("" when the model gave none), so a rerun that keeps it
writes the same records warm as cold.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections import Counter
from contextlib import suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from judge.errors import ConfigurationError, InputError, OutputError
from judge.llm.cache.backends import (
    DECISIONS_SUBDIR,
    DEFAULT_CACHE_DIR,
    CacheBackend,
    CacheBackendError,
    DamagedStore,
    open_backend,
    reason,
)

_SEAL_VERSION = 2


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def cache_key(*, model: str, messages: list[dict[str, str]], schema: dict[str, Any],
              sampling: dict[str, Any], contract: str = "") -> str:
    material = {"model": model, "messages": messages, "schema": schema, "sampling": sampling, "contract": contract}
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    response: dict[str, Any]          # the validated response model, as JSON
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    logprobs: list[dict[str, Any]] | None = None   # None: not asked for; []: asked, the provider sent none
    output: str | None = None                      # the completion's text (the JSON the logprobs spell)
    reasoning: str | None = None                   # None: not kept; "": kept, the model gave none


_REQUIRED = {"response", "prompt_tokens", "completion_tokens", "cost"}
_OPTIONAL = {"logprobs", "output", "reasoning"}


class UnreadableEntry(ValueError):
    """A cache value that is not a sealed answer of the right shape (why, in one phrase)."""


def seal(key: str, answer: CachedAnswer) -> str:
    body = {k: v for k, v in asdict(answer).items() if k in _REQUIRED or v is not None}
    return canonical_json({"v": _SEAL_VERSION, "answer": body, "sha256": _checksum(key, body)})


def unseal(key: str, raw: Any) -> CachedAnswer:
    """The answer sealed under `key`; UnreadableEntry for anything else."""
    if not isinstance(raw, str):
        raise UnreadableEntry(f"a value of type {type(raw).__name__}, not JSON text")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise UnreadableEntry(f"bad JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise UnreadableEntry("not a JSON object")
    if data.get("v") != _SEAL_VERSION or not isinstance(data.get("answer"), dict):
        raise UnreadableEntry("an unknown layout")
    if data["sha256"] != _checksum(key, data["answer"]):
        raise UnreadableEntry("checksum mismatch (edited or damaged on disk)")
    return _answer(data["answer"])


def _checksum(key: str, body: dict[str, Any]) -> str:
    # The key is part of the checksum, so an answer copied under another key is caught too.
    return hashlib.sha256(f"{key}\n{canonical_json(body)}".encode()).hexdigest()


def _answer(body: dict[str, Any]) -> CachedAnswer:
    if not _REQUIRED <= set(body) <= _REQUIRED | _OPTIONAL:
        raise UnreadableEntry(f"unexpected fields {sorted(body)}")
    response, tokens = body["response"], (body["prompt_tokens"], body["completion_tokens"])
    if not isinstance(response, dict):
        raise UnreadableEntry("the response is not an object")
    if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in tokens):
        raise UnreadableEntry("token counts are not non-negative integers")
    cost = body["cost"]
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
        raise UnreadableEntry("the cost is not a non-negative number")
    logprobs, output = body.get("logprobs"), body.get("output")
    if (logprobs is None) != (output is None):
        raise UnreadableEntry("log-probabilities without their text (or the reverse)")
    if logprobs is not None and not (isinstance(output, str) and isinstance(logprobs, list)
                                     and all(_token_entry(e) for e in logprobs)):
        raise UnreadableEntry("log-probabilities that are not a list of token entries")
    reasoning = body.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        raise UnreadableEntry("the reasoning is not text")
    return CachedAnswer(response, tokens[0], tokens[1], float(cost), logprobs, output, reasoning)


def _token_entry(entry: Any, alternatives: bool = True) -> bool:
    """A compacted token entry: token text, a finite log-probability <= 0, optional bytes and alternatives."""
    if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
        return False
    logprob = entry.get("logprob")
    if isinstance(logprob, bool) or not isinstance(logprob, int | float) or not -math.inf < logprob <= 0:
        return False
    raw = entry.get("bytes")
    if raw is not None and not (isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw)):
        return False
    top = entry.get("top_logprobs", [])
    return isinstance(top, list) and (alternatives or not top) and all(_token_entry(t, False) for t in top)


class DecisionCache:
    """THE decision cache: sealed answers over a backend (judge.llm.cache.backends: a local directory or Redis),
    with one error handling whichever it is. An entry that cannot be used (unreadable, damaged, a read that
    failed) is counted, dropped and asked again, never scored; a write that fails is an OutputError. Open one
    with `open_decision_cache(directory or URL)`."""

    def __init__(self, backend: CacheBackend):
        self.backend = backend
        self.blocking = backend.blocking            # the client runs blocking calls in a thread
        self.unreadable: Counter[str] = Counter()   # why entries could not be used, and how often

    @property
    def location(self) -> str:
        return self.backend.location

    def get(self, key: str) -> CachedAnswer | None:
        try:
            raw = self.backend.get(key)
        except CacheBackendError as exc:
            self.unreadable[f"database error: {exc}"] += 1
            return None
        if raw is None:
            return None
        try:
            return unseal(key, raw)
        except UnreadableEntry as exc:
            self.unreadable[str(exc)] += 1
            self._drop(key)
            return None

    def _drop(self, key: str) -> None:
        with suppress(CacheBackendError):   # asked again and replaced anyway; a failed delete changes nothing
            self.backend.delete(key)

    def put(self, key: str, answer: CachedAnswer) -> None:
        try:
            self.backend.set(key, seal(key, answer))
        except CacheBackendError as exc:  # a full disk is sqlite3.OperationalError; a lost Redis connection
            raise OutputError(f"cannot write the decision cache in {self.location}: {exc} (decisions cached "
                              "before this one are kept)") from exc

    def problems(self) -> list[str]:
        """One line per kind of unreadable entry, for the run's diagnostics."""
        return [f"{count} decision cache entr{'y' if count == 1 else 'ies'} in {self.location} could not be used "
                f"({reason}); asked again" for reason, count in sorted(self.unreadable.items())]

    def stats(self) -> dict[str, Any]:
        """Where the cache is, how many entries it holds and their size in bytes (None where not known: Redis)."""
        return {"location": self.location, "entries": len(self.backend), "bytes": self.backend.size_bytes()}

    def clear(self) -> int:
        return self.backend.clear()

    def close(self) -> None:
        self.backend.close()


def open_decision_cache(target: str | Path = DEFAULT_CACHE_DIR) -> DecisionCache:
    """What `eval --cache`, `calibrate --cache` and the `cache` commands use: a directory (its `decisions/`
    store) or a `redis://HOST:PORT/DB` URL, behind the one DecisionCache."""
    return DecisionCache(open_backend(target))


def existing_cache_directory(directory: Path) -> Path:
    """`directory`, when it holds a decision cache; an InputError otherwise. Commands that only read or empty a
    cache (stats, export, clear) call this first: opening a mistyped path would create an empty cache there and
    report 0 decisions as if that were the answer."""
    directory = Path(directory)
    if not (directory / DECISIONS_SUBDIR / "cache.db").is_file():
        what = ("no such directory" if not directory.exists() else
                f"no decision cache in it (no {DECISIONS_SUBDIR}/cache.db)")
        raise InputError(f"{what}; check --cache (nothing cached yet, or a mistyped path?)", directory)
    return directory


def clear_cache_directory(directory: Path) -> int | None:
    """Empty the decision cache: how many entries were removed, or None when its database was unreadable and
    was deleted as a whole (the cure DiskBackend names when it cannot open one). A cache that cannot be
    written (read-only, locked) is an OutputError and is left as it was: success is never claimed unchecked."""
    store = Path(directory) / DECISIONS_SUBDIR
    try:
        cache = open_decision_cache(Path(directory))
    except ConfigurationError:
        _remove_store(store)
        return None
    try:
        return cache.clear()
    except DamagedStore:
        cache.close()
        _remove_store(store)
        return None
    except CacheBackendError as exc:  # read-only, locked, I/O: the database is sound, it cannot be changed
        raise OutputError(f"cannot clear the decision cache in {directory}: {exc}; nothing was removed "
                          "(is it read-only, or in use by a running evaluation?)") from exc
    finally:
        cache.close()


def _remove_store(store: Path) -> None:
    try:
        shutil.rmtree(store)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OutputError(f"cannot remove the unreadable decision cache {store}: {reason(exc)}; remove it by hand "
                          "(or fix its permissions) and run again") from exc
    if store.exists():
        raise OutputError(f"the unreadable decision cache {store} is still there after removing it; remove it by hand")
