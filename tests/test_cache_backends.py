"""The decision cache on disk and on a REAL Redis server (started here on a free loopback port, never a mock).

Without `redis-server` on PATH the Redis tests skip with the reason; under CI=true they fail instead, because
.ci/run installs the server and a skipped shared-cache test would hide a broken backend.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.errors import ConfigurationError, InputError
from judge.judging.decisions.claims_absence import ClaimsAbsence
from judge.llm.cache.backends import REDIS_PREFIX, CacheBackend, DiskBackend, RedisBackend, open_backend
from judge.llm.cache.store import CachedAnswer, DecisionCache, canonical_json, open_decision_cache, seal
from judge.llm.cache.transfer import export_entries, import_entries
from judge.llm.client import DecisionClient, ModelSettings
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    server = shutil.which("redis-server")
    if server is None:
        reason = "redis-server is not installed (apt-get install redis-server); the Redis cache tests need one"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)
    workdir = tmp_path_factory.mktemp("redis")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
                             "--save", "", "--appendonly", "no", "--daemonize", "no"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                output = proc.stdout.read().decode(errors="replace") if proc.poll() is not None else ""
                pytest.fail(f"redis-server did not come up on port {port}: {output[-500:]}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def redis_backend(redis_url):
    backend = RedisBackend(redis_url)
    for key in list(backend.keys()):  # each test starts from an empty cache
        backend.delete(key)
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture
def disk_backend(tmp_path):
    backend = DiskBackend(tmp_path / "cache")
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(params=["disk", "redis"])
def backend(request) -> CacheBackend:
    return request.getfixturevalue(f"{request.param}_backend")


def _key(n: int) -> str:
    return hashlib.sha256(f"entry {n}".encode()).hexdigest()


def _answer(n: int) -> CachedAnswer:
    if n % 3 == 0:
        return CachedAnswer(response={"rationale": f"ünïcode — {n}", "verdict": "not_supported", "evidence": ""})
    return CachedAnswer(response={"rationale": f"because {n}", "verdict": "supported", "evidence": "é"},
                        prompt_tokens=100 + n, completion_tokens=n, cost=n * 1e-6)


def _fill(cache: DecisionCache, n: int) -> None:
    for i in range(n):
        cache.put(_key(i), _answer(i))


# ------------------------------------------------------------------------------------------------------------

def test_backend_round_trip(backend):
    assert isinstance(backend, CacheBackend)
    assert backend.get(_key(1)) is None and len(backend) == 0 and list(backend.keys()) == []
    for i in range(5):
        backend.set(_key(i), canonical_json(_answer(i).__dict__))
    assert len(backend) == 5 and sorted(backend.keys()) == sorted(_key(i) for i in range(5))
    assert backend.get(_key(4)) == canonical_json(_answer(4).__dict__)
    assert backend.delete(_key(4)) is True and backend.delete(_key(4)) is False
    assert backend.get(_key(4)) is None and len(backend) == 4


def test_decision_cache_interface_over_either_backend(backend):
    cache = DecisionCache(backend)
    _fill(cache, 6)
    for i in range(6):
        assert cache.get(_key(i)) == _answer(i)
    assert cache.get(_key(99)) is None
    stats = cache.stats()
    assert stats["entries"] == 6 and stats["location"] == backend.location
    assert cache.clear() == 6 and cache.stats()["entries"] == 0 and cache.get(_key(0)) is None


def test_redis_holds_the_same_key_and_value_bytes_as_the_disk_cache(tmp_path, redis_backend):
    import redis

    disk = open_decision_cache(tmp_path / "cache")  # the disk cache exactly as the client uses it
    shared = DecisionCache(redis_backend)
    for i in range(4):
        disk.put(_key(i), _answer(i))
        shared.put(_key(i), _answer(i))
    disk.close()
    raw_client = redis.Redis.from_url(redis_backend.location)
    on_disk = DiskBackend(tmp_path / "cache")
    try:
        for i in range(4):
            stored = raw_client.get(REDIS_PREFIX + _key(i))
            assert stored == on_disk.get(_key(i)).encode("utf-8") == seal(_key(i), _answer(i)).encode()
    finally:
        raw_client.close()
        on_disk.close()


def test_disk_backend_is_the_store_decision_cache_uses(tmp_path):
    old = DecisionCache(DiskBackend(tmp_path / "cache"))
    old.put(_key(1), _answer(1))
    old.close()
    cache = open_decision_cache(tmp_path / "cache")
    assert cache.get(_key(1)) == _answer(1)
    cache.put(_key(2), _answer(2))
    cache.close()
    again = DecisionCache(DiskBackend(tmp_path / "cache"))
    assert again.get(_key(2)) == _answer(2) and again.stats()["entries"] == 2
    again.close()


def test_a_cache_written_before_the_one_interface_reads_and_exports_unchanged(tmp_path):
    """The old DecisionCache wrote sealed values straight into diskcache under <dir>/decisions: such a cache (as
    every existing one) is read by the one DecisionCache, and exported to the same lines as before."""
    import diskcache

    store = diskcache.Cache(str(tmp_path / "cache" / "decisions"), eviction_policy="none")
    for i in range(3):
        store.set(_key(i), seal(_key(i), _answer(i)))
    store.close()
    cache = open_decision_cache(tmp_path / "cache")
    try:
        assert [cache.get(_key(i)) for i in range(3)] == [_answer(i) for i in range(3)]
        assert not cache.problems()
        exported = list(export_entries(cache.backend))
    finally:
        cache.close()
    value = seal(_key(0), _answer(0))
    assert exported[0] == '{"format": "argue-judge-cache/1"}\n' and len(exported) == 4
    assert json.loads(exported[1 + sorted(_key(i) for i in range(3)).index(_key(0))]) == {
        "key": _key(0), "value": value, "sha256": hashlib.sha256(value.encode()).hexdigest()}


def _failing(backend, method: str):
    """Make one store operation fail the way that store fails: sqlite on disk, a lost connection to Redis."""
    import sqlite3

    import redis

    error = sqlite3.OperationalError("disk I/O error") if isinstance(backend, DiskBackend) else \
        redis.exceptions.ConnectionError("Connection reset by peer")
    target = backend._store if isinstance(backend, DiskBackend) else backend._client

    def fail(*args, **kwargs):
        raise error

    return target, method, fail


def test_one_error_handling_whichever_the_backend(backend, monkeypatch):
    from judge.errors import OutputError

    cache = DecisionCache(backend)
    cache.put(_key(1), _answer(1))
    monkeypatch.setattr(*_failing(backend, "get"))
    assert cache.get(_key(1)) is None   # a failed read is a miss: asked again, never scored
    (problem,) = cache.problems()
    assert problem.startswith(f"1 decision cache entry in {backend.location} could not be used (database error: ")
    monkeypatch.setattr(*_failing(backend, "set"))
    with pytest.raises(OutputError, match=f"cannot write the decision cache in {backend.location}: ") as info:
        cache.put(_key(2), _answer(2))
    assert "\n" not in str(info.value)


def test_two_machines_share_one_redis_cache(redis_backend):
    other = open_decision_cache(redis_backend.location)  # a second connection, as from another machine
    try:
        DecisionCache(redis_backend).put(_key(7), _answer(7))
        assert other.get(_key(7)) == _answer(7)
    finally:
        other.close()


def test_the_client_answers_from_a_redis_cache_filled_by_another_client(redis_backend, disk_backend):
    messages = [{"role": "system", "content": "Does the sentence claim that information is absent?"},
                {"role": "user", "content": "<sentence>\nThe plant opened in 2023.\n</sentence>"}]

    async def ask(ep: FakeEndpoint) -> ClaimsAbsence:
        cache = open_decision_cache(redis_backend.location)
        try:
            client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x"), cache)  # type: ignore[arg-type]
            answered = await client.ask(messages, ClaimsAbsence, {})
            return answered.response
        finally:
            cache.close()

    with FakeEndpoint(lambda request: {"rationale": "No absence.", "claims_absence": False}) as ep:
        first = asyncio.run(ask(ep))
        assert ep.calls == 1 and len(redis_backend) == 1
        second = asyncio.run(ask(ep))
        assert ep.calls == 1  # served from Redis
    assert first.model_dump() == second.model_dump() and first.claims_absence is False
    (key,) = list(redis_backend.keys())
    assert len(key) == 64 and json.loads(redis_backend.get(key))["answer"]["response"]["claims_absence"] is False
    # a real client key survives export and import
    assert import_entries(disk_backend, export_entries(redis_backend)).added == 1
    assert disk_backend.get(key) == redis_backend.get(key)


def test_export_from_disk_import_into_redis_and_back_is_byte_identical(disk_backend, redis_backend):
    _fill(DecisionCache(disk_backend), 25)
    exported = "".join(export_entries(disk_backend))
    assert exported.count("\n") == 26 and exported.splitlines()[0] == '{"format": "argue-judge-cache/1"}'

    counts = import_entries(redis_backend, io.StringIO(exported), "disk.jsonl")
    assert (counts.added, counts.unchanged, counts.conflicts, counts.replaced) == (25, 0, 0, 0)
    assert "".join(export_entries(redis_backend)) == exported
    again = import_entries(redis_backend, exported.splitlines(keepends=True))
    assert (again.added, again.unchanged) == (0, 25)


def test_import_keeps_the_destination_answer_on_conflict_unless_told(disk_backend, redis_backend):
    DecisionCache(disk_backend).put(_key(1), _answer(1))
    DecisionCache(redis_backend).put(_key(1), _answer(2))
    exported = list(export_entries(disk_backend))
    kept = import_entries(redis_backend, exported)
    assert kept.conflicts == 1 and DecisionCache(redis_backend).get(_key(1)) == _answer(2)
    replaced = import_entries(redis_backend, exported, overwrite=True)
    assert replaced.replaced == 1 and DecisionCache(redis_backend).get(_key(1)) == _answer(1)


def _export_line(key: str, value: str, checksum: str | None = None) -> str:
    return json.dumps({"key": key, "value": value,
                       "sha256": checksum or hashlib.sha256(value.encode()).hexdigest()}) + "\n"


HEADER = '{"format": "argue-judge-cache/1"}\n'
GOOD = canonical_json(_answer(1).__dict__)


@pytest.mark.parametrize("lines, message", [
    ([], "empty file"),
    (['{"format": "something-else"}\n'], "not a cache export"),
    ([HEADER, "{not json\n"], r"cache.jsonl:2: malformed JSON"),
    ([HEADER, _export_line("ABC", GOOD)], r"cache.jsonl:2: field 'key' must be 64 lowercase hex"),
    ([HEADER, "\n", _export_line(_key(1), GOOD, checksum="0" * 64)], r"cache.jsonl:3: checksum mismatch"),
    ([HEADER, _export_line(_key(1), '{"verdict": "yes"}')], r"cache.jsonl:2: the value is not a cached answer"),
])
def test_import_refuses_bad_files_naming_the_line(disk_backend, lines, message):
    with pytest.raises(InputError, match=message):
        import_entries(disk_backend, lines, "cache.jsonl")


def test_open_backend_chooses_the_backend_from_the_target(tmp_path, redis_url):
    disk = open_backend(tmp_path / "c1")
    also_disk = open_backend(str(tmp_path / "c2"))
    shared = open_backend(redis_url)
    try:
        assert isinstance(disk, DiskBackend) and isinstance(also_disk, DiskBackend)
        assert isinstance(shared, RedisBackend) and shared.location == redis_url
    finally:
        for backend in (disk, also_disk, shared):
            backend.close()


@pytest.mark.parametrize("target, message", [
    ("s3://bucket/cache", "unknown scheme"),
    ("redis://127.0.0.1:{closed}/0", "cannot reach the Redis cache"),
])
def test_open_backend_errors_are_one_clear_line(target, message):
    with pytest.raises(ConfigurationError, match=message) as info:
        open_backend(target.format(closed=_free_port()))
    assert "\n" not in str(info.value)



# -- through the command line: eval --cache redis://..., cache stats/export/import --------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def _eval(api_base: str, cache: str, out: Path) -> None:
    result = CliRunner().invoke(app, [
        "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
        "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
        "--api-base", api_base, "--api-key", "x", "--cache", cache, "--out", str(out)])
    assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"


def test_eval_with_a_redis_cache_gives_the_disk_cache_bytes_and_a_free_rerun(redis_backend, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the document index of a Redis-cached run goes to ./caches/docstore
    with FakeEndpoint(smart_responder) as ep:
        _eval(ep.api_base, str(tmp_path / "disk-cache"), tmp_path / "on-disk")
        calls = ep.calls
        _eval(ep.api_base, redis_backend.location, tmp_path / "in-redis")
        assert ep.calls == 2 * calls  # a fresh Redis cache: every decision asked
        _eval(ep.api_base, redis_backend.location, tmp_path / "again")  # as from a second machine
        assert ep.calls == 2 * calls  # every answer came from Redis
    for name in STABLE:
        assert (tmp_path / "in-redis" / name).read_bytes() == (tmp_path / "on-disk" / name).read_bytes(), name
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "on-disk" / name).read_bytes(), name
    assert (tmp_path / "caches" / "docstore").is_dir()
    again = json.loads((tmp_path / "again" / "run-summary.json").read_text(encoding="utf-8"))
    assert again["usage"]["model_calls"] == 0 and again["usage"]["cache_hits"] > 0
    # the same keys and values as the disk cache of the same run
    disk = DiskBackend(tmp_path / "disk-cache")
    try:
        assert sorted(disk.keys()) == sorted(redis_backend.keys())
        assert all(disk.get(k) == redis_backend.get(k) for k in disk.keys())
    finally:
        disk.close()


def test_cache_commands_work_on_both_backends_and_move_entries(redis_backend, tmp_path):
    source = DiskBackend(tmp_path / "cache")
    _fill(DecisionCache(source), 12)
    source.close()
    runner = CliRunner()
    export = runner.invoke(app, ["cache", "export", "--cache", str(tmp_path / "cache"), "--out",
                                 str(tmp_path / "all.jsonl")])
    assert export.exit_code == 0, export.output
    imported = runner.invoke(app, ["cache", "import", str(tmp_path / "all.jsonl"), "--cache", redis_backend.location])
    assert imported.exit_code == 0 and "12 added" in imported.output, imported.output
    stats = runner.invoke(app, ["cache", "stats", "--cache", redis_backend.location])
    assert stats.exit_code == 0 and "12 cached decisions" in stats.output
    assert "12 cached decisions" in runner.invoke(app, ["cache", "stats", "--cache-dir", str(tmp_path / "cache")]
                                                  ).output
    again = runner.invoke(app, ["cache", "import", str(tmp_path / "all.jsonl"), "--cache", redis_backend.location])
    assert "0 added, 12 already there" in again.output
    # export from Redis gives the same file, byte for byte
    assert runner.invoke(app, ["cache", "export", "--cache", redis_backend.location, "--out",
                               str(tmp_path / "back.jsonl")]).exit_code == 0
    assert (tmp_path / "back.jsonl").read_bytes() == (tmp_path / "all.jsonl").read_bytes()
    cleared = runner.invoke(app, ["cache", "clear", "--cache", redis_backend.location, "--yes"])
    assert "removed 12 cached decisions" in cleared.output and len(redis_backend) == 0
    unreachable = runner.invoke(app, ["cache", "stats", "--cache", "redis://127.0.0.1:1/0"])
    assert unreachable.exit_code != 0 and "cannot reach the Redis cache" in unreachable.output
    assert "Traceback" not in unreachable.output


def test_the_disk_cache_never_drops_an_answer_to_stay_under_a_size(tmp_path):
    """diskcache culls the least recently stored entries past its size limit (1 GB by default): a decision cache
    must keep every answer, or a rerun at TREC scale asks the model again. A 2 KB limit makes the point at once."""
    cache = open_decision_cache(tmp_path / "cache")
    store = cache.backend._store
    store.reset("size_limit", 2_000)
    answers = {f"key-{i}": CachedAnswer(response={"verdict": "yes", "padding": "x" * 500}) for i in range(40)}
    for key, answer in answers.items():
        cache.put(key, answer)
    assert all(cache.get(key) == answer for key, answer in answers.items())
    assert store.volume() > 2_000  # the limit really was passed
