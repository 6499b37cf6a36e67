"""Character-level text for notebook 07: a generated play script (FAST) or tiny Shakespeare (full).

The generated play has ``tiny_shakespeare``'s layout: ``NAME:`` on its own line, the speech
below, a blank line between speeches.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from seqlab.data.download import load_tfds

PLAY_SEED = 707
#: Where TFDS downloads tiny_shakespeare from (its builder); checked before downloading.
TFDS_DOWNLOAD_HOST = "raw.githubusercontent.com"

CAST = ["MARGOT", "TOBIAS", "ELSPETH", "CORIN", "HALVARD", "NERISSA"]
NOUNS = ["lantern", "harbour", "letter", "garden", "crown", "river", "candle", "door", "ship",
         "bell", "orchard", "mirror", "road", "tower", "winter", "storm", "key", "song"]
ADJECTIVES = ["old", "quiet", "golden", "broken", "distant", "bitter", "gentle", "dark",
              "silver", "cold", "bright", "hollow"]
VERBS = ["keep", "find", "open", "follow", "remember", "carry", "forget", "guard", "answer",
         "mend"]
PLACES = ["by the river", "in the tower", "at the harbour", "under the orchard",
          "before the storm", "behind the door", "across the road"]
ADDRESS = ["my lord", "good friend", "sweet sister", "old man", "fair lady", "brother"]


def _noun_phrase(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"
    return f"the {rng.choice(NOUNS)}"


def _line(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return f"I will {rng.choice(VERBS)} {_noun_phrase(rng)} {rng.choice(PLACES)},"
    if kind == 1:
        return f"Where is {_noun_phrase(rng)}, {rng.choice(ADDRESS)}?"
    if kind == 2:
        return f"You must {rng.choice(VERBS)} {_noun_phrase(rng)} tonight;"
    if kind == 3:
        return f"{_noun_phrase(rng).capitalize()} is {rng.choice(ADJECTIVES)} {rng.choice(PLACES)},"
    if kind == 4:
        return f"Do not {rng.choice(VERBS)} {_noun_phrase(rng)}, {rng.choice(ADDRESS)};"
    return f"And so we {rng.choice(VERBS)} {_noun_phrase(rng)} {rng.choice(PLACES)},"


def _closing_line(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{_noun_phrase(rng).capitalize()} shall {rng.choice(VERBS)} us all!"
    return f"So I {rng.choice(VERBS)} {_noun_phrase(rng)}, {rng.choice(ADDRESS)}."


def generate_play(num_chars: int = 120_000, seed: int = PLAY_SEED) -> str:
    """A seeded play script of about ``num_chars`` characters (speeches of 1–4 lines)."""
    if num_chars < 1:
        raise ValueError(f"num_chars must be a positive integer; got {num_chars}.")
    rng = random.Random(seed)
    speeches, length, speaker = [], 0, None
    while length < num_chars:
        speaker = rng.choice([name for name in CAST if name != speaker])
        lines = [_line(rng) for _ in range(rng.randint(0, 3))] + [_closing_line(rng)]
        speech = speaker + ":\n" + "\n".join(lines) + "\n\n"
        speeches.append(speech)
        length += len(speech)
    return "".join(speeches)


def load_char_corpus(source: str = "tfds", num_chars: int | None = None, data_dir=None) -> str:
    """The whole text as one string.

    Args:
        source: ``"sample"`` generates the play (:func:`generate_play`, FAST mode); ``"tfds"``
            reads ``tiny_shakespeare`` (its three splits joined, about 1.1 million characters).
        num_chars: length to generate (default 120,000) or to keep (default all).
        data_dir: TFDS's data directory (``"tfds"`` only).

    Raises:
        ValueError: for an unknown ``source``.
        seqlab.data.DownloadError: when TFDS cannot download the text.
    """
    if source not in ("sample", "tfds"):
        raise ValueError(f"Unknown text source {source!r}; choose one of 'sample', 'tfds'.")
    if source == "sample":
        return generate_play(num_chars or 120_000)
    parts = load_tfds("tiny_shakespeare", ["train", "validation", "test"],
                      what="the tiny_shakespeare text with TensorFlow Datasets",
                      host=TFDS_DOWNLOAD_HOST, data_dir=data_dir, shuffle_files=False)
    text = "".join(example["text"].decode("utf-8")
                   for part in parts for example in part.as_numpy_iterator())
    return text[:num_chars] if num_chars else text


@dataclass(frozen=True)
class CharVocabulary:
    """Characters ↔ ids. Id 0 is reserved for characters not seen when the vocabulary was made."""

    characters: tuple[str, ...]

    @classmethod
    def from_text(cls, text: str) -> CharVocabulary:
        return cls(("\ufffd", *sorted(set(text))))

    def __len__(self) -> int:
        return len(self.characters)

    def encode(self, text: str) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.characters)}
        return np.fromiter((index.get(c, 0) for c in text), dtype="int32", count=len(text))

    def decode(self, ids) -> str:
        return "".join(self.characters[int(i)] for i in np.asarray(ids).reshape(-1))


def split_text(text: str, valid_fraction: float = 0.1) -> tuple[str, str]:
    """The first ``1 − valid_fraction`` of the text trains; the end is held out."""
    if not 0 < valid_fraction < 1:
        raise ValueError(f"valid_fraction must be between 0 and 1; got {valid_fraction}.")
    cut = int(len(text) * (1 - valid_fraction))
    return text[:cut], text[cut:]


def tbptt_dataset(ids, batch_size: int, steps: int) -> tf.data.Dataset:
    """Next-character ``(x, y)`` int32 batches ``(batch_size, steps)`` for truncated BPTT.

    Slides 001, "Truncated Backpropagation Through Time", option 2: row ``i`` of each batch
    continues row ``i`` of the one before (one contiguous stream per row; do not shuffle).
    """
    ids = np.asarray(ids, dtype="int32")
    if batch_size < 1 or steps < 1:
        raise ValueError(f"batch_size and steps must be positive; got {batch_size}, {steps}.")
    stream_length = (len(ids) - 1) // batch_size
    windows = stream_length // steps
    if windows < 1:
        raise ValueError(f"{len(ids)} characters are too few for {batch_size} streams of at least "
                         f"{steps + 1} characters; lower batch_size or steps.")
    used = windows * steps
    streams = np.stack([ids[i * stream_length: i * stream_length + used + 1]
                        for i in range(batch_size)])                     # (batch, used + 1)
    # (batch, windows, steps) -> (windows, batch, steps): one batch per window
    x = streams[:, :-1].reshape(batch_size, windows, steps).transpose(1, 0, 2)
    y = streams[:, 1:].reshape(batch_size, windows, steps).transpose(1, 0, 2)
    return tf.data.Dataset.from_tensor_slices((x, y))
