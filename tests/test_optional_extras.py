"""The core install leaves out matplotlib, redis and rouge-score: each feature that needs one says in one line which
extra installs it. A missing package is simulated by a None entry in sys.modules (import then raises
ImportError), so the test runs where the package is installed too."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from judge.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[1]


def _missing(monkeypatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _one_line(error: BaseException, extra: str) -> str:
    text = str(error)
    assert "\n" not in text and f"pip install 'argue-judge[{extra}]'" in text
    return text


def test_the_calibration_figures_name_the_plots_extra(monkeypatch):
    from judge.calibration.figures import new_figure

    _missing(monkeypatch, "matplotlib", "matplotlib.figure", "matplotlib.backends", "matplotlib.backends.backend_agg")
    with pytest.raises(ConfigurationError) as raised:
        new_figure(4, 3)
    assert _one_line(raised.value, "plots").startswith("the calibration report's figures: the [plots] extra is not")


def test_a_redis_cache_names_the_redis_extra(monkeypatch):
    from judge.llm.cache.backends import open_backend

    _missing(monkeypatch, "redis")
    with pytest.raises(ConfigurationError) as raised:
        open_backend("redis://127.0.0.1:1/0")  # refused before any connection is tried
    assert _one_line(raised.value, "redis").startswith("a Redis decision cache (--cache redis://...): the [redis] "
                                                        "extra is not installed")


@pytest.mark.parametrize("missing", [("rouge_score", "rouge_score.tokenize"),
                                     ("nltk", "nltk.stem", "nltk.stem.porter")])
def test_the_rouge_baseline_names_the_rouge_extra(monkeypatch, missing):
    from judge.baselines.rouge import RougeScorer, rouge_signature

    _missing(monkeypatch, *missing)
    for start in (RougeScorer, rouge_signature):
        with pytest.raises(ConfigurationError) as raised:
            start()
        assert _one_line(raised.value, "rouge").startswith("the ROUGE baseline: the [rouge] extra is not")


def test_the_core_dependencies_leave_the_extras_out_and_the_test_extra_pulls_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for package, extra in (("matplotlib", "plots"), ("redis", "redis"), ("rouge-score", "rouge")):
        assert package not in core
        assert any(d.startswith(package) for d in extras[extra])
    assert "argue-judge[redis,rouge,plots]" in extras["test"]


def test_the_features_work_with_their_extras_installed():
    """The same calls, with the packages present (the test extra installs them), do not raise."""
    from judge.baselines.rouge import RougeScorer
    from judge.calibration.figures import new_figure

    new_figure(1, 1)
    assert RougeScorer().score("the river barrier", "the river barrier")["ROUGE-1"].fmeasure == 1.0
