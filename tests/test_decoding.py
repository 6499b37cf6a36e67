"""seqlab.decoding: the Translator protocol, greedy and beam search over it; translate()."""

from __future__ import annotations

import inspect

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab import decoding, sizes
from seqlab.data import load_translation
from seqlab.decoding import CachingTranslator, Translator, beam_search, greedy_decode, translate
from seqlab.lessons import nb04
from seqlab.lessons.nb04 import build_rnn_translator
from seqlab.lessons.nb05 import TransformerTranslator

PAD, START, END, A, B = range(5)


class ScriptedModel:
    """Follows the protocol with fixed next-token probabilities, depending on the last token.

    From [START]: A 0.5, B 0.4, END 0.1. After A: END 0.4, A 0.3, B 0.3. After B: END 0.9.
    Greedy says "A END" (p = 0.2); the most likely sentence is "B END" (p = 0.36).
    """

    table = np.full((5, 5), 1e-9)
    table[START, [A, B, END]] = [0.5, 0.4, 0.1]
    table[A, [END, A, B]] = [0.4, 0.3, 0.3]
    table[B, [END, A, B]] = [0.9, 0.05, 0.05]
    table[END, END] = table[PAD, END] = 1.0
    logits = tf.constant(np.log(table), tf.float32)

    def encode(self, source_ids):
        return {"source": tf.cast(source_ids, tf.float32)}

    def decode_step(self, target_prefix_ids, state):
        return tf.gather(self.logits, target_prefix_ids[:, -1]), state, None


def scripted_logits(rows: dict[int, dict[int, float]]) -> tf.Tensor:
    """Next-token logits ``(5, 5)`` from ``{last token: {next token: probability}}``."""
    table = np.full((5, 5), 1e-9)
    for last, row in rows.items():
        table[last, list(row)] = list(row.values())
    table[END, END] = table[PAD, END] = 1.0
    return tf.constant(np.log(table), tf.float32)


class ShortOrLongModel(ScriptedModel):
    """From [START]: END 0.4, A 0.35, B 0.25; after A or B: END 0.9.

    "END" alone has p = 0.4, "A END" p = 0.315, "B END" p = 0.225.
    """

    logits = scripted_logits({START: {END: 0.4, A: 0.35, B: 0.25},
                              A: {END: 0.9, A: 0.05, B: 0.05}, B: {END: 0.9, A: 0.05, B: 0.05}})


class LoopingModel(ScriptedModel):
    """Never says [END]: decoding must stop at max_length anyway."""

    logits = tf.constant(np.log(np.where(np.eye(5)[[A] * 5] > 0, 1.0, 1e-9)), tf.float32)


SOURCE = np.array([[7, 8, 0], [9, 0, 0]], "int32")


def test_greedy_takes_the_locally_best_token():
    tokens, attention = greedy_decode(ScriptedModel(), SOURCE, START, END, max_length=5)
    np.testing.assert_array_equal(tokens, [[A, END], [A, END]])
    assert attention is None


def test_beam_search_finds_the_more_likely_sentence():
    tokens, _, scores = beam_search(ScriptedModel(), SOURCE, START, END, max_length=5,
                                    beam_width=2, length_penalty=0.0)
    np.testing.assert_array_equal(tokens, [[B, END], [B, END]])
    np.testing.assert_allclose(scores, np.log(0.36), rtol=1e-5)


def test_beam_width_one_is_greedy_on_the_scripted_model():
    tokens, _, _ = beam_search(ScriptedModel(), SOURCE, START, END, 5, beam_width=1)
    np.testing.assert_array_equal(tokens, greedy_decode(ScriptedModel(), SOURCE, START, END, 5)[0])


@pytest.mark.parametrize("max_length", [1, 3])
def test_both_decoders_stop_at_max_length_without_end(max_length):
    tokens, _ = greedy_decode(LoopingModel(), SOURCE, START, END, max_length)
    assert tokens.shape == (2, max_length) and np.all(tokens == A)
    tokens, _, _ = beam_search(LoopingModel(), SOURCE, START, END, max_length, beam_width=3)
    assert tokens.shape == (2, max_length) and np.all(tokens == A)
    with pytest.raises(ValueError):
        greedy_decode(LoopingModel(), SOURCE, START, END, 0)
    with pytest.raises(ValueError):
        beam_search(LoopingModel(), SOURCE, START, END, 3, beam_width=0)


def test_length_penalty_changes_the_choice_between_short_and_long():
    # "A END" has p = 0.2 (2 tokens); "A A END"-style continuations are longer and less likely.
    short, _, _ = beam_search(ScriptedModel(), SOURCE[:1], START, END, 6, beam_width=3,
                              length_penalty=0.0)
    assert list(short[0]) == [B, END]


def test_beam_search_by_hand_with_and_without_length_normalisation():
    """Width 2 on ShortOrLongModel. Step 1: "END" (rank 0) ends; "A", "B" live on. Step 2:
    "A END", "B END" end, and with three finished hypotheses (>= 2) the search stops.
    Ranked by log p: "END" (log 0.4 = -0.92) beats "A END" (log 0.315 = -1.16); ranked by
    log p / length ("length_penalty=1"): "A END" (-1.16 / 2 = -0.58) beats "END" (-0.92 / 1)."""
    tokens, _, scores = beam_search(ShortOrLongModel(), SOURCE[:1], START, END, 5,
                                    beam_width=2, length_penalty=0.0)
    np.testing.assert_array_equal(tokens, [[END]])
    np.testing.assert_allclose(scores, [np.log(0.4)], rtol=1e-5)
    tokens, _, scores = beam_search(ShortOrLongModel(), SOURCE[:1], START, END, 5,
                                    beam_width=2, length_penalty=1.0)
    np.testing.assert_array_equal(tokens, [[A, END]])
    np.testing.assert_allclose(scores, [np.log(0.35 * 0.9) / 2], rtol=1e-5)
    # Greedy takes "END" at once (0.4 is the best first token).
    np.testing.assert_array_equal(
        greedy_decode(ShortOrLongModel(), SOURCE[:1], START, END, 5)[0], [[END]])


def test_an_end_counts_only_among_the_top_width_extensions():
    """``(parent, token, score)`` ranked best first, width 2: the [END] at rank 0 ends its
    hypothesis, the one at rank 2 does not (two better hypotheses live on), and the choice
    stops once two extensions continue."""
    ranked = [(0, END, -0.1), (0, A, -0.2), (1, END, -0.3), (1, B, -0.4), (1, A, -0.5)]
    continuing, ending = decoding.beam._choose_extensions(ranked, 2, END, last_step=False)
    assert continuing == [(0, A, -0.2), (1, B, -0.4)]
    assert ending == [(0, END, -0.1)]
    # At the last step the continuing ones end too (they reached max_length).
    continuing, ending = decoding.beam._choose_extensions(ranked, 2, END, last_step=True)
    assert ending == [(0, END, -0.1), (0, A, -0.2), (1, B, -0.4)]
    # An empty slot's extensions (score -inf) are never chosen.
    assert decoding.beam._choose_extensions([(0, A, -1.0), (1, B, -np.inf)], 2, END, False) == (
        [(0, A, -1.0)], [])


# ------------------------------------------------------------------ the Translator protocol


def protocol_methods(protocol) -> list[str]:
    """The method names a protocol of seqlab.decoding (and the protocols it extends) lists."""
    return sorted({name for cls in protocol.__mro__ for name, value in vars(cls).items()
                   if inspect.isfunction(value)
                   and value.__module__ == decoding.protocol.__name__})


def assert_same_parameters(protocol, model) -> None:
    """Each method the protocol lists takes the protocol's parameters, by the same names in
    the same order; any further parameter has a default (``encode(source_ids,
    training=False)`` still answers ``encode(source_ids)``)."""
    for name in protocol_methods(protocol):
        wanted = list(inspect.signature(getattr(protocol, name)).parameters)[1:]  # no self
        have = list(inspect.signature(getattr(model, name)).parameters.values())
        assert [p.name for p in have[: len(wanted)]] == wanted, (type(model).__name__, name)
        extra = [p.name for p in have[len(wanted):] if p.default is inspect.Parameter.empty
                 and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        assert extra == [], (type(model).__name__, name, extra)


@pytest.fixture(scope="module")
def both_translators():
    rnn = build_rnn_translator(12, 10, embedding_dim=8, units=16, attention="luong-dot")
    transformer = TransformerTranslator(12, 10, **sizes.settings("05", "fast").model)
    transformer.build()
    return rnn, transformer


def test_both_translators_satisfy_the_protocol(both_translators):
    rnn, transformer = both_translators
    assert protocol_methods(Translator) == ["decode_step", "encode"]
    assert protocol_methods(CachingTranslator) == ["decode_step", "encode", "init_cache"]
    for model in both_translators:
        assert isinstance(model, Translator)
        assert_same_parameters(Translator, model)
    # Only the Transformer has the optional key/value cache.
    assert isinstance(transformer, CachingTranslator) and not isinstance(rnn, CachingTranslator)
    assert_same_parameters(CachingTranslator, transformer)
    assert isinstance(ScriptedModel(), Translator)
    assert_same_parameters(Translator, ScriptedModel())


def test_an_object_lacking_a_method_is_no_translator():
    class EncoderOnly:
        def encode(self, source_ids):
            return source_ids

    assert not isinstance(EncoderOnly(), Translator)
    assert not isinstance(object(), Translator)


def test_the_parameter_check_catches_a_renamed_or_extra_parameter():
    class Renamed(ScriptedModel):
        def encode(self, ids):
            return ids

    class NeedsMore(ScriptedModel):
        def decode_step(self, target_prefix_ids, state, temperature):
            return None

    for wrong in (Renamed(), NeedsMore()):
        assert isinstance(wrong, Translator)  # isinstance sees names only
        with pytest.raises(AssertionError):
            assert_same_parameters(Translator, wrong)


@pytest.fixture(scope="module")
def random_translator():
    data = load_translation("sample", batch_size=32)
    keras.utils.set_random_seed(3)
    model = build_rnn_translator(data.source_vocab_size, data.target_vocab_size, embedding_dim=8,
                                 units=16, attention="bahdanau")
    return model, data


def test_beam_width_one_equals_greedy_on_a_real_model(random_translator):
    model, data = random_translator
    (source, _), _ = next(iter(data.test))
    greedy, greedy_attention = greedy_decode(model, source, data.start_id, data.end_id, 7)
    beam, beam_attention, _ = beam_search(model, source, data.start_id, data.end_id, 7, beam_width=1)
    width = greedy.shape[1]
    beam = np.pad(beam, ((0, 0), (0, max(0, width - beam.shape[1]))))
    # The two may part only at a tie: an untrained model's next-token logits can differ by less
    # than float32 rounding (beam search adds log-softmax to a running score, greedy takes the
    # argmax of the logits), and then either choice is right. Everywhere else they agree.
    same = np.ones(len(greedy), bool)
    for row in np.flatnonzero(np.any(beam[:, :width] != greedy, axis=1)):
        step = int(np.argmax(beam[row, :width] != greedy[row]))
        prefix = np.array([[data.start_id, *greedy[row, :step]]], np.int32)
        state = model.encode(source[row:row + 1])
        for end in range(1, prefix.shape[1] + 1):  # the decoding protocol, step by step
            logits, state, _ = model.decode_step(prefix[:, :end], state)
        logits = np.asarray(logits)[0]
        assert abs(logits[beam[row, step]] - logits[greedy[row, step]]) < 1e-4 * (
            1 + np.abs(logits).max()), f"row {row} parts at step {step} without a tie"
        same[row] = False
    assert same.mean() > 0.8, "beam width 1 parted from greedy on most sentences"
    np.testing.assert_array_equal(beam[same, :width], greedy[same])
    assert np.all(beam[same, width:] == 0)
    np.testing.assert_allclose(beam_attention[same, :width], greedy_attention[same], atol=1e-5)


def test_greedy_pads_with_zero_after_end_and_attention_matches(random_translator):
    model, data = random_translator
    (source, _), _ = next(iter(data.test))
    tokens, attention = greedy_decode(model, source, data.start_id, data.end_id, 9)
    assert tokens.shape[1] <= 9 and attention.shape == (*tokens.shape, source.shape[1])
    for row, weights in zip(tokens, attention, strict=True):
        ends = np.flatnonzero(row == data.end_id)
        if ends.size:
            assert np.all(row[ends[0] + 1:] == 0)
            assert np.all(weights[ends[0] + 1:] == 0)
        np.testing.assert_allclose(weights[row != 0].sum(-1), 1.0, atol=1e-5)


def test_translate_returns_strings_tokens_and_plot_ready_attention(random_translator):
    model, data = random_translator
    texts = ["Good morning.", "Where is the station?"]
    for method in ("greedy", "beam"):
        result = translate(model, texts, data.source_vectorizer, data.target_vectorizer,
                           method=method, beam_width=3, max_length=6)
        assert len(result) == 2 and all(isinstance(t, str) for t in result.texts)
        source = result.source_tokens[1]  # words missing from the sample vocabulary: [UNK]
        assert len(source) == 7 and source[:4] == ["[START]", "where", "is", "the"]
        assert source[-2:] == ["?", "[END]"]
        for tokens, weights in zip(result.target_tokens, result.attention, strict=True):
            assert len(tokens) <= 6
            assert weights.shape == (len(tokens), 7 if tokens is result.target_tokens[1] else 5)


def test_translate_refuses_an_empty_sentence_quickly(random_translator):
    model, data = random_translator
    for empty in ["", "   ", "—"]:
        with pytest.raises(ValueError, match="empty"):
            translate(model, ["Hello.", empty], data.source_vectorizer, data.target_vectorizer)
    with pytest.raises(ValueError, match="method"):
        translate(model, "Hello.", data.source_vectorizer, data.target_vectorizer, method="sample")


def assert_same_as_the_lesson_loop(model, source, start_id, end_id, max_length):
    """The package's compiled decoder (eager first call, then the traced ``tf.while_loop``)
    gives notebook 04's Python loop's words and, up to each sentence's end, its attention."""
    expected, expected_attention = nb04.greedy_decode(model, source, start_id, end_id,
                                                      max_length)
    for _ in range(2):
        tokens, attention = greedy_decode(model, source, start_id, end_id, max_length)
        np.testing.assert_array_equal(tokens, expected)
        if expected_attention is None:
            assert attention is None
            continue
        # the compiled loop zeroes a sentence's weights after its [END]; the lesson's keeps them
        written = np.cumsum(tokens == end_id, axis=1) - (tokens == end_id) == 0  # up to [END]
        np.testing.assert_allclose(attention[written], expected_attention[written], atol=1e-6)


@pytest.mark.parametrize("attention", ["none", "bahdanau", "luong-dot", "luong-concat"])
def test_the_package_decoder_is_notebook_04s_loop_compiled(attention):
    """Notebook 04's ``greedy_decode`` (its ``greedy_step`` in a Python loop) and
    ``seqlab.decoding.greedy_decode`` (that step in a ``tf.while_loop``) pick the same words,
    for both decoder orders."""
    data = load_translation("sample", batch_size=16)
    keras.utils.set_random_seed(5)
    model = build_rnn_translator(data.source_vocab_size, data.target_vocab_size, embedding_dim=8,
                                 units=16, attention=attention, output_norm=True)
    (source, _), _ = next(iter(data.test))
    assert_same_as_the_lesson_loop(model, source.numpy(), data.start_id, data.end_id, 6)


def test_the_lesson_loop_decodes_notebook_05s_transformer_as_the_package_does():
    """Notebook 05 decodes with notebook 04's loop (its ``decode_step`` recomputes the prefix
    without a cache); the package's decoder uses the cache: the same words."""
    data = load_translation("sample", batch_size=16)
    keras.utils.set_random_seed(6)
    model = TransformerTranslator(data.source_vocab_size, data.target_vocab_size, 2, 16, 4, 32,
                                  dropout=0.0)
    (source, _), _ = next(iter(data.test))
    assert_same_as_the_lesson_loop(model, source.numpy(), data.start_id, data.end_id, 6)
