"""The size a notebook trains at: ``"fast"`` (FAST mode: offline data, tiny models),
``"class"`` (the real data, about 15 minutes on 2 CPU cores) or ``"full"``, and the minutes the
record (:data:`seqlab.recorded_minutes.MINUTES`) says it takes.

>>> choose("class", fast=False)
'class'
>>> choose(None, fast=True)
'fast'
"""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from seqlab import config
from seqlab.recorded_minutes import MINUTES, PLAN_SECONDS, RECORD_SPEED

#: The sizes, smallest first.
SIZES = ("fast", "class", "full")

#: 05's Transformers: N, d_model, h, d_ff, dropout.
_TRANSFORMER = {"num_layers": 2, "d_model": 128, "num_heads": 4, "dff": 512, "dropout": 0.1}
_SMALL_TRANSFORMER = {"num_layers": 2, "d_model": 64, "num_heads": 4, "dff": 256, "dropout": 0.1}
_FAST_TRANSFORMER = {"num_layers": 2, "d_model": 64, "num_heads": 4, "dff": 128, "dropout": 0.0}

# One class per notebook: its numbers at one size, read as ``AT_SIZE.<name>`` (or
# ``RUN.settings.<name>``). The defaults are the full size; SETTINGS says what the others change.


@dataclass(frozen=True)
class Sizes01:
    epochs: int = 10
    batch: int = 128


@dataclass(frozen=True)
class Sizes02:
    frozen_epochs: int = 10
    fine_tuning_epochs: int = 5
    exercise_epochs: int = 3
    batch: int = 128


@dataclass(frozen=True)
class Sizes03:
    epochs: int = 5
    batch: int = 128
    units: int = 64
    max_tokens: int = 20_000
    sequence_length: int | None = 300
    adding_steps: int = 50
    adding_epochs: int = 10
    adding_examples: int = 10_000
    adding_valid: int = 2000


@dataclass(frozen=True)
class Sizes04:
    epochs: int = 4
    embedding_dim: int = 128
    units: int = 256
    train_steps: int | None = None
    test_sentences: int | None = None
    task: str = "anki"
    max_length: int = 20
    batch_size: int = 128  # the global batch the learning rate was tuned for
    learning_rate: float = 0.002
    output_norm: bool = True  # LayerNorm before the output layer (the real corpus needs it)


@dataclass(frozen=True)
class Sizes05:
    task: str = "anki"
    examples: int | None = None
    max_length: int = 20
    epochs: int = 10
    batch: int = 128
    warmup_steps: int = 1000
    lr_scale: float = 1.0
    label_smoothing: float = 0.1
    train_steps: int | None = None
    group_by_length: bool = False
    model: dict = field(default_factory=_TRANSFORMER.copy)
    exercise_epochs: int = 1
    exercise_batches: int | None = 100
    rnn_learning_rate: float = 0.002  # notebook 04's best variant: Adam's rate at batch 128
    positions_epochs: int = 8


@dataclass(frozen=True)
class Sizes06:
    reviews: int | None = None
    epochs: int = 5
    classifier_epochs: int = 10
    vocab: int = 20_000
    dim: int = 100
    pairs_batch: int = 4096
    rate: float = 0.005
    fine_tuning_rate: float = 0.0001


@dataclass(frozen=True)
class Sizes07:
    lstm_epochs: int = 20
    gpt_epochs: int = 10  # the GPT's warm-up and cosine span 10 epochs
    embedding: int = 64
    lstm_units: int = 512
    gpt: dict = field(default_factory=lambda: {"d_model": 256, "num_heads": 8, "dff": 1024,
                                               "num_layers": 4})
    num_chars: int | None = None
    steps: int = 100
    gpt_rate: float = 0.001
    sample_length: int = 500


@dataclass(frozen=True)
class Sizes08:
    sequence: int = 256
    fine_tune_epochs: int = 2
    mlm_epochs: int = 0
    reviews: int = 2000
    vocabulary: int | None = None
    batch: int = 32
    mlm_rate: float = 5e-05
    fine_tune_rate: float = 5e-05  # BERT's 2e-5 to 5e-5 (Devlin et al. 2019, §A.3)
    control_rate: float = 3e-04    # the random twin's: a sweep's best (benchmarks/README.md)
    probe_epochs: int = 1
    probe_rate: float = 0.001


#: What each notebook trains at each size (a parameter set in the notebook wins); the class
#: sizes train within 15 minutes on 2 CPU cores (benchmarks/README.md).
SETTINGS: dict[str, dict[str, Any]] = {
    "01": {"fast": Sizes01(batch=32), "class": Sizes01(), "full": Sizes01()},
    "02": {"fast": Sizes02(fine_tuning_epochs=10, batch=32), "class": Sizes02(),
           "full": Sizes02()},
    "03": {"fast": Sizes03(epochs=2, batch=64, units=16, max_tokens=2000, sequence_length=None,
                           adding_steps=20, adding_epochs=2, adding_examples=2000,
                           adding_valid=500),
           "class": Sizes03(epochs=2), "full": Sizes03()},
    # class: four smaller translators, one epoch each, scored on 2,000 test sentences
    "04": {"fast": Sizes04(embedding_dim=32, units=64, task="dates", max_length=12,
                           batch_size=256, learning_rate=0.02, output_norm=False),
           "class": Sizes04(epochs=1, embedding_dim=64, units=128, test_sentences=2000),
           "full": Sizes04()},
    # class: the full-size model for 1,358 steps, then notebook 04's RNN for as many seconds
    "05": {"fast": Sizes05(task="dates", examples=7000, max_length=8, epochs=3, warmup_steps=100,
                           lr_scale=0.3, label_smoothing=0.0, model=_FAST_TRANSFORMER,
                           exercise_epochs=2, exercise_batches=None,
                           rnn_learning_rate=0.0141421356, positions_epochs=3),
           "class": Sizes05(train_steps=1358, group_by_length=True), "full": Sizes05()},
    "06": {"fast": Sizes06(reviews=2500, epochs=3, classifier_epochs=6, vocab=2000, dim=32,
                           pairs_batch=2048, rate=0.02, fine_tuning_rate=0.001),
           "class": Sizes06(reviews=25_000, epochs=2, classifier_epochs=3), "full": Sizes06()},
    "07": {"fast": Sizes07(lstm_epochs=4, gpt_epochs=4, embedding=32, lstm_units=128,
                           gpt={"d_model": 64, "num_heads": 4, "dff": 128, "num_layers": 2},
                           num_chars=100_000, steps=64, gpt_rate=0.003, sample_length=200),
           "class": Sizes07(lstm_epochs=5, gpt_epochs=5, lstm_units=256,
                            gpt={"d_model": 128, "num_heads": 4, "dff": 512, "num_layers": 2}),
           "full": Sizes07()},
    # fast: a tiny network barely pre-trained takes a from-scratch fine-tuning rate
    "08": {"fast": Sizes08(sequence=48, fine_tune_epochs=3, mlm_epochs=3, vocabulary=500,
                           mlm_rate=0.005, fine_tune_rate=0.002, control_rate=0.002,
                           probe_epochs=2, probe_rate=0.01),
           "class": Sizes08(sequence=128, fine_tune_epochs=1), "full": Sizes08()},
}

#: The most minutes a class size's training is expected to take at the runtime's speed.
CLASS_MINUTES = 16

#: Notebooks 04 and 05's class sizes, largest first: what each changes in ``SETTINGS[n]["class"]``
#: and its seconds of training at the record's speed (``benchmarks/results/full_mode.json``,
#: "class_plans"); each showed its lesson's point on the real pairs.
CLASS_PLANS: dict[str, list[tuple[dict, float]]] = {
    notebook: list(zip(changes, PLAN_SECONDS[notebook], strict=True)) for notebook, changes in {
        "04": [{}, {"units": 64, "embedding_dim": 32, "train_steps": None},
               {"units": 64, "embedding_dim": 32, "train_steps": 736, "batch_size": 64}],
        "05": [{}, {"train_steps": 1358, "model": _SMALL_TRANSFORMER},
               {"train_steps": 1000, "model": _SMALL_TRANSFORMER},
               {"train_steps": 600, "model": _SMALL_TRANSFORMER}],
    }.items()}


def check_size(size: str) -> str:
    """``size`` if it is one of :data:`SIZES`; else a ``ValueError`` naming them."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(map(repr, SIZES))}; got {size!r}")
    return size


def settings(notebook: str, size: str, speed: float | None = None) -> Any:
    """A copy of notebook ``"04"``'s :data:`SETTINGS` at ``size``, e.g. ``.units``.

    Args:
        speed: this runtime's :func:`probe_speed`, for :func:`plan` at the class size.

    Raises:
        ValueError: for a notebook or size that has no entry, naming those that do.
    """
    if notebook not in SETTINGS:
        raise ValueError(f"no sizes for notebook {notebook!r}; there are {sorted(SETTINGS)}")
    chosen = SETTINGS[notebook][check_size(size)]
    if size == "class" and notebook in CLASS_PLANS:
        chosen = dataclasses.replace(chosen, **plan(notebook, speed)[0])
    return copy.deepcopy(chosen)


def plan(notebook: str, speed: float | None = None) -> tuple[dict, float]:
    """The largest of :data:`CLASS_PLANS` expected to train within :data:`CLASS_MINUTES` at
    ``speed`` (GFLOP/s; ``None``: the record's), else the smallest: ``(changes, minutes)``.

    >>> change, minutes = plan("04"); change, round(minutes, 1)
    ({}, 10.7)
    """
    scale = 1.0 if speed is None else RECORD_SPEED / speed
    options = [(change, seconds * scale / 60) for change, seconds in CLASS_PLANS[notebook]]
    return next(((change, minutes) for change, minutes in options if minutes <= CLASS_MINUTES),
                options[-1])


def describe_plan(notebook: str, size: str, speed: float) -> str:
    """The line a notebook prints before training: speed, minutes, :func:`plan`'s choice."""
    ratio = speed / RECORD_SPEED
    line = (f"Speed probe: {speed:.0f} GFLOP/s of float32 matrix products, {ratio:.2f} × the "
            f"record's machine ({RECORD_SPEED:.0f} GFLOP/s, a 2-core AMD EPYC)")
    if size == "class" and notebook in CLASS_PLANS:
        _, minutes = plan(notebook, speed)
        chosen = settings(notebook, "class", speed)
        steps = chosen.train_steps
        what = (f"four translators of {chosen.units} units, batch {chosen.batch_size}, "
                f"{f'{steps} steps' if steps else 'one epoch (736 steps)'} each" if notebook == "04"
                else f"a Transformer of d_model {chosen.model['d_model']} for {steps} steps, then"
                " the RNN for as many seconds")
        line += f"; class size here: {what}, expected about {minutes:.0f} min of training."
        if minutes > CLASS_MINUTES:
            line += (f" That is over {CLASS_MINUTES} min even at its smallest configuration: "
                     "choose a GPU runtime (Runtime > Change runtime type), or FAST mode (FAST = "
                     "True) for the lesson on small offline data.")
        return line
    minutes = expected_minutes(notebook, size)
    if minutes is None:
        return line + "."
    return line + f"; expected about {minutes / ratio:.0f} min of training at this speed."


def available_cpus(cgroup_root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> float:
    """The CPUs this process may use: its CPU affinity, lowered by a cgroup v1 or v2 CPU quota.

    >>> available_cpus() > 0
    True
    """
    cpus = float(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                 else os.cpu_count() or 1)
    try:
        lines = Path(proc).read_text().splitlines()
    except OSError:
        return cpus
    for line in lines:  # "hierarchy:controllers:path"; v2 has the empty controller list
        _, controllers, path = line.split(":", 2)
        try:
            if not controllers:
                quota, period = Path(cgroup_root, path.lstrip("/"), "cpu.max").read_text().split()
            elif "cpu" in controllers.split(","):
                folder = Path(cgroup_root, "cpu", path.lstrip("/"))
                quota = (folder / "cpu.cfs_quota_us").read_text()
                period = (folder / "cpu.cfs_period_us").read_text()
            else:
                continue
            if quota.strip() not in ("max", "-1"):
                cpus = min(cpus, int(quota) / int(period))
        except (OSError, ValueError):
            continue
    return cpus


#: Below this share of its CPUs in the probe's best trial, another process was busy.
RELIABLE_CPU_SHARE = 0.8


class SpeedReading(NamedTuple):
    """GFLOP/s of :func:`probe_speed`'s best trial and the share of the CPUs it had then."""
    gflops: float
    cpu_share: float

    @property
    def reliable(self) -> bool:
        return self.cpu_share >= RELIABLE_CPU_SHARE

    @property
    def idle_gflops(self) -> float:
        return self.gflops if self.reliable else self.gflops / max(self.cpu_share, 0.05)


def probe_speed(seconds: float = 1.0, n: int = 1024, trials: int = 5) -> SpeedReading:
    """GFLOP/s of float32 ``n`` × ``n`` matrix products, the best of ``trials`` trials sharing
    ``seconds`` (a busy moment slows some trials, never speeds one up).

    >>> reading = probe_speed(0.05, 64); reading.gflops > 0 and 0 < reading.cpu_share
    True
    """
    import tensorflow as tf
    matrix = tf.random.stateless_normal((n, n), seed=(1, 2))
    tf.linalg.matmul(matrix, matrix).numpy()                 # the first call starts the threads
    cpus, best = available_cpus(), SpeedReading(0.0, 0.0)
    for _ in range(trials):
        products, start, cpu_start = 0, time.perf_counter(), time.process_time()
        while (elapsed := time.perf_counter() - start) < seconds / trials:
            tf.linalg.matmul(matrix, matrix).numpy()
            products += 1
        gflops = 2 * n**3 * products / elapsed / 1e9
        if gflops > best.gflops:
            share = (time.process_time() - cpu_start) / elapsed / cpus
            best = SpeedReading(gflops, min(share, 1.0))
    return best


def expected_minutes(notebook: str, size: str) -> float | None:
    """The record's minutes of training of notebook ``"04"`` at ``size`` (``None``: none)."""
    return MINUTES.get(str(notebook), {}).get(size)


def _cpu_time(notebook: str | None, size: str) -> str:
    minutes = expected_minutes(notebook, size) if notebook else None
    if minutes is None:
        return "its time is not recorded"
    amount = "under a minute" if minutes < 1 else f"about {minutes:.0f} min"
    return f"{amount} of training on 2 CPU cores"


def choose(value: str | None = None, *, fast: bool | None = None, notebook: str | None = None,
           gpu: bool | None = None) -> str:
    """The size this run trains at: ``"fast"``, ``"class"`` or ``"full"``.

    ``value`` (a notebook's ``SIZE``) wins; else ``$SEQLAB_SIZE``; else ``"fast"`` in FAST mode;
    else ``"full"`` with a GPU (``gpu``; ``None`` asks TensorFlow), ``"class"`` without. With
    ``notebook`` (e.g. ``"04"``) it prints the size, why, and the record's minutes.

    Raises:
        ValueError: for anything but the three sizes, or a size that contradicts FAST mode.
    """
    fast = config.is_fast() if fast is None else bool(fast)
    raw = value if value is not None else os.environ.get("SEQLAB_SIZE")
    if raw is None and fast:
        return "fast"
    if gpu is None and (raw is None or notebook is not None):
        import tensorflow as tf
        gpu = bool(tf.config.list_physical_devices("GPU"))
    if raw is None:
        if notebook is not None and gpu:
            print("A GPU is here, so the full size: its time on a GPU is not measured; "
                  f"{_cpu_time(notebook, 'full')}.")
        elif notebook is not None:
            print(f"No GPU on this runtime, so the class size ({_cpu_time(notebook, 'class')}"
                  f'); SIZE = "full" in the parameters cell trains the full size '
                  f"({_cpu_time(notebook, 'full')}).")
        return "full" if gpu else "class"
    chosen = str(raw).strip().lower()
    if chosen not in SIZES:
        raise ValueError(f"SIZE (or SEQLAB_SIZE) must be one of {', '.join(map(repr, SIZES))}; "
                         f"got {raw!r}.")
    if fast and chosen != "fast":
        raise ValueError(f"SIZE = {chosen!r} trains on the real data, but FAST mode is on: set "
                         "FAST = False (or SEQLAB_FAST=0) as well.")
    if not fast and chosen == "fast":
        raise ValueError("SIZE = 'fast' needs FAST mode: set FAST = True (or SEQLAB_FAST=1).")
    if notebook is not None and chosen != "fast":
        gpu_time = "on a GPU not measured, " if gpu else ""
        print(f"Training at the {chosen} size: {gpu_time}{_cpu_time(notebook, chosen)}.")
    return chosen
