"""The downloads ``benchmarks.end_to_end`` runs notebooks on, prepared offline where the real
ones would be: the real ones cannot be reached from this project's machines.

    python -m benchmarks.end_to_end prepare /tmp/e2e --shakespeare input.txt   # calls prepare()

Each stand-in is named as the download it answers:

- ``imdb_reviews``: a TFDS dataset prepared in ``TFDS_DATA_DIR`` (``tfds.dataset_builders.
  store_as_tfds_dataset``: TFDS's own records and reader) with IMDB's split sizes (25,000 train,
  25,000 test, 50,000 unsupervised) of generated text: the English words of the project's
  sample reviews as the most frequent words, then made-up ones, their frequencies following
  Zipf's law, review lengths from a log-normal with IMDB's median (174 words) and mean
  (230) (the figures issue 28 cites; the real reviews cannot be read here), and a few
  label-specific words so the classifiers learn (:func:`prepare_imdb`);
- nnlm-en-dim50: a module of its table size (963,812 × 50, random values) in the TF-Hub cache
  under the real handle (``benchmarks.stand_ins.nnlm_sized_module``), every word of the
  stand-in text in its vocabulary (assumed: that real reviews' words are mostly in the real
  module's 963,812 tokens; not measurable here) (:func:`prepare_hub`);
- ``bert_tiny_en_uncased``: its architecture from random weights, with a word-piece vocabulary
  of its size (30,522) learned from the stand-in text, saved with ``save_to_preset`` where
  kagglehub caches the real preset (:func:`prepare_preset`; ``benchmarks.end_to_end``'s
  start-up file answers the host lookup before the download);
- ``tiny_shakespeare``: not a stand-in — the real text (its builder's download, which the
  project may read but not commit) prepared as TFDS's dataset offline
  (``benchmarks.early_stopping.prepare_tiny_shakespeare``); its early stopping is the real one.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from pathlib import Path

from benchmarks import early_stopping
from benchmarks.stand_ins import NNLM_DIM, NNLM_ROWS, imdb_review_lengths, nnlm_sized_module

#: keras-hub's Kaggle handle of the preset (``BertBackbone.presets``): kagglehub's cache key.
BERT_HANDLE = "keras/bert/keras/bert_tiny_en_uncased/3"
IMDB_SPLITS = {"train": 25_000, "test": 25_000, "unsupervised": 50_000}


def made_up_words(count: int, seed: int = 0) -> list[str]:
    """``count`` distinct made-up words of one to four syllables, shortest first."""
    import numpy as np

    rng = np.random.default_rng(seed)
    onsets, vowels, codas = list("bcdfghjklmnprstvwz"), list("aeiou"), ["", "", "n", "r", "s", "t"]
    words: set[str] = set()
    while len(words) < count:
        syllables = rng.integers(1, 5)
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                          for _ in range(syllables)))
    return sorted(words, key=lambda w: (len(w), w))


def stand_in_vocabulary(count: int = 90_000) -> list[str]:
    """The stand-in text's words, most frequent first: the English words of this project's
    sample reviews (``data/imdb_sample``) by their frequency there, so that the words a notebook
    looks up exist, then made-up words up to ``count``."""
    from seqlab.data.imdb import read_sample_split

    texts, _ = read_sample_split("train")
    english = [w for w, _ in Counter(w for text in texts
                                     for w in re.findall(r"[a-z']+", text.lower())).most_common()]
    made_up = [w for w in made_up_words(count) if w not in set(english)]
    return (english + made_up)[:count]


def sentiment_words() -> list[str]:
    """The 25 negative then the 25 positive label-specific words of the stand-in reviews."""
    words = made_up_words(90_000)[200:225]
    return [f"{w}less" for w in words] + [f"{w}ful" for w in words]


def stand_in_reviews(count: int, words: list[str], seed: int) -> tuple[list[str], list[int]]:
    """``count`` generated reviews of IMDB's lengths (log-normal) and their labels (0/1): words
    drawn by Zipf's law (rank r with probability ∝ 1/r), every 40th word on average one of 25
    label-specific words."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lengths = imdb_review_lengths(count, seed=seed)
    labels = rng.integers(0, 2, count)
    ranks = np.arange(1, len(words) + 1)
    chosen = rng.choice(len(words), size=int(lengths.sum()), p=(1 / ranks) / (1 / ranks).sum())
    vocabulary = np.array(words, dtype=object)
    tokens = vocabulary[chosen]
    signal = rng.random(tokens.size) < 1 / 40
    label_of_token = np.repeat(labels, lengths)
    sentiment = np.array(sentiment_words(), dtype=object).reshape(2, -1)
    tokens[signal] = sentiment[label_of_token[signal], rng.integers(0, 25, int(signal.sum()))]
    ends = np.cumsum(lengths)
    texts = [" ".join(tokens[end - n:end]) + "." for end, n in zip(ends, lengths, strict=True)]
    return texts, [int(label) for label in labels]


def read_real_reviews(path: Path) -> tuple[list[str], list[int]]:
    """The reviews and labels of one ``label<TAB>text`` file (gzip), as ``../shared/data/imdb/``
    holds IMDB's (its README: one review a line, label 1 positive, 0 negative).

    Raises:
        ValueError: for a line that is not ``0`` or ``1``, a tab, then text (its number says which).
    """
    import gzip

    texts, labels = [], []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            label, tab, text = line.rstrip("\n").partition("\t")
            if label not in ("0", "1") or not tab:
                raise ValueError(f"{path}, line {number}: expected 0 or 1, a tab, then the "
                                 f"review; got {line[:40]!r}")
            texts.append(text)
            labels.append(int(label))
    return texts, labels


def prepare_imdb(data_dir: Path, split_sizes: dict[str, int] = IMDB_SPLITS,
                 real: Path | None = None) -> None:
    """TFDS's ``imdb_reviews`` (``plain_text``, 1.0.0) prepared in ``data_dir``: from stand-in
    text, ``split_sizes`` reviews per split (IMDB's by default); with ``real``, a folder holding
    IMDB's ``train.tsv.gz`` and ``test.tsv.gz`` (:func:`read_real_reviews`), the real reviews
    as the ``train`` and ``test`` splits (the unlabelled ``unsupervised`` split, which that copy
    lacks, stays stand-in text of its size)."""
    import tensorflow as tf
    import tensorflow_datasets as tfds

    words = stand_in_vocabulary()
    splits = {}
    for seed, (split, count) in enumerate(split_sizes.items()):
        if real is not None and split != "unsupervised":
            texts, labels = read_real_reviews(Path(real) / f"{split}.tsv.gz")
        else:
            texts, labels = stand_in_reviews(count, words, seed)
        if split == "unsupervised":
            labels = [-1] * count  # as TFDS's unlabelled split
        splits[split] = tf.data.Dataset.from_tensor_slices(
            {"text": tf.constant(texts), "label": tf.constant(labels, tf.int64)})
    what = ("IMDB's real train and test reviews; the unsupervised split stand-in text"
            if real is not None else "seqlab's stand-in of IMDB's sizes and lengths")
    tfds.dataset_builders.store_as_tfds_dataset(
        name="imdb_reviews", config="plain_text", version="1.0.0", data_dir=str(data_dir),
        split_datasets=splits, description=what,
        features=tfds.features.FeaturesDict({"text": tfds.features.Text(),
                                             "label": tfds.features.ClassLabel(num_classes=2)}))


def prepare_hub(cache_dir: Path) -> None:
    """The nnlm-sized stand-in module where ``tensorflow_hub`` caches nnlm-en-dim50."""
    import hashlib

    from seqlab.layers import NNLM_EN_DIM50

    module_dir = cache_dir / hashlib.sha1(NNLM_EN_DIM50.encode("utf8")).hexdigest()
    shutil.rmtree(module_dir, ignore_errors=True)
    shutil.copytree(nnlm_sized_module(stand_in_vocabulary() + sentiment_words()), module_dir)
    (cache_dir / f"{module_dir.name}.descriptor.txt").write_text(
        f"Module: {NNLM_EN_DIM50}\nWritten by benchmarks.stand_in_downloads: a stand-in of its "
        f"table size ({NNLM_ROWS:,} x {NNLM_DIM}, random values)\n", encoding="utf-8")


def prepare_preset(cache_dir: Path) -> None:
    """``bert_tiny_en_uncased``'s architecture from random weights, saved where kagglehub
    caches the preset, its vocabulary learned from the stand-in text."""
    import keras

    from benchmarks.bert import BERT_TINY
    from seqlab.data import build_wordpiece_vocabulary, import_keras_hub

    keras_hub = import_keras_hub()
    texts, _ = stand_in_reviews(2_000, stand_in_vocabulary(), seed=7)
    vocabulary = build_wordpiece_vocabulary(texts, BERT_TINY["vocabulary_size"])
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.BertBackbone(**{**BERT_TINY, "vocabulary_size": len(vocabulary)})
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(tokenizer, sequence_length=512)
    os.environ["KAGGLEHUB_CACHE"] = str(cache_dir)  # kagglehub reads it when asked
    from kagglehub.cache import Cache
    from kagglehub.handle import parse_model_handle

    published = keras_hub.models.BertBackbone.presets["bert_tiny_en_uncased"]["kaggle_handle"]
    if published != f"kaggle://{BERT_HANDLE}":
        raise SystemExit(f"keras-hub now loads {published}: update BERT_HANDLE")
    handle = parse_model_handle(BERT_HANDLE)
    target = Path(Cache().get_path(handle))
    keras_hub.models.BertMaskedLM(backbone, preprocessor).save_to_preset(str(target))
    # kagglehub takes a cached file (keras-hub asks file by file) where its marker says complete
    for file in target.rglob("*"):
        if file.is_file():
            Cache().mark_as_complete(handle, str(file.relative_to(target)))
    Cache().mark_as_complete(handle)


def prepare(folder: Path, shakespeare: Path | None = None, imdb: Path | None = None) -> Path:
    """Every stand-in in ``folder``: ``tfds/``, ``tfhub/``, ``kagglehub/``; with
    ``shakespeare`` (the path of tiny Shakespeare's text), TFDS's ``tiny_shakespeare`` too; with
    ``imdb`` (a folder of IMDB's ``train.tsv.gz`` and ``test.tsv.gz``), ``imdb_reviews``'s
    labelled splits are the real reviews (:func:`prepare_imdb`)."""
    folder = Path(folder)
    prepare_imdb(folder / "tfds", real=imdb)
    prepare_hub(folder / "tfhub")
    prepare_preset(folder / "kagglehub")
    if shakespeare:
        early_stopping.prepare_tiny_shakespeare(shakespeare, folder / "tfds")
    return folder
