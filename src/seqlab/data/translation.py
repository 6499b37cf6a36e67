"""English-Spanish translation data as ``tf.data`` pipelines, shared by notebooks 04 and 05."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.data.dates import generate_date_pairs
from seqlab.data.download import FAST_MODE_ADVICE, DownloadError
from seqlab.data.translation_batches import (
    MIN_VOCAB_SIZE,
    fitted_bucket_widths,
    make_bucketed_dataset,
    make_dataset,
    make_vectorizer,
    pad_ids,
    pair_lengths,
    vectorize_pairs,
)
from seqlab.data.translation_text import END, START

#: The Anki English-Spanish pairs as the TensorFlow tutorials host them.
ANKI_URL = "http://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip"
#: Pairs in ``spa-eng/spa.txt``.
ANKI_PAIRS = 118_964
#: sha256 of the extracted ``spa-eng/spa.txt`` (not of the zip, whose bytes depend on packing).
ANKI_TEXT_SHA256 = "6ec60e212f812ee3430f7568ea6f33b6fb080e32193c5952e8da0ee8ba45574c"
SAMPLE_FILE = "translation/eng-spa.tsv"
DIRECTIONS = ("eng-spa", "spa-eng")
_ANKI_ADVICE = (FAST_MODE_ADVICE + " Or call load_translation(source='sample') (or "
                "source='dates') directly.")


def read_pairs(path: str | os.PathLike) -> list[tuple[str, str]]:
    """``English<TAB>Spanish[<TAB>attribution]`` lines -> ``[(english, spanish), ...]``."""
    pairs = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0].strip() and parts[1].strip():
            pairs.append((parts[0].strip(), parts[1].strip()))
    return pairs


def resolve_anki_file(downloaded: str | os.PathLike) -> Path:
    """Where ``spa-eng/spa.txt`` is, given what ``keras.utils.get_file(extract=True)`` returned
    (the archive or the extraction folder, depending on the Keras version)."""
    downloaded = Path(downloaded)
    folder = downloaded if downloaded.is_dir() else downloaded.parent
    for candidate in (folder / "spa-eng" / "spa.txt", folder / "spa.txt"):
        if candidate.is_file():
            return candidate
    found = sorted(folder.glob("**/spa-eng/spa.txt")) or sorted(folder.glob("**/spa.txt"))
    if found:
        return found[0]
    raise FileNotFoundError(f"No spa-eng/spa.txt under {folder} (get_file returned {downloaded}).")


def download_anki(*, origin: str = ANKI_URL, cache_dir: str | os.PathLike | None = None,
                  text_sha256: str | None = None) -> Path:
    """Download (once; Keras caches it) and extract the Anki pairs; return the ``spa.txt`` path.

    Args:
        origin: where the zip is.
        cache_dir: Keras's cache folder (default ``$KERAS_HOME`` or ``~/.keras``).
        text_sha256: the sha256 the extracted ``spa.txt`` must have (default: the pinned one).

    Raises:
        DownloadError: the download failed or gave another text than the known one.
    """
    what = f"the Anki English-Spanish pairs from {origin}"
    if cache_dir is not None:
        # get_file silently falls back to /tmp/.keras when the folder is missing.
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    try:
        downloaded = keras.utils.get_file(
            "spa-eng.zip", origin=origin, extract=True,
            cache_dir=None if cache_dir is None else str(cache_dir))
    except Exception as error:  # noqa: BLE001 - every failure gets the same advice
        raise DownloadError(what, error, _ANKI_ADVICE) from error
    path = resolve_anki_file(downloaded)
    text = path.read_bytes()
    expected, digest = text_sha256 or ANKI_TEXT_SHA256, hashlib.sha256(text).hexdigest()
    if digest != expected.lower():
        raise DownloadError(
            what, f"{path.name} is not the known file: expected sha256 {expected}, got "
            f"{digest[:12]}... ({len(text.splitlines()):,} lines, expected {ANKI_PAIRS:,})",
            f"A changed or truncated download is not used: delete {path.parent.parent} and run "
            "again to download it afresh. " + _ANKI_ADVICE)
    return path


def load_pairs(source: str = "sample", *, seed: int = config.SEED,
               num_examples: int | None = None,
               cache_dir: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """Raw ``(english, spanish)`` pairs (for ``"dates"``: ``(human date, ISO date)``)."""
    if source == "dates":
        return generate_date_pairs(10_000 if num_examples is None else num_examples, seed=seed)
    if source == "sample":
        pairs = read_pairs(config.DATA_DIR / SAMPLE_FILE)
    elif source == "anki":
        pairs = read_pairs(download_anki(cache_dir=cache_dir))
    else:
        raise ValueError(f"source must be 'anki', 'sample' or 'dates'; got {source!r}")
    return pairs[:num_examples]


def split_pairs(pairs: Sequence, seed: int = config.SEED) -> tuple[list, list, list]:
    """Shuffle with ``seed`` and cut 80/10/10 into train/valid/test (the same split every time)."""
    order = np.random.default_rng(seed).permutation(len(pairs))
    n_train, n_valid = round(0.8 * len(pairs)), round(0.1 * len(pairs))
    pick = [pairs[i] for i in order]
    return pick[:n_train], pick[n_train:n_train + n_valid], pick[n_train + n_valid:]


@dataclass
class TranslationData:
    """What :func:`load_translation` returns; ``*_pairs`` are raw text pairs, in dataset order.

    ``info["source_length"]`` / ``info["target_length"]``: the padded lengths of the batches
    (training batches: ``info["bucket_widths"]`` when bucketed).
    """

    train: tf.data.Dataset
    valid: tf.data.Dataset
    test: tf.data.Dataset
    source_vectorizer: keras.layers.TextVectorization
    target_vectorizer: keras.layers.TextVectorization
    train_pairs: list[tuple[str, str]]
    valid_pairs: list[tuple[str, str]]
    test_pairs: list[tuple[str, str]]
    source: str
    direction: str
    max_length: int
    batch_size: int
    info: dict = field(default_factory=dict)

    @property
    def source_vocab_size(self) -> int:
        return self.source_vectorizer.vocabulary_size()

    @property
    def target_vocab_size(self) -> int:
        return self.target_vectorizer.vocabulary_size()

    @property
    def start_id(self) -> int:
        return self.target_vectorizer.get_vocabulary().index(START)

    @property
    def end_id(self) -> int:
        return self.target_vectorizer.get_vocabulary().index(END)

    def summary(self) -> str:
        sizes = ", ".join(f"{name} {len(getattr(self, name + '_pairs')):,}"
                          for name in ("train", "valid", "test"))
        return (f"{self.source} ({self.direction}): {sizes} pairs; vocabularies "
                f"{self.source_vocab_size:,} (source) / {self.target_vocab_size:,} (target); "
                f"max length {self.max_length}; dropped as too long: {self.info.get('dropped', 0)}")


def load_translation(source: str = "anki", direction: str = "eng-spa", *,
                     vocab_size: int = 8000, max_length: int = 20, batch_size: int = 64,
                     seed: int = config.SEED, num_examples: int | None = None,
                     cache_dir: str | os.PathLike | None = None,
                     bucket: bool | None = None) -> TranslationData:
    """Load, split 80/10/10, vectorise and batch a translation corpus.

    Batches are ``((source_ids, target_in), target_out)``: the target shifted right and left.

    Args:
        source: ``"anki"`` (download, full mode), ``"sample"`` (``data/translation``, offline)
            or ``"dates"`` (synthetic human date -> ISO date; ``direction`` is ignored).
        direction: ``"eng-spa"`` (default) or ``"spa-eng"``.
        vocab_size: maximum vocabulary per language, padding and ``[UNK]`` included.
        max_length: maximum tokens per sentence, ``[START]``/``[END]`` included (source) and
            per shifted target; longer pairs are dropped.
        seed: the split's seed.
        num_examples: first ``n`` pairs only (``dates``: how many to generate, default 10,000).
        cache_dir: Keras's cache folder for ``"anki"`` (:func:`download_anki`).
        bucket: group the training batches by length; default only for ``"anki"``.

    Raises:
        ValueError: for an unknown ``source`` or ``direction``, a ``max_length`` below 2 or a
            ``vocab_size`` too small for the special tokens.
        seqlab.data.DownloadError: when the Anki pairs cannot be downloaded.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    if max_length < 2:
        raise ValueError(f"max_length must be at least 2 ([START] and [END]); got {max_length}")
    if not isinstance(vocab_size, int) or vocab_size < MIN_VOCAB_SIZE:
        raise ValueError(
            f"vocab_size must be an integer of at least {MIN_VOCAB_SIZE} (padding, [UNK], "
            f"[START], [END] and at least one word); got {vocab_size!r}")
    pairs = load_pairs(source, seed=seed, num_examples=num_examples, cache_dir=cache_dir)
    if source == "dates":
        direction = "date-iso"
    elif direction == "spa-eng":
        pairs = [(spanish, english) for english, spanish in pairs]
    splits = split_pairs(pairs, seed=seed)
    source_vectorizer = make_vectorizer([s for s, _ in splits[0]], vocab_size)
    target_vectorizer = make_vectorizer([t for _, t in splits[0]], vocab_size)
    vectorized = [vectorize_pairs(split, source_vectorizer, target_vectorizer, max_length)
                  for split in splits]
    # Pad every split to the longest pair kept (at most max_length).
    source_length = max([2] + [int(tf.reduce_max(s.row_lengths()))
                               for s, _, kept in vectorized if kept.any()])
    target_length = max([3] + [int(tf.reduce_max(t.row_lengths()))
                               for _, t, kept in vectorized if kept.any()])
    datasets = [make_dataset(pad_ids(sources, source_length), pad_ids(targets, target_length),
                             batch_size, shuffle=index == 0, seed=seed)
                for index, (sources, targets, _) in enumerate(vectorized)]
    if bucket is None:
        bucket = source == "anki"
    widths = None
    if bucket:
        sources, targets, _ = vectorized[0]
        widths = fitted_bucket_widths(pair_lengths(sources, targets), batch_size,
                                      longest=max(source_length, target_length - 1))
        datasets[0] = make_bucketed_dataset(sources, targets, batch_size,
                                            source_length=source_length,
                                            target_length=target_length, seed=seed, widths=widths)
    kept_pairs = [[pair for pair, keep in zip(split, kept, strict=True) if keep]
                  for split, (_, _, kept) in zip(splits, vectorized, strict=True)]
    return TranslationData(
        *datasets, source_vectorizer, target_vectorizer, *kept_pairs, source=source,
        direction=direction, max_length=max_length, batch_size=batch_size,
        info={"pairs": len(pairs), "dropped": sum(int((~kept).sum()) for _, _, kept in vectorized),
              "source_length": source_length, "target_length": target_length - 1,
              "bucket_widths": widths},
    )
