"""seqlab.data.length_buckets: reviews regrouped by length lose nothing, keep labels with their
ids, pad each batch only to its longest, reshuffle every epoch, and leave a masked model's
predictions unchanged."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import bucket_by_length
from seqlab.data.length_buckets import sequence_lengths


def padded_reviews(count=300, longest=40, batch_size=32, seed=0):
    """Batches of ``(ids, label)``, ids padded with 0 to ``longest``; label = the review's index."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, longest + 1, count)
    ids = np.zeros((count, longest), np.int64)
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(1, 50, length)
    dataset = tf.data.Dataset.from_tensor_slices((ids, np.arange(count))).batch(batch_size)
    return dataset, ids, lengths


def epoch(dataset):
    return [(x.numpy(), y.numpy()) for x, y in dataset]


def test_every_review_once_with_its_label_and_no_extra_padding():
    dataset, ids, lengths = padded_reviews()
    boundaries = [10, 20, 30]
    batches = epoch(bucket_by_length(dataset, 16, boundaries=boundaries, seed=1))
    seen = np.concatenate([labels for _, labels in batches])
    assert sorted(seen) == list(range(len(ids)))                 # each review exactly once
    for batch_ids, labels in batches:
        real = sequence_lengths(batch_ids).numpy()
        assert batch_ids.shape[1] == real.max()                  # padded to its own longest
        np.testing.assert_array_equal(real, lengths[labels])     # nothing cut
        for row, label in zip(batch_ids, labels, strict=True):   # ids stay with their label
            np.testing.assert_array_equal(row[: lengths[label]], ids[label, : lengths[label]])
        buckets = np.searchsorted(boundaries, real, side="right")
        assert len(set(buckets)) == 1                            # one bucket per batch
    assert sum(len(labels) == 16 for _, labels in batches) >= len(ids) // 16 - len(boundaries) - 1


def test_fixed_widths_and_full_batches_for_xla():
    dataset, ids, lengths = padded_reviews(longest=35)
    bucketed = bucket_by_length(dataset, 16, boundaries=[11, 21, 36], seed=1,
                                pad_to_boundaries=True, drop_remainder=True)
    batches = epoch(bucketed)
    assert len(batches) == int(bucketed.cardinality())
    for batch_ids, labels in batches:
        assert len(labels) == 16 and batch_ids.shape[1] in (10, 20, 35)   # boundary - 1
        assert sequence_lengths(batch_ids).numpy().max() <= batch_ids.shape[1]
    # Each bucket leaves out fewer than one batch of reviews.
    assert len(ids) - 3 * 15 <= 16 * len(batches) <= len(ids)


def test_sequences_of_source_and_target_are_measured_together():
    source = np.array([[1, 2, 0, 0, 0], [3, 0, 0, 0, 0]] * 4)
    target = np.array([[5, 0, 0, 0, 0], [6, 7, 8, 9, 0]] * 4)
    dataset = tf.data.Dataset.from_tensor_slices(((source, target), target)).batch(8)
    shapes = sorted((tuple(s.shape), tuple(t.shape))
                    for (s, t), _ in bucket_by_length(dataset, 4, boundaries=[3], seed=0))
    # The second pair's 4 target tokens put it in the second bucket despite its 1-token source.
    assert shapes == [((4, 1), (4, 4)), ((4, 2), (4, 1))]


def test_the_order_changes_every_epoch():
    dataset, _, _ = padded_reviews()
    bucketed = bucket_by_length(dataset, 16, boundaries=[10, 20, 30], seed=1)
    first, second = ([labels.tolist() for _, labels in epoch(bucketed)] for _ in range(2))
    assert first != second


def test_a_masked_lstm_predicts_the_same_from_bucketed_batches():
    dataset, ids, _ = padded_reviews(count=96, longest=30)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((None,), dtype="int64"),
                              keras.layers.Embedding(50, 8, mask_zero=True),
                              keras.layers.LSTM(6), keras.layers.Dense(1)])
    padded = model.predict(ids, verbose=0)
    for batch_ids, labels in bucket_by_length(dataset, 16, boundaries=[10, 20]):
        # float32 sums over up to 30 steps in another order of batch rows: rounding only
        np.testing.assert_allclose(model.predict_on_batch(batch_ids), padded[labels.numpy()],
                                   rtol=1e-5, atol=1e-6)


def test_bert_reads_the_same_cls_vector_from_bucketed_batches():
    """Notebook 08 groups keras-hub features by their padding_mask: attention masks the padding,
    so the [CLS] vector its classifier reads does not depend on how much padding a batch had."""
    keras_hub = pytest.importorskip("keras_hub")
    _, ids, _ = padded_reviews(count=64, longest=24)
    features = {"token_ids": ids.astype("int32"), "segment_ids": np.zeros_like(ids, "int32"),
                "padding_mask": ids != 0}
    dataset = tf.data.Dataset.from_tensor_slices((features, np.arange(len(ids)))).batch(16)
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=50, num_layers=2, num_heads=2,
                                             hidden_dim=16, intermediate_dim=32,
                                             max_sequence_length=24)

    def cls_vectors(batch):  # (batch, hidden): layer-normalised, so of order 1
        return np.asarray(backbone(batch)["sequence_output"])[:, 0]

    padded = cls_vectors(features)
    widths = set()
    for batch, labels in bucket_by_length(dataset, 16, boundaries=[8, 16]):
        widths.add(batch["token_ids"].shape[1])
        # float32 sums over fewer positions: rounding, about 1e-6 here; attending to the
        # padding instead changes these vectors by about 6e-3 (measured with an all-ones mask)
        np.testing.assert_allclose(cls_vectors(batch), padded[labels.numpy()], rtol=0, atol=1e-5)
    assert min(widths) < ids.shape[1]                            # some batches were cut shorter


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"boundaries": [20, 10]}, "increasing"), ({"boundaries": []}, "increasing"),
    ({"boundaries": [0, 10]}, "increasing"), ({"batch_size": 0}, "positive")])
def test_bad_arguments_say_what_was_expected(kwargs, message):
    dataset, _, _ = padded_reviews(count=8)
    with pytest.raises(ValueError, match=message):
        bucket_by_length(dataset, **{"batch_size": 4, **kwargs})


def test_keras_hub_style_features_are_cut_and_padded_together():
    rng = np.random.default_rng(2)
    lengths = rng.integers(2, 12, 40)
    positions = np.arange(12)[None, :]
    mask = positions < lengths[:, None]
    features = {"token_ids": np.where(mask, rng.integers(1, 30, (40, 12)), 0).astype("int32"),
                "segment_ids": np.zeros((40, 12), "int32"), "padding_mask": mask}
    dataset = tf.data.Dataset.from_tensor_slices((features, np.arange(40))).batch(8)
    seen = []
    for batch, labels in bucket_by_length(dataset, 8, boundaries=[5, 9]):
        widths = {tuple(feature.shape) for feature in batch.values()}
        assert len(widths) == 1                                   # every feature alike
        real = batch["padding_mask"].numpy().sum(axis=1)
        np.testing.assert_array_equal(real, lengths[labels.numpy()])
        assert batch["padding_mask"].shape[1] == real.max()
        np.testing.assert_array_equal(batch["token_ids"].numpy() != 0, batch["padding_mask"].numpy())
        seen += labels.numpy().tolist()
    assert sorted(seen) == list(range(40))


def test_the_dataset_states_its_epoch_length_and_fit_does_not_warn():
    """The cardinality is the number of batches of every epoch (a review's bucket depends only
    on its length), so Keras knows an epoch's length: without it, fit warns "Your input ran out
    of data; interrupting training" at the end of the first epoch."""
    import warnings

    dataset, _, _ = padded_reviews(count=200, longest=40)
    bucketed = bucket_by_length(dataset, 16, boundaries=[10, 20, 30], seed=1)
    assert int(bucketed.cardinality()) == len(epoch(bucketed)) == len(epoch(bucketed))
    model = keras.Sequential([keras.Input((None,), dtype="int64"),
                              keras.layers.Embedding(50, 4, mask_zero=True),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(bucketed.map(lambda x, y: (x, tf.cast(y, "float32"))), epochs=2,
                            verbose=0)
    assert len(history.epoch) == 2
    assert not [w for w in caught if "ran out of data" in str(w.message)]
