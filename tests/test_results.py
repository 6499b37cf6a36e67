"""seqlab.results: the one reader/writer of the results files notebooks hand to each other."""

import json

import pytest

from seqlab import config
from seqlab.results import read_results, record_result, results_path


def test_entries_of_one_mode_accumulate_and_the_other_mode_starts_afresh(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "MODELS_DIR", tmp_path)
    path = tmp_path / "x_results.json"
    assert read_results("x") == {}
    record_result("x", ("frozen",), {"accuracy": 0.7}, size="fast")
    record_result("x", ("models", "rnn"), {"bleu": 12.5}, size="fast")
    both = record_result("x", ("models", "transformer"), {"bleu": 20.0}, size="fast")
    assert both == read_results("x") == json.loads(path.read_text())
    assert both == {"size": "fast", "frozen": {"accuracy": 0.7},
                    "models": {"rnn": {"bleu": 12.5}, "transformer": {"bleu": 20.0}}}
    record_result("x", ("frozen",), {"accuracy": 0.6}, size="fast")  # replaced
    assert read_results("x")["frozen"] == {"accuracy": 0.6}
    class_size = record_result("x", ("models", "rnn"), {"bleu": 20.0}, size="class")
    assert class_size == {"size": "class", "models": {"rnn": {"bleu": 20.0}}}
    full = record_result("x", ("models", "rnn"), {"bleu": 30.0}, size="full")
    assert full == {"size": "full", "models": {"rnn": {"bleu": 30.0}}}


def test_a_bad_size_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "MODELS_DIR", tmp_path)
    with pytest.raises(ValueError, match="size must be one of 'fast', 'class', 'full'"):
        record_result("x", ("a",), {}, size="FAST")
    assert not (tmp_path / "x_results.json").exists()


def test_default_files_live_in_models():
    assert results_path("imdb") == config.MODELS_DIR / "imdb_results.json"
    assert results_path("nmt") == config.MODELS_DIR / "nmt_results.json"
