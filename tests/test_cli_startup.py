"""`argue-judge score` and `argue-judge merge` never call a model, so they must not pay for litellm and instructor
(seconds of start-up): each runs here in a fresh interpreter, for real, and reports what it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import COMMANDS, app
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MODEL_CLIENTS = ("litellm", "instructor", "judge.llm.client")
# Runs the CLI as `argue-judge` does (judge.cli.app:main), then prints which of the model clients it imported.
PROBE = """
import json, sys
from judge.cli.app import main
sys.argv = ["argue-judge", *sys.argv[1:]]
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code
print(json.dumps({"exit": code, "imported": [m for m in MODULES if m in sys.modules]}))
""".replace("MODULES", repr(MODEL_CLIENTS))


def run_cli(*args: str) -> dict:
    """The command in a fresh interpreter, from this checkout (its `judge` first on the path)."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("startup") / "out"
    with FakeEndpoint(smart_responder) as ep:
        result = CliRunner().invoke(app, [
            "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", ep.api_base, "--api-key", "x", "--cache", str(out.parent / "cache"), "--out", str(out)])
    assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
    return out


def test_score_imports_no_model_client(evaluated, tmp_path):
    ran = run_cli("score", str(evaluated / "judgments.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"),
                  "--out", str(tmp_path / "scored"))
    assert ran == {"exit": 0, "imported": []}
    assert (tmp_path / "scored" / "leaderboard.tsv").read_bytes() == (evaluated / "leaderboard.tsv").read_bytes()


def test_merge_imports_no_model_client(evaluated, tmp_path):
    ran = run_cli("merge", str(evaluated), "--out", str(tmp_path / "merged"))
    assert ran == {"exit": 0, "imported": []}
    assert (tmp_path / "merged" / "scores.tsv").read_bytes() == (evaluated / "scores.tsv").read_bytes()


def test_the_probe_sees_a_model_client_when_one_is_imported():
    """`eval --help` builds the eval command, whose module imports the client: the probe must notice it."""
    assert run_cli("eval", "--help") == {"exit": 0, "imported": list(MODEL_CLIENTS)}


def test_the_root_lists_every_command_and_builds_each():
    listed = CliRunner().invoke(app, ["--help"])
    assert listed.exit_code == 0 and all(f" {name} " in listed.output for name in COMMANDS)
    for name in COMMANDS:
        result = CliRunner().invoke(app, [name, "--help"])
        assert result.exit_code == 0, f"{name}: {result.output}"
