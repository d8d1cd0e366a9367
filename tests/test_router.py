"""Several servers through litellm's Router: `--api-base` given twice, or `--router FILE`. Calls are spread over
the servers; when one server is stopped mid-run the run finishes on the other with the judgments a one-server run
writes, byte for byte."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.errors import ConfigurationError, InputError
from judge.llm.router import deployments, resolve_model
from judge.settings import ModelSettings
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")
runner = CliRunner()


def eval_cli(out: Path, cache: Path, *servers: str) -> None:
    result = runner.invoke(app, [
        "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
        "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
        "--api-key", "x", "--cache", str(cache), "--out", str(out), "-j", "4", *servers])
    assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("one-server")
    with FakeEndpoint(smart_responder) as ep:
        eval_cli(root / "out", root / "cache", "--api-base", ep.api_base)
        calls = ep.calls
    return root / "out", calls


def test_two_servers_share_the_calls_and_give_the_one_server_bytes(one_server, tmp_path):
    reference, calls = one_server
    with FakeEndpoint(smart_responder, latency=0.01) as a, FakeEndpoint(smart_responder, latency=0.01) as b:
        eval_cli(tmp_path / "out", tmp_path / "cache", "--api-base", a.api_base, "--api-base", b.api_base)
        assert a.calls > 0 and b.calls > 0 and a.calls + b.calls == calls
    for name in STABLE:
        assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name
    summary = json.loads((tmp_path / "out" / "run-summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["servers"] == 2
    # the Router registers its deployments in litellm's price map at price 0: an unpriced model stays unpriced
    assert summary["usage"]["cost_known"] is False and summary["usage"]["cost"] == 0


def test_a_server_stopped_mid_run_leaves_the_run_to_the_other(one_server, tmp_path):
    reference, calls = one_server
    with FakeEndpoint(smart_responder, latency=0.05) as a, FakeEndpoint(smart_responder, latency=0.05) as b:
        def stop_b_after_some_calls() -> None:
            while b.calls < 3:
                if stopped.wait(0.005):
                    return
            b.stop()  # requests it holds are dropped unanswered, later ones are refused

        stopped = threading.Event()
        killer = threading.Thread(target=stop_b_after_some_calls)
        killer.start()
        try:
            eval_cli(tmp_path / "out", tmp_path / "cache", "--api-base", a.api_base, "--api-base", b.api_base)
        finally:
            stopped.set()
            killer.join()
        assert b.calls >= 3 and a.calls > calls // 2  # b served some, then a took over the rest
    for name in STABLE:
        assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name
    summary = json.loads((tmp_path / "out" / "run-summary.json").read_text(encoding="utf-8"))
    assert summary["usage"]["failures"] == 0


def test_a_router_config_file_serves_the_run(one_server, tmp_path):
    reference, calls = one_server
    with FakeEndpoint(smart_responder) as a, FakeEndpoint(smart_responder) as b:
        config = tmp_path / "router.yaml"
        config.write_text(
            "model_list:\n"
            f"  - model_name: judge\n    litellm_params: {{model: openai/fake, api_base: '{a.api_base}', api_key: x}}\n"
            f"  - model_name: judge\n    litellm_params: {{model: openai/fake, api_base: '{b.api_base}', api_key: x}}\n"
            "  - model_name: other\n    litellm_params: {model: openai/unused, api_base: 'http://127.0.0.1:9'}\n"
            "router_settings:\n  num_retries: 5\n  cooldown_time: 1\n", encoding="utf-8")
        result = runner.invoke(app, [
            "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "judge",
            "--router", str(config), "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
        assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
        assert a.calls + b.calls == calls and a.calls and b.calls
    for name in STABLE:  # the group name resolved to its model: same signature, same bytes
        assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name


def test_router_settings_cannot_add_a_retry_loop_or_change_the_strategy(tmp_path):
    config = tmp_path / "router.json"
    config.write_text(json.dumps({
        "model_list": [{"model_name": "g", "litellm_params": {"model": "openai/m", "api_base": "http://h:1"}}],
        "router_settings": {"num_retries": 5, "routing_strategy": "least-busy", "cooldown_time": 3}}))
    model_list, settings = deployments(ModelSettings("openai/m", router_config=config))
    assert settings["num_retries"] == 0 and settings["routing_strategy"] == "simple-shuffle"
    assert settings["cooldown_time"] == 3 and settings["enable_weighted_failover"] is True
    assert [d["model_name"] for d in model_list] == ["argue-judge"]
    assert model_list[0]["litellm_params"]["max_retries"] == 0


@pytest.mark.parametrize(("text", "requested", "error", "message"), [
    ("model_list: []\n", None, InputError, "non-empty `model_list`"),
    ("model_list: [{model_name: g}]\n", None, InputError, "entry 1 needs"),
    ("model_list: [\n", None, InputError, "not valid YAML"),
    ("model_list: [{model_name: g, litellm_params: {model: a}}, {model_name: g, litellm_params: {model: b}}]\n",
     "g", ConfigurationError, "serves several models"),
    ("model_list: [{model_name: g, litellm_params: {model: a}}, {model_name: h, litellm_params: {model: b}}]\n",
     None, ConfigurationError, "choose one with --model"),
    ("model_list: [{model_name: g, litellm_params: {model: a}}]\n", "zz", ConfigurationError, "no deployment"),
])
def test_router_config_errors_name_the_file_and_the_fix(tmp_path, text, requested, error, message):
    config = tmp_path / "router.yaml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(error, match=message) as raised:
        resolve_model(config, requested)
    assert "router.yaml" in str(raised.value)


@pytest.mark.parametrize(("name", "content", "message"), [
    ("router.yaml", "model_list: [{model_name: caf\u00e9, litellm_params: {model: a}}]\n".encode("latin-1"),
     "not valid UTF-8 at byte 30"),
    ("router.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
], ids=["latin-1-yaml", "json-nested-100k-deep"])
def test_a_router_config_that_is_not_utf8_or_too_deep_is_one_line(tmp_path, name, content, message):
    """A router YAML saved in Latin-1 (and a JSON nested 100,000 deep) were tracebacks."""
    config = tmp_path / name
    config.write_bytes(content)
    with pytest.raises(InputError, match=message) as raised:
        resolve_model(config, None)
    assert str(config) in str(raised.value) and "\n" not in str(raised.value)


def test_resolve_model_accepts_a_group_or_a_model(tmp_path):
    config = tmp_path / "router.yaml"
    config.write_text("model_list: [{model_name: g, litellm_params: {model: openai/a, api_base: 'http://h:1'}}]\n",
                      encoding="utf-8")
    assert resolve_model(config, "g") == resolve_model(config, "openai/a") == resolve_model(config, None) == "openai/a"
