"""seqlab.evaluation: BLEU agrees with sacrebleu; exact match; clear errors."""

from __future__ import annotations

import pytest
import sacrebleu

from seqlab.evaluation import bleu, exact_match_accuracy, format_scores

HYPOTHESES = ["the cat is on the mat", "there is a dog in the garden", "hello world"]
REFERENCES = ["the cat is on the mat", "a dog is in the garden", "hello there world"]


def test_bleu_equals_sacrebleu_corpus_bleu():
    expected = sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES]).score
    assert bleu(HYPOTHESES, REFERENCES) == pytest.approx(expected)
    assert 0 < bleu(HYPOTHESES, REFERENCES) < 100


def test_perfect_and_hopeless_translations():
    assert bleu(REFERENCES, REFERENCES) == pytest.approx(100.0)
    assert bleu(["zzz qqq"] * 3, REFERENCES) == pytest.approx(0.0)


def test_clear_errors():
    with pytest.raises(ValueError, match="2 hypotheses but 3 references"):
        bleu(HYPOTHESES[:2], REFERENCES)
    with pytest.raises(ValueError, match="at least one"):
        bleu([], [])
    with pytest.raises(TypeError):
        bleu("a sentence", "a sentence")
    with pytest.raises(ValueError):
        exact_match_accuracy(["a"], [])


def test_exact_match_ignores_only_whitespace():
    assert exact_match_accuracy(["2021-03-03", " 2021-03-04 "], ["2021-03-03", "2021-03-04"]) == 1.0
    assert exact_match_accuracy(["2021-03-03", "2021-3-4"], ["2021-03-03", "2021-03-04"]) == 0.5


def test_results_file_keeps_models_of_one_mode(tmp_path, monkeypatch):
    from seqlab import config
    from seqlab.results import read_results, write_nmt_result

    monkeypatch.setattr(config, "MODELS_DIR", tmp_path)
    assert read_results("nmt") == {}
    write_nmt_result("rnn-bahdanau", {"dates": {"exact_match": 0.97, "bleu": 95}}, size="fast",
                     details={"units": 64})
    both = write_nmt_result("transformer", {"dates": {"exact_match": 0.99}}, size="fast")
    assert set(both["models"]) == {"rnn-bahdanau", "transformer"}
    assert read_results("nmt")["models"]["rnn-bahdanau"]["scores"]["dates"]["bleu"] == 95.0
    full = write_nmt_result("rnn-luong-dot", {"anki": {"bleu": 30.1}}, size="full")
    assert set(full["models"]) == {"rnn-luong-dot"} and full["size"] == "full"


def test_format_scores_reads_as_words_and_rounded_numbers():
    text = format_scores({"bleu": 62.24288454018226, "exact_match": 0.16714285714285715})
    assert text == "BLEU 62.2, exact match 16.7 %"
    assert format_scores({"exact_match": 1.0, "bleu": 100.00000000000004}) == \
        "exact match 100.0 %, BLEU 100.0"
    assert format_scores({"token_accuracy": 0.81234}) == "token accuracy 0.812"


def test_format_scores_refuses_what_is_not_scores():
    with pytest.raises(TypeError, match="dict of scores"):
        format_scores([62.2, 0.16])
    with pytest.raises(ValueError, match="empty"):
        format_scores({})
    with pytest.raises(TypeError, match="'bleu' is 'high'"):
        format_scores({"bleu": "high"})


def bleu_from_the_definition(candidate: str, reference: str) -> float:
    """Papineni et al. (2002): clipped n-gram precisions (n = 1..4), their geometric mean and the
    brevity penalty, on sacrebleu's 13a tokens (notebook 04 computes it the same way)."""
    import math
    from collections import Counter

    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tokenize = Tokenizer13a()
    cand, ref = tokenize(candidate).split(), tokenize(reference).split()
    logs = []
    for n in range(1, 5):
        cand_ngrams = Counter(tuple(cand[i:i + n]) for i in range(len(cand) - n + 1))
        ref_ngrams = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
        clipped = sum(min(count, ref_ngrams[g]) for g, count in cand_ngrams.items())
        logs.append(math.log(clipped / sum(cand_ngrams.values())))
    brevity = 1.0 if len(cand) > len(ref) else math.exp(1 - len(ref) / len(cand))
    return 100 * brevity * math.exp(sum(logs) / 4)


@pytest.mark.parametrize("candidate, reference", [
    ("mi hermano no quiere tiempo.", "mi hermano no quiere más tiempo."),  # short: BP < 1
    ("el gato está sobre la mesa grande hoy.", "el gato está sobre la mesa."),  # long: BP = 1
    ("la la la casa es roja y la casa", "la casa es roja y la puerta también"),  # clipping
])
def test_bleu_by_the_definition_equals_sacrebleu_and_ours(candidate, reference):
    expected = bleu_from_the_definition(candidate, reference)
    assert sacrebleu.sentence_bleu(candidate, [reference], smooth_method="none").score == \
        pytest.approx(expected)
    # The default smoothing only changes an order with no match; here every order has one.
    assert bleu([candidate], [reference]) == pytest.approx(expected)


def test_clipping_counts_a_word_at_most_as_often_as_the_reference_has_it():
    result = sacrebleu.sentence_bleu("la la la la", ["la casa"], smooth_method="none")
    assert result.precisions[0] == pytest.approx(25.0)  # 1 of 4 unigrams, not 4 of 4
