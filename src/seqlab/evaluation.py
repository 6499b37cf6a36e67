"""Scores for translations: corpus BLEU (sacrebleu), exact-match accuracy, a check that
translations are not nonsense (:func:`diagnose_translations`)."""

from __future__ import annotations

import numbers
import re
from collections import Counter
from collections.abc import Mapping, Sequence

__all__ = ["bleu", "diagnose_translations", "exact_match_accuracy", "format_scores"]


def _check_pair(hypotheses, references, name: str) -> None:
    if isinstance(hypotheses, str) or isinstance(references, str):
        raise TypeError(f"{name} expects lists of sentences, not a single string.")
    if len(hypotheses) == 0:
        raise ValueError(f"{name} needs at least one hypothesis; got none.")
    if len(hypotheses) != len(references):
        raise ValueError(f"{name}: {len(hypotheses)} hypotheses but {len(references)} "
                         "references; they must pair up one to one.")


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (0-100) of ``hypotheses``, one reference per sentence, with sacrebleu
    (Papineni et al. 2002, on ``"13a"`` tokens).

    Raises:
        ValueError: for no hypotheses or a length mismatch.
    """
    import sacrebleu
    _check_pair(hypotheses, references, "bleu")
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


def exact_match_accuracy(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction (0-1) of hypotheses equal to their reference, ignoring surrounding and repeated
    whitespace."""
    _check_pair(hypotheses, references, "exact_match_accuracy")
    same = [h.split() == r.split() for h, r in zip(hypotheses, references, strict=True)]
    return sum(same) / len(same)


def format_scores(scores: Mapping[str, float]) -> str:
    """Scores as a person reads them; any other score with three significant digits under
    its name in words.

    Raises:
        TypeError: if ``scores`` is not a mapping of names to numbers.
        ValueError: if it is empty.

    Example:
        >>> format_scores({"bleu": 62.2428845, "exact_match": 0.1671428})
        'BLEU 62.2, exact match 16.7 %'
    """
    if not isinstance(scores, Mapping):
        raise TypeError(f"format_scores expects a dict of scores, not {type(scores).__name__}.")
    if not scores:
        raise ValueError("format_scores needs at least one score; got an empty dict.")
    parts = []
    for name, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"format_scores: score {name!r} is {value!r}, not a number.")
        if name == "bleu":
            parts.append(f"BLEU {value:.1f}")
        elif name == "exact_match":
            parts.append(f"exact match {100 * value:.1f} %")
        else:
            parts.append(f"{str(name).replace('_', ' ')} {value:.3g}")
    return ", ".join(parts)


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _is_degenerate(text: str) -> bool:
    """One token three times in a row, or making up half of an output of at least four tokens
    (``"¿¿¿¿¿tom."``, ``"de de de de"``)."""
    tokens = _TOKEN.findall(text)
    if any(len(set(tokens[i:i + 3])) == 1 for i in range(len(tokens) - 2)):
        return True
    if len(tokens) < 4:
        return False
    return Counter(tokens).most_common(1)[0][1] * 2 >= len(tokens)


def diagnose_translations(predictions: Sequence[str], references: Sequence[str], *,
                          bleu_score: float | None = None, bleu_floor: float = 5.0,
                          epochs: int | None = None) -> str | None:
    """A message saying why these translations must not be read as a result, or ``None``.

    Over 30 % of outputs repeating one token or empty, under 20 % distinct (from 20 sentences
    up), or BLEU below ``bleu_floor`` mark a model undertrained.

    Args:
        predictions, references: decoded and reference sentences, paired one to one.
        bleu_score: their corpus BLEU if already computed (else computed here).
        bleu_floor: BLEU below which the model counts as undertrained.
        epochs: the epochs the model trained for, to suggest how many more to run.

    Example:
        >>> diagnose_translations(["¿¿¿¿¿¿tom."] * 30, ["tom está aquí."] * 30) is not None
        True
    """
    _check_pair(predictions, references, "diagnose_translations")
    n = len(predictions)
    score = bleu(predictions, references) if bleu_score is None else float(bleu_score)
    reasons = []
    degenerate = sum(_is_degenerate(p) for p in predictions) / n
    if degenerate > 0.3:
        reasons.append(f"{degenerate:.0%} of the outputs repeat one token")
    empty = sum(not p.strip() for p in predictions) / n
    if empty > 0.3:
        reasons.append(f"{empty:.0%} of the outputs are empty")
    distinct = len({" ".join(p.split()) for p in predictions}) / n
    if n >= 20 and distinct < 0.2:
        reasons.append(f"only {distinct:.0%} of the outputs differ from each other")
    if score < bleu_floor:
        reasons.append(f"BLEU {score:.1f} is below {bleu_floor:g}")
    if not reasons:
        return None
    more = f"EPOCHS={2 * epochs} or more" if epochs else "EPOCHS=..."
    return (f"this model is undertrained ({'; '.join(reasons)}): run more epochs ({more}) or "
            "use a GPU, and do not draw conclusions from these outputs.")
