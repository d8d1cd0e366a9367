"""What `eval --batch --dry-run` prints: the requests, rounds and dollars a batch run of these inputs can take, from
the inputs and the flowchart table alone (nothing is submitted, no model is asked).

Which diamonds a sentence reaches depends on the judge's answers, so the figures are bounds: each sentence is
counted along its longest path through judge.chart.CHART (a diamond asked of each cited document counts once per
document, or once under the `joint` policy), the cache is not consulted (a rerun's answers would come from it at no
cost), and every round is one diamond deeper, plus one for re-asks. The cost is
that of every counted request at the batch price (judge.llm.batch.batch_cost), with the prompt estimated from the
sentence, its cited documents as the passage budget keeps them, and the decision's template, and `max_tokens` out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judge.chart import CHART, Target
from judge.judging import decisions
from judge.judging.prompts import load_template
from judge.judging.walker import within_limit
from judge.llm.batch import batch_cost
from judge.run.inputs import Inputs


@dataclass(frozen=True)
class BatchPlan:
    """The bounds of a batch run: `requests` at most, in at most `rounds` rounds, costing at most `cost` USD at the
    batch price (None when the model has no known price)."""

    reports: int
    sentences: int
    requests: int
    rounds: int
    prompt_tokens: int
    cost: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"reports": self.reports, "sentences": self.sentences, "requests": self.requests,
                "rounds": self.rounds, "prompt_tokens": self.prompt_tokens, "cost": self.cost}


def plan_batch(inputs: Inputs, config: Any) -> BatchPlan:
    """The bounds for judging `inputs` under `config` (judge.run.spec.EvalPlan) with batch jobs."""
    policy = config.judge.policy
    budget = config.judge.passages.max_chars
    templates = {}
    for name in CHART.names:
        template = load_template(decisions.REGISTRY[name].prompt, config.judge.prompts_dir)
        templates[name] = len(template.system) + len(template.user)
    reports = sentences = requests = prompt_chars = 0
    depth = 0
    for entry in inputs.reports.entries:
        report = inputs.reports.read(entry)
        reports += 1
        kept, _ = within_limit(report, inputs.requests[report.request_id], config.judge.truncate)
        for sentence in kept:
            sentences += 1
            cited = tuple(dict.fromkeys(sentence.citations))
            documents = sum(min(len(doc.text), budget) for doc in map(inputs.documents.get, cited) if doc)
            asked, chars, steps = _longest(CHART.start(bool(cited)), len(cited), policy == "joint",
                                           len(sentence.text), documents, templates)
            requests += asked
            prompt_chars += chars
            depth = max(depth, steps)
    prompt_tokens = prompt_chars // 4 + 16 * requests  # as judge.llm.pricing.estimate_cost counts a prompt
    cost = batch_cost(config.model.model, prompt_tokens, requests * config.model.max_tokens)
    return BatchPlan(reports, sentences, requests, depth + 1 if requests else 0, prompt_tokens, cost)


def _longest(target: Target, documents: int, joint: bool, sentence: int, cited_chars: int,
             templates: dict[str, int]) -> tuple[int, int, int]:
    """(requests, prompt characters, diamonds) along the path below `target` that asks the most."""
    if isinstance(target, int):
        return 0, 0, 0
    diamond = CHART.diamond(target)
    if diamond.about == "cited" and not joint:
        asked, chars = documents, documents * (templates[target] + sentence) + cited_chars
    else:
        asked, chars = 1, templates[target] + sentence + (cited_chars if diamond.about != "sentence" else 0)
    below = max((_longest(to, documents, joint, sentence, cited_chars, templates) for _, to, _ in diamond.edges()),
                key=lambda found: (found[0], found[1]))
    return asked + below[0], chars + below[1], 1 + below[2]
