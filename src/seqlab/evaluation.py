"""Scores for translations: corpus BLEU (sacrebleu), exact-match accuracy, and the results file
notebooks 04 and 05 share (``models/nmt_results.json``, through :mod:`seqlab.results`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from seqlab import results


def _check_pair(hypotheses, references, name: str) -> None:
    if isinstance(hypotheses, str) or isinstance(references, str):
        raise TypeError(f"{name} expects lists of sentences, not a single string.")
    if len(hypotheses) == 0:
        raise ValueError(f"{name} needs at least one hypothesis; got none.")
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{name}: {len(hypotheses)} hypotheses but {len(references)} references; "
            "they must pair up one to one."
        )


def bleu(hypotheses: Sequence[str], references: Sequence[str] | Sequence[Sequence[str]], *,
         lowercase: bool = False, tokenize: str = "13a") -> float:
    """Corpus BLEU (0-100) of ``hypotheses`` against ``references`` with sacrebleu.

    Args:
        hypotheses: one translation per sentence.
        references: one reference per sentence, or a list of references per sentence (all
            sentences must then have the same number).
        lowercase / tokenize: passed to ``sacrebleu.corpus_bleu``; ``"13a"`` is the WMT
            standard tokenisation, the one behind published BLEU scores.

    Raises:
        ValueError: for no hypotheses or a length mismatch.
    """
    import sacrebleu

    _check_pair(hypotheses, references, "bleu")
    if all(isinstance(r, str) for r in references):
        streams = [list(references)]
    else:
        counts = {len(r) for r in references}
        if len(counts) != 1:
            raise ValueError("bleu: every sentence needs the same number of references.")
        streams = [list(column) for column in zip(*references, strict=True)]
    result = sacrebleu.corpus_bleu(list(hypotheses), streams, lowercase=lowercase,
                                   tokenize=tokenize)
    return float(result.score)


def exact_match_accuracy(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction (0-1) of hypotheses equal to their reference, ignoring surrounding and repeated
    whitespace."""
    _check_pair(hypotheses, references, "exact_match_accuracy")
    same = sum(" ".join(h.split()) == " ".join(r.split()) for h, r in zip(hypotheses, references, strict=True))
    return same / len(hypotheses)


def read_nmt_results(path: str | Path | None = None) -> dict:
    """The translation results in ``models/nmt_results.json`` (``{}`` if none yet): notebook 04
    writes them, notebook 05 compares with them."""
    return results.read_results("nmt", path)


def write_nmt_result(name: str, scores: Mapping[str, Mapping[str, float]], *, mode: str,
                     details: Mapping | None = None, path: str | Path | None = None) -> dict:
    """Record one model's test scores in ``models/nmt_results.json``; return the whole file.

    Args:
        name: e.g. ``"rnn-bahdanau"`` (notebook 04's best) or ``"transformer"`` (notebook 05).
        scores: per task (``"dates"``, ``"sample"``, ``"anki"``) a dict such as
            ``{"bleu": 31.2, "exact_match": 0.12}``, measured on that task's fixed test split.
        mode: ``"FAST"`` or ``"full"``; results of the other mode are dropped, so a file never
            compares a FAST model with a full one.
        details: anything else worth keeping (configuration, training seconds).
    """
    entry = {
        "scores": {task: {k: float(v) for k, v in values.items()} for task, values in scores.items()},
        **({"details": dict(details)} if details else {}),
    }
    return results.record_result("nmt", ("models", name), entry, mode=mode, path=path)
