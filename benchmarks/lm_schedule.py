"""Notebook 07's mini-GPT with a warm-up and a cosine, against the constant rate it had before,
from the same initial weights on the same batches of the real text.

    python -m benchmarks.lm_schedule                          # tiny Shakespeare if found, full size
    python -m benchmarks.lm_schedule --text input.txt --steps 900
    python -m benchmarks.lm_schedule --source sample --size fast --steps 4   # offline, seconds

Notebook 07 trained its mini-GPT (post-norm blocks, notebook 05's layers) with Adam at a
constant 1e-3 from the first step; it now warms the rate up linearly from zero over 100 steps
to the same 1e-3 and anneals it along a cosine to zero over ``GPT_EPOCHS`` epochs (GPT-1's
recipe, Radford et al. 2018, §4.1; Keras's ``CosineDecay`` with ``warmup_target``). A schedule
changes no step's arithmetic, so the time per step is the same; what it changes is how many
steps, and so how many of full mode's minutes, the model needs to reach a held-out loss.

The benchmark builds the notebook's GPT at ``--size`` (``seqlab.sizes``, dropout 0.1 as in the
notebook outside FAST mode) twice with the same initial weights and trains them in turn on the
same batches (``--chunk`` shuffled windows of 100 characters drawn once, then
``train_on_batch`` on each by both models, each step timed). Every ``--every`` steps both are
scored on the held-out tenth of the text (``--valid-batches``, 0: all), and once before the
first step, where the two are the same model. Printed: the held-out
loss of both after the same steps, the median step times and characters per second with their
ratio, and how many steps the warm-up path needed to reach the constant rate's last loss.

The text: ``--text`` (the file TFDS's ``tiny_shakespeare`` is built from; by default the copy
this workplace keeps for measuring, ``../shared/data/tinyshakespeare.txt``), or ``--source
sample``, the generated play of FAST mode (what the test runs: no quality is read from it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import keras
import numpy as np

from benchmarks.bucketing import machine
from benchmarks.in_turn import train_in_turn
from seqlab import config, sizes
from seqlab.data import CharVocabulary, load_char_corpus, split_text, tbptt_dataset
from seqlab.lessons.nb07 import MiniGPT

#: The copy of tiny Shakespeare's input.txt kept beside the repository for measuring.
DEFAULT_TEXT = config.REPO_ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"
PATHS = ("constant 1e-3 (notebook 07 before)", "warm-up 100 + cosine (notebook 07 now)")
BATCH_SIZE, STEPS = 32, 100     # notebook 07's streams and window length outside FAST mode
PEAK, WARMUP = 1e-3, 100        # notebook 07's GPT_RATE and warm-up


def schedule(total_steps: int, warmup: int = WARMUP, peak: float = PEAK):
    """Notebook 07's rate: 0 -> ``peak`` linearly over ``warmup`` steps, then a cosine to 0."""
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0, decay_steps=total_steps - warmup, warmup_target=peak,
        warmup_steps=warmup)


def load_text(args, parser) -> tuple[str, str]:
    if args.source == "sample":
        return load_char_corpus("sample", num_chars=60_000), "the generated play (FAST mode's)"
    path = Path(args.text)
    if not path.is_file():
        parser.error(f"--text {path}: no such file; give tiny Shakespeare's input.txt, or "
                     "--source sample for the offline play")
    return path.read_text(encoding="utf-8"), f"{path.name} ({path.stat().st_size:,} bytes)"


def measure(text: str, args) -> dict:
    vocab = CharVocabulary.from_text(text)
    train_text, valid_text = split_text(text, valid_fraction=0.1)
    window = 64 if args.size == "fast" else STEPS   # the notebook's STEPS
    train = tbptt_dataset(vocab.encode(train_text), BATCH_SIZE, window)
    valid = tbptt_dataset(vocab.encode(valid_text), BATCH_SIZE, window)
    if args.valid_batches:
        valid = valid.take(args.valid_batches)
    frequencies = np.bincount(vocab.encode(train_text), minlength=len(vocab)) + 1.0
    unigram = float(-np.mean(np.log((frequencies / frequencies.sum())[vocab.encode(valid_text)])))
    at_size = sizes.settings("07", args.size)
    total = at_size.gpt_epochs * int(train.cardinality())   # the notebook's decay horizon
    keras.utils.set_random_seed(config.SEED)
    models = {}
    for name, rate in zip(PATHS, (PEAK, schedule(max(total, 2 * WARMUP))), strict=True):
        model = MiniGPT(len(vocab), context_length=window,
                        dropout=0.0 if args.size == "fast" else 0.1, **at_size.gpt)
        model.build()
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=rate),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=False)
        models[name] = model
    weights = models[PATHS[0]].get_weights()
    models[PATHS[1]].set_weights(weights)                               # the same start
    iterator = iter(train.shuffle(1000, seed=config.SEED).repeat())
    curve = [(0, *(float(m.evaluate(valid, verbose=0)) for m in models.values()))]  # equal
    times: dict[str, list[float]] = {}
    for done, _ in train_in_turn(models, iterator, args.steps, args.chunk, times):
        if done % args.every == 0 or done == args.steps:
            losses = [float(model.evaluate(valid, verbose=0)) for model in models.values()]
            curve.append((done, *losses))
            print(f"{done}/{args.steps} steps: held-out loss {losses[0]:.4f} / {losses[1]:.4f}",
                  flush=True)
    seconds = {name: float(np.median(values)) for name, values in times.items()}
    target = curve[-1][1]
    reached = next((steps for steps, _, new in curve[1:] if new <= target), None)
    return {"curve": curve, "seconds": seconds, "chars_per_step": BATCH_SIZE * window,
            "reached": reached, "total": total, "unigram": unigram}


def format_table(result: dict, header: str) -> str:
    lines = [header, "", f"| steps | held-out loss: {PATHS[0]} | {PATHS[1]} |", "|---|---|---|"]
    lines += [f"| {steps} | {old:.4f} | {new:.4f} |" for steps, old, new in result["curve"]]
    old, new = (result["seconds"][name] for name in PATHS)
    chars = result["chars_per_step"]
    lines += ["", "| path | ms/step (median) | characters/s |", "|---|---|---|",
              f"| {PATHS[0]} | {1000 * old:.0f} | {chars / old:,.0f} |",
              f"| {PATHS[1]} | {1000 * new:.0f} | {chars / new:,.0f} |",
              f"| **ratio** | | **{old / new:.2f}×** (the same arithmetic per step) |", ""]
    last = result["curve"][-1][0]
    if result["reached"] is None:
        lines.append(f"The warm-up path had not reached the constant rate's loss after {last} "
                     "steps.")
    else:
        lines.append(f"Steps to the constant rate's held-out loss after {last} steps: "
                     f"**{result['reached']}** with the warm-up "
                     f"(**{last / result['reached']:.2f}×** fewer, at the scoring points).")
    lines.append(f"(Cosine horizon: {result['total']:,} steps, the notebook's GPT_EPOCHS. The "
                 f"unigram model's held-out loss, notebook 07's baseline: {result['unigram']:.4f}.)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lm_schedule", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=("text", "sample"), default="text")
    parser.add_argument("--text", default=str(DEFAULT_TEXT), help="tiny Shakespeare's input.txt")
    parser.add_argument("--size", choices=("fast", "class", "full"), default="full")
    parser.add_argument("--steps", type=int, default=600, help="training steps per path")
    parser.add_argument("--chunk", type=int, default=50, help="steps before switching path")
    parser.add_argument("--every", type=int, default=100, help="steps between scorings")
    parser.add_argument("--valid-batches", type=int, default=0, help="0: the whole held-out text")
    args = parser.parse_args(argv)
    text, described = load_text(args, parser)
    result = measure(text, args)
    print(format_table(result, f"`python -m benchmarks.lm_schedule --size {args.size} --steps "
                               f"{args.steps}` on {described}, batch {BATCH_SIZE}; {machine()}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
