"""The Python API: every feature of the command line, callable from a script or a notebook cell.

    judge.evaluate(reports, requests=..., docs=..., nuggets=...)   judge reports, score them   (argue-judge eval)
    judge.score(judgments, nuggets=..., measures=[...])            metrics from judgments alone (argue-judge score)
    judge.calibrate(attributionbench=..., wice=..., nuggets=...)   agreement with human labels  (argue-judge calibrate)
    judge.html_view(judgments, out=...)                            the HTML pages               (argue-judge view)
    judge.run_baselines(reports, nuggets=..., gold=...)            EXAM, ROUGE, pa-BLEU, ...     (eval --with-baselines)
    judge.baseline(name, reports, ...)                             one baseline, its settings   (argue-judge baseline)
    judge.merge(shards, out=...)                                   shards into one run          (argue-judge merge)
    judge.sample(judgments, budget, out=...)                       reports for people to judge  (argue-judge sample)
    judge.read_judgments(path) / judge.write_judgments(path, js)   the judgments format, both ways (import/export)

Every call works inside a running event loop (a Jupyter cell) and outside one; async code awaits
`evaluate_async`, `calibrate_async`, ... instead. Inputs are paths (str or Path) or in-memory objects: the
package's own types (`judge.types.Report`, `Request`, `Document`, `NuggetBank`; `ReportJudgment`) or plain dicts
in the files' formats; objects are read by the same readers as files, so they are checked alike. Arguments are
checked by the rules the command line applies (declared once on the settings objects, judge.settings): a wrong
one raises ValueError or TypeError naming it. The defaults are the command line's, so a call and the command with
the same options judge alike (same thresholds, prompts, passages, cache).

Results carry one `signature` (what their numbers depend on) and convert to rows: `to_records()`, `to_pandas()`
(with pandas installed), `aggregates()`; in a notebook they draw their leaderboard. `measures=` keeps the named
measures (ir_measures' names: "F1", "SentencePrecision", "NuggetRecall(weighted=True)", aliases too); `human=`
adds the prediction-powered estimates from a human sample (docs/ppi.md).

The commands are shells over these calls: `argue-judge eval` makes one `evaluate` call, `argue-judge calibrate`
one `calibrate` call, so an option cannot reach one path and miss the other (tests/test_api.py holds the configs of
both paths equal, and walks every command to the call behind it).

Each call lives in the module of its job (evaluation, scoring, estimates, calibration, view, baselines, shards,
cache, judgments; _inputs turns paths or objects into the files the readers read) and is exported here. Every
example in their docstrings runs as a doctest in CI (tests/test_api.py), in a folder holding the bundled
`examples/` and `argue-out/`, the output of the README's first command. There the judge is
`judge.testing.FakeEndpoint`, a local stand-in for a hosted model that answers by cheap text rules, so the
doctests check what the calls return, not the embedded judge's verdicts. With a real model, drop the endpoint and
pass `model=` as on the command line (the default is the embedded judge).
"""

# The calls of the reference (__all__, the one list of public names: judge/__init__.py's lazy table and its
# TYPE_CHECKING imports are checked against it by tests/test_api.py), and beside them, importable all the same, what
# the commands build their calls from (the calibration's configuration and progress, the baselines' settings and
# rules, the attack choice, the defaults they share) and the types of the input arguments.
from judge.api._inputs import (  # noqa: F401
    DEFAULT_CACHE,
    DocumentInputs,
    JudgmentInputs,
    NuggetInputs,
    PathLike,
    ReportInputs,
    RequestInputs,
)
from judge.api.baselines import (  # noqa: F401
    BASELINE_COLUMNS,
    BASELINE_RULES,
    BASELINE_SETTINGS,
    BaselineScores,
    baseline,
    run_baselines,
)
from judge.api.batch import plan_batch
from judge.api.cache import cache_stats, clear_cache, export_cache, import_cache
from judge.api.calibration import (  # noqa: F401
    CALIBRATED_POLICIES,
    CalibrationProgress,
    calibrate,
    calibrate_async,
    calibration_config,
    choose_attacks,
)
from judge.api.estimates import HumanEstimates
from judge.api.evaluation import EvalOptions, evaluate, evaluate_async  # noqa: F401
from judge.api.judgments import read_judgments, write_judgments
from judge.api.sampling import DrawnSample, sample
from judge.api.scoring import ScoredJudgments, score
from judge.api.shards import merge
from judge.api.view import html_view
from judge.nuggets.api import (  # the nuggets floor's calls, public here with the rest
    accept_candidates,
    create_nuggets,
    create_nuggets_async,
    pool_nuggets,
    pool_nuggets_async,
)

# In the order the reference (docs/python.md, generated) lists them.
__all__ = ["evaluate", "evaluate_async", "score", "calibrate", "calibrate_async", "html_view", "run_baselines",
           "baseline", "merge", "read_judgments", "write_judgments", "cache_stats", "clear_cache", "export_cache",
           "import_cache", "ScoredJudgments", "HumanEstimates", "create_nuggets", "create_nuggets_async",
           "pool_nuggets", "pool_nuggets_async", "accept_candidates", "sample", "DrawnSample", "plan_batch"]
