"""Does the embedded model know more than it says? A linear probe on its hidden state, for supports_citation.

    python -m benchmarks.support_probe [--data ../shared/data] [--features DIR] [--train N] [--threads N]
                                       [--held-out calibration/embedded-dev/items.jsonl] [--fit-only]

Asked for its verdict first, the 1.5B embedded model says "supported" to nearly every item; the probability it
gives that word ranks items fairly (ROC AUC about 0.75 on the 350 items of calibration/embedded-dev) and a
threshold on it reaches κ 0.34 held out. This benchmark asks whether a better reading of the same forward pass
does better: for each labelled dev item (AttributionBench and WiCE, strict) it renders today's support prompt
exactly as the judge does (numbered passages, 1500-character budget, quarantine on), runs the model up to the
verdict (`{"verdict": "`), and keeps the final hidden state there (after the last norm: the input of the output
layer, so P(supported) itself is one linear read-out of it) together with P(supported) against "not".

It then fits an L2-regularised logistic regression (standardised features, C chosen by 5-fold cross-validated
log-loss) and a κ-maximising threshold (on the training items' cross-validated scores) on items *outside* the
held-out set, and prints, on the held-out items, ROC AUC and Cohen's κ with its bootstrap 95% interval for
(a) the model's own P(supported) with a threshold fitted on the same training items and (b) the probe.
The held-out items (default: the 350 of calibration/embedded-dev, whose verdicts the shipped threshold was fitted
on) are never used to fit anything here; --exclude leaves more items out of training.

Features go to --features DIR (default caches/support-probe; meta.jsonl, one line per item, and vectors.f32, one
row per line) as they are read, so an interrupted run resumes. About 6.5 s per item on two idle cores. Needs the
`local` extra.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logit
from scipy.stats import rankdata

from benchmarks import ROOT
from judge.calibration.importers import read_attributionbench, read_wice
from judge.calibration.items import CalibrationItem
from judge.calibration.runner import prepare_item
from judge.calibration.stats.agreement import decision_agreement
from judge.calibration.stats.confidence_calibration import fit_threshold
from judge.judging.passages import PassagePolicy
from judge.judging.prompts import load_template

VERDICT_PREFIX = '{"verdict": "'
POLICY = PassagePolicy(max_chars=1500, window_chars=800)
C_GRID = (0.00003, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)
LABELS = ("supported", "not_supported")


# ------------------------------------------------------------------------------------------------- items


def read_ids(path: Path) -> list[str]:
    """Item ids from an items.jsonl (calibrate's output) or a file of one id per line."""
    ids = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            ids.append(json.loads(line)["item_id"] if line.startswith("{") else line)
    return ids


def dev_items(data: Path) -> dict[str, CalibrationItem]:
    """AttributionBench then WiCE (strict) dev items, by id, in file order."""
    pool = read_attributionbench(data / "attributionbench" / "dev.jsonl").items + \
        read_wice(data / "wice" / "claim-dev.jsonl", partial="strict").items
    return {item.item_id: item for item in pool}


def choose_items(by_id: dict[str, CalibrationItem], held_out: list[str], excluded: set[str], n_train: int | None,
                 seed: int) -> list[tuple[str, CalibrationItem]]:
    """(split, item) pairs, held-out and training items interleaved so that any prefix of the work is usable."""
    unknown = [i for i in held_out if i not in by_id]
    if unknown:
        sys.exit(f"--held-out: {len(unknown)} item ids are not in the dev data, e.g. {unknown[0]}")
    evaluation = [by_id[i] for i in held_out]
    left_out = excluded | set(held_out)
    training = [item for item_id, item in by_id.items() if item_id not in left_out]
    random.Random(seed).shuffle(training)
    random.Random(seed + 1).shuffle(evaluation)
    training = training[:n_train] if n_train is not None else training
    order = []
    for k in range(max(len(evaluation), len(training))):
        order += [("eval", evaluation[k])] if k < len(evaluation) else []
        order += [("train", training[k])] if k < len(training) else []
    return order


# ---------------------------------------------------------------------------------------------- features


def extract(order: list[tuple[str, CalibrationItem]], features: Path, threads: int) -> None:
    import llama_cpp

    from judge.llm.embedded.weights import ensure_model_file

    features.mkdir(parents=True, exist_ok=True)
    meta_path, vectors_path = features / "meta.jsonl", features / "vectors.f32"
    done = {json.loads(line)["item_id"] for line in meta_path.open()} if meta_path.exists() else set()
    todo = [(split, item) for split, item in order if item.item_id not in done]
    print(f"features: {len(done)} items read before, {len(todo)} to read", flush=True)
    if not todo:
        return
    llm = llama_cpp.Llama(model_path=str(ensure_model_file()), n_ctx=4096, n_threads=threads, n_batch=512,
                          verbose=False)
    n_vocab, n_embd = llm.n_vocab(), llm.n_embd()
    # Each vector is written before its meta line: a run stopped between the two leaves one row too many.
    if vectors_path.exists():
        with vectors_path.open("r+b") as vectors:
            vectors.truncate(len(done) * n_embd * 4)
    supported, negated = (llm.tokenize(word, add_bos=False, special=True)[0] for word in (b"supported", b"not"))
    template = load_template("supports_citation")
    started = time.perf_counter()
    with meta_path.open("a") as meta, vectors_path.open("ab") as vectors:
        for k, (split, item) in enumerate(todo, 1):
            system, user = (m["content"] for m in template.render(**prepare_item(item, POLICY, withhold=True).values))
            text = (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
                    f"<|im_start|>assistant\n{VERDICT_PREFIX}")
            tokens = llm.tokenize(text.encode(), add_bos=False, special=True)
            llm.n_tokens = 0
            llm.eval(tokens[:-1])
            # Embeddings only for the last token: asking for them on the whole prompt would compute the output
            # layer (152k logits) at every position.
            llama_cpp.llama_set_embeddings(llm._ctx.ctx, True)
            llm.eval(tokens[-1:])
            hidden = np.ctypeslib.as_array(llama_cpp.llama_get_embeddings_ith(llm._ctx.ctx, -1), shape=(n_embd,))
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(n_vocab,))
            llama_cpp.llama_set_embeddings(llm._ctx.ctx, False)
            p_supported = float(expit(float(logits[supported]) - float(logits[negated])))
            vectors.write(hidden.astype(np.float32).tobytes())
            vectors.flush()
            meta.write(json.dumps({"item_id": item.item_id, "split": split, "group": item.group,
                                   "human": item.human_label, "p_supported": p_supported,
                                   "tokens": len(tokens), "dims": n_embd}) + "\n")
            meta.flush()
            if k % 25 == 0 or k == len(todo):
                rate = (time.perf_counter() - started) / k
                print(f"  {k}/{len(todo)} items, {rate:.1f} s each", flush=True)


@dataclass
class Features:
    ids: list[str]
    split: np.ndarray
    group: np.ndarray
    supported: np.ndarray      # human label, 1 = supported
    hidden: np.ndarray         # (n, n_embd)
    model_logit: np.ndarray    # log-odds of P(supported) against "not"


def load_features(features: Path) -> Features:
    meta = [json.loads(line) for line in (features / "meta.jsonl").open()]
    hidden = np.fromfile(features / "vectors.f32", dtype=np.float32)
    dims = meta[0].get("dims", hidden.size // len(meta)) if meta else 0  # features read before "dims" was recorded
    if not meta or hidden.size != len(meta) * dims:
        sys.exit(f"{features}: {len(meta)} items in meta.jsonl but {hidden.size} numbers in vectors.f32; "
                 "rerun without --fit-only to repair an interrupted run")
    hidden = hidden.reshape(len(meta), -1)
    p = np.clip([m["p_supported"] for m in meta], 1e-9, 1 - 1e-9)
    return Features(ids=[m["item_id"] for m in meta], split=np.array([m["split"] for m in meta]),
                    group=np.array([m["group"] or "" for m in meta]),
                    supported=np.array([m["human"] == "supported" for m in meta], dtype=int),
                    hidden=hidden.astype(np.float64), model_logit=np.log(p / (1 - p)))


# ---------------------------------------------------------------------------------------------------- probe


@dataclass
class Probe:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def score(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.scale) @ self.weights + self.bias


def fit_probe(x: np.ndarray, y: np.ndarray, c: float) -> Probe:
    """L2-regularised logistic regression, scikit-learn's convention: minimise C·Σ log-loss + ½‖w‖²."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    sign = 2 * y - 1

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        margin = sign * (z @ w + b)
        value = -c * log_expit(margin).sum() + 0.5 * w @ w
        slope = -c * sign * expit(-margin)
        return value, np.append(z.T @ slope + w, slope.sum())

    theta = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": 2000}).x
    return Probe(mean, scale, theta[:-1], float(theta[-1]))


def folds(y: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """Stratified folds: each class shuffled and dealt round-robin."""
    rng = np.random.default_rng(seed)
    fold_of = np.empty(len(y), dtype=int)
    for label in (0, 1):
        members = rng.permutation(np.flatnonzero(y == label))
        fold_of[members] = np.arange(len(members)) % k
    return [np.flatnonzero(fold_of == f) for f in range(k)]


def cross_validated_scores(x: np.ndarray, y: np.ndarray, c: float, seed: int = 0) -> np.ndarray:
    scores = np.empty(len(y))
    for test in folds(y, 5, seed):
        train = np.setdiff1d(np.arange(len(y)), test)
        scores[test] = fit_probe(x[train], y[train], c).score(x[test])
    return scores


def log_loss(y: np.ndarray, scores: np.ndarray) -> float:
    return float(-np.mean(log_expit((2 * y - 1) * scores)))


def roc_auc(y: np.ndarray, scores: np.ndarray) -> float:
    ranks = rankdata(scores)
    positives = int(y.sum())
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * (len(y) - positives)))


def kappa_threshold(y: np.ndarray, scores: np.ndarray) -> float:
    """The cut (score >= t: supported) that maximises Cohen's κ on these items, chosen by the fitter behind
    `calibrate --fit-threshold` (every item called supported, the score's probability as its confidence)."""
    rule = fit_threshold(human=[LABELS[1 - v] for v in y], judge=[LABELS[0]] * len(y),
                         confidences=list(expit(scores)), yes_no=LABELS, labels=LABELS)
    return float(logit(rule.threshold)) if rule.threshold > 0 else -np.inf


# ------------------------------------------------------------------------------------------------- report


def held_out_line(name: str, f: Features, scores: np.ndarray, threshold: float, seed: int) -> str:
    held = f.split == "eval"
    y, s = f.supported[held], scores[held]
    labels = [LABELS[1 - v] for v in y]
    judged = [LABELS[0] if v else LABELS[1] for v in s >= threshold]
    result = decision_agreement(labels, judged, labels=list(LABELS), n_boot=1000, seed=seed)
    low, high = (float("nan") if v is None else v for v in (result.kappa_ci_low, result.kappa_ci_high))
    wice = f.group[held] == "WiCE"
    per_source = "  ".join(f"{name_} AUC {roc_auc(y[m], s[m]):.3f}" for name_, m in
                           (("AttributionBench", ~wice), ("WiCE", wice)) if 0 < y[m].sum() < m.sum())
    return (f"{name:34s} AUC {roc_auc(y, s):.3f}  accuracy {result.accuracy:.3f}  κ {result.kappa:.3f} "
            f"[{low:.3f}, {high:.3f}]  ({per_source})")


@dataclass
class ReadOut:
    """A linear read-out fitted on the training items: its C, threshold and scores for every item."""
    c: float
    threshold: float
    scores: np.ndarray
    cv_auc: float


def fit_read_out(x: np.ndarray, f: Features, grid: tuple[float, ...], train: np.ndarray | None = None) -> ReadOut:
    """C by 5-fold cross-validated log-loss and the κ-maximising cut on the cross-validated scores, both on the
    training items (`train`, default all of them); the held-out items only receive scores."""
    train = f.split == "train" if train is None else train
    y = f.supported[train]
    losses = {c: log_loss(y, cross_validated_scores(x[train], y, c)) for c in grid}
    best = min(losses, key=losses.__getitem__)
    cv_scores = cross_validated_scores(x[train], y, best)
    return ReadOut(best, kappa_threshold(y, cv_scores), fit_probe(x[train], y, best).score(x), roc_auc(y, cv_scores))


def lexical_features(f: Features, by_id: dict[str, CalibrationItem]) -> np.ndarray:
    """Per item, from the claim and the document text the judge is shown: the share of the claim's content words
    found in it, the claim's numbers and capitalised words missing from it, and the claim's length (log)."""
    rows = []
    for item_id in f.ids:
        item = by_id[item_id]
        shown = prepare_item(item, POLICY, withhold=True).values["document"]
        claim_words, shown_words = _content_words(item.claim), set(_content_words(shown))
        names = set(_NAME.findall(item.claim))
        rows.append([sum(w in shown_words for w in claim_words) / max(1, len(claim_words)),
                     len(set(_NUMBER.findall(item.claim)) - set(_NUMBER.findall(shown))),
                     sum(n.lower() not in shown_words for n in names), np.log1p(len(claim_words))])
    return np.array(rows, dtype=float)


_WORD, _NUMBER, _NAME = re.compile(r"\w+"), re.compile(r"\d+(?:[.,]\d+)?"), re.compile(r"\b[A-Z][a-z]+")
_STOP = frozenset("the a an of to in and or for on at by with from is are was were be been this that it as its "
                  "their his her".split())


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = ROOT
    parser.add_argument("--data", type=Path, default=root.parent / "shared" / "data")
    parser.add_argument("--held-out", type=Path, default=root / "calibration" / "embedded-dev" / "items.jsonl")
    parser.add_argument("--exclude", type=Path, action="append",
                        default=[root / "calibration" / "prompt-ab" / "items.jsonl"])
    parser.add_argument("--train", type=int, default=None, help="training items to read (default: all the rest)")
    parser.add_argument("--features", type=Path, default=root / "caches" / "support-probe",
                        help="where the features are kept between runs (default: in the git-ignored caches/)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fit-only", action="store_true", help="fit on the features read so far; run no model")
    args = parser.parse_args()

    held_out = read_ids(args.held_out)
    excluded = {i for path in args.exclude for i in read_ids(path)}
    by_id = dev_items(args.data)
    if not args.fit_only:
        extract(choose_items(by_id, held_out, excluded, args.train, args.seed), args.features, args.threads)
    f = load_features(args.features)
    train, held = f.split == "train", f.split == "eval"
    if train.sum() < 20 or held.sum() < 20:
        sys.exit(f"too few items to fit and measure: {train.sum()} training, {held.sum()} held out")
    print(f"training items: {train.sum()} ({f.supported[train].sum()} supported); held-out items: {held.sum()} "
          f"({f.supported[held].sum()} supported)")
    print("held out; C, thresholds and weights fitted on the training items only (AUC on those cross-validated):")
    logit = f.model_logit[:, None]
    lexical = lexical_features(f, by_id)
    rows = [("model's P(supported)", logit, (1.0,)),
            ("probe: hidden state + P(supported)", np.column_stack([f.hidden, logit]), C_GRID),
            ("P(supported) + lexical features", np.column_stack([logit, lexical]), (0.01, 0.1, 1.0, 10.0))]
    for name, x, grid in rows:
        read_out = fit_read_out(x, f, grid)
        print(held_out_line(name, f, read_out.scores, read_out.threshold, args.seed)
              + f"  C {read_out.c:g}, training AUC {read_out.cv_auc:.3f}")
    print("learning curve of the probe (first N training items read):")
    order = np.flatnonzero(train)
    for n in sorted({n for n in (100, 200, 400, 800) if n < len(order)} | {len(order)}):
        subset = np.zeros(len(f.ids), dtype=bool)
        subset[order[:n]] = True
        read_out = fit_read_out(np.column_stack([f.hidden, logit]), f, C_GRID, train=subset)
        print(held_out_line(f"  {n} training items", f, read_out.scores, read_out.threshold, args.seed)
              + f"  C {read_out.c:g}")


if __name__ == "__main__":
    main()
