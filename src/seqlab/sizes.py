"""The size a notebook trains at, chosen once, and how long the record says it takes.

``"fast"`` (FAST mode: offline data, tiny models), ``"class"`` (the real data, about 15
minutes of training on 2 CPU cores) or ``"full"`` (the notebook's full-size models). The
minutes come from :data:`seqlab.recorded_minutes.MINUTES`, measured on the record's machine;
:func:`probe_speed` scales them to the runtime at hand, and notebooks 04 and 05 choose their
class size from it (:func:`plan`).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from seqlab import config
from seqlab.recorded_minutes import MINUTES, PLAN_SECONDS, RECORD_SPEED

#: The sizes, smallest first.
SIZES = ("fast", "class", "full")
_NAMES = {"class": "the class size", "full": "the full size"}


@dataclass(frozen=True)
class Sizes01:
    """Notebook 01's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    epochs: int
    batch: int


@dataclass(frozen=True)
class Sizes02:
    """Notebook 02's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    frozen_epochs: int
    fine_tuning_epochs: int
    exercise_epochs: int
    batch: int


@dataclass(frozen=True)
class Sizes03:
    """Notebook 03's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    epochs: int
    batch: int
    units: int
    max_tokens: int
    sequence_length: int | None
    adding_steps: int
    adding_epochs: int
    adding_examples: int
    adding_valid: int


@dataclass(frozen=True)
class Sizes04:
    """Notebook 04's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    epochs: int
    embedding_dim: int
    units: int
    train_steps: None
    test_sentences: int | None
    task: str
    max_length: int
    batch_size: int
    learning_rate: float
    output_norm: bool


@dataclass(frozen=True)
class Sizes05:
    """Notebook 05's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    task: str
    examples: int | None
    max_length: int
    epochs: int
    batch: int
    warmup_steps: int
    lr_scale: float
    label_smoothing: float
    train_steps: int | None
    group_by_length: bool
    model: dict
    exercise_epochs: int
    exercise_batches: int | None
    rnn_learning_rate: float
    positions_epochs: int


@dataclass(frozen=True)
class Sizes06:
    """Notebook 06's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    reviews: int | None
    epochs: int
    classifier_epochs: int
    vocab: int
    dim: int
    pairs_batch: int
    rate: float
    fine_tuning_rate: float


@dataclass(frozen=True)
class Sizes07:
    """Notebook 07's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    lstm_epochs: int
    gpt_epochs: int
    embedding: int
    lstm_units: int
    gpt: dict
    num_chars: int | None
    steps: int
    gpt_rate: float
    sample_length: int


@dataclass(frozen=True)
class Sizes08:
    """Notebook 08's numbers at one size (the notebook reads them as ``AT_SIZE.<name>``)."""
    sequence: int
    fine_tune_epochs: int
    mlm_epochs: int
    reviews: int
    vocabulary: int | None
    batch: int
    mlm_rate: float
    fine_tune_rate: float
    control_rate: float
    probe_epochs: int
    probe_rate: float


#: 05's Transformers: N, d_model, h, d_ff, dropout (FAST's, and the class and full size's).
_FAST_TRANSFORMER = {"num_layers": 2, "d_model": 64, "num_heads": 4, "dff": 128, "dropout": 0.0}
_TRANSFORMER = {"num_layers": 2, "d_model": 128, "num_heads": 4, "dff": 512, "dropout": 0.1}

#: What each notebook trains at each size (a parameter set in the notebook wins); the class
#: sizes train within 15 minutes on 2 CPU cores (benchmarks/README.md).
SETTINGS: dict[str, dict[str, Any]] = {
    "01": {
        "fast": Sizes01(epochs=10, batch=32),
        "class": Sizes01(epochs=10, batch=128),
        "full": Sizes01(epochs=10, batch=128),
    },
    "02": {
        "fast": Sizes02(frozen_epochs=10, fine_tuning_epochs=10, exercise_epochs=3, batch=32),
        "class": Sizes02(frozen_epochs=10, fine_tuning_epochs=5, exercise_epochs=3, batch=128),
        "full": Sizes02(frozen_epochs=10, fine_tuning_epochs=5, exercise_epochs=3, batch=128),
    },
    # class: the same model for 2 epochs instead of 5
    "03": {
        "fast": Sizes03(epochs=2, batch=64, units=16, max_tokens=2000, sequence_length=None,
                        adding_steps=20, adding_epochs=2, adding_examples=2000, adding_valid=500),
        "class": Sizes03(epochs=2, batch=128, units=64, max_tokens=20_000, sequence_length=300,
                         adding_steps=50, adding_epochs=10, adding_examples=10_000,
                         adding_valid=2000),
        "full": Sizes03(epochs=5, batch=128, units=64, max_tokens=20_000, sequence_length=300,
                        adding_steps=50, adding_epochs=10, adding_examples=10_000,
                        adding_valid=2000),
    },
    # class: four smaller models, one epoch each (or CLASS_PLANS's smaller ones on a slower
    # runtime), scored on 2,000 test sentences
    # fast: the dates task; class and full: the Anki pairs, with the LayerNorm before the output
    # layer (benchmarks/README.md, "Quality on the real corpus"). batch_size: the global batch
    # the learning rate was tuned for.
    "04": {
        "fast": Sizes04(epochs=4, embedding_dim=32, units=64, train_steps=None, test_sentences=None,
                        task="dates", max_length=12, batch_size=256, learning_rate=0.02,
                        output_norm=False),
        "class": Sizes04(epochs=1, embedding_dim=64, units=128, train_steps=None,
                         test_sentences=2000, task="anki", max_length=20, batch_size=128,
                         learning_rate=0.002, output_norm=True),
        "full": Sizes04(epochs=4, embedding_dim=128, units=256, train_steps=None,
                        test_sentences=None, task="anki", max_length=20, batch_size=128,
                        learning_rate=0.002, output_norm=True),
    },
    # class: the full-size model for 1,358 steps (CLASS_PLANS: smaller on a slower runtime), and
    # notebook 04's RNN at its class size for as many seconds.
    # model: N, d_model, h, d_ff, dropout; rnn: notebook 04's best variant, Adam's rate at batch 128
    "05": {
        "fast": Sizes05(task="dates", examples=7000, max_length=8, epochs=3, batch=128,
                        warmup_steps=100, lr_scale=0.3, label_smoothing=0.0, train_steps=None,
                        group_by_length=False,
                        model=_FAST_TRANSFORMER,
                        exercise_epochs=2, exercise_batches=None, rnn_learning_rate=0.0141421356,
                        positions_epochs=3),
        "class": Sizes05(task="anki", examples=None, max_length=20, epochs=10, batch=128,
                         warmup_steps=1000, lr_scale=1.0, label_smoothing=0.1, train_steps=1358,
                         group_by_length=True,
                         model=_TRANSFORMER,
                         exercise_epochs=1, exercise_batches=100, rnn_learning_rate=0.002,
                         positions_epochs=8),
        "full": Sizes05(task="anki", examples=None, max_length=20, epochs=10, batch=128,
                        warmup_steps=1000, lr_scale=1.0, label_smoothing=0.1, train_steps=None,
                        group_by_length=False,
                        model=_TRANSFORMER,
                        exercise_epochs=1, exercise_batches=100, rnn_learning_rate=0.002,
                        positions_epochs=8),
    },
    # class: a third of the reviews (None: all), 2 skip-gram epochs, 3 per classifier
    "06": {
        "fast": Sizes06(reviews=2500, epochs=3, classifier_epochs=6, vocab=2000, dim=32,
                        pairs_batch=2048, rate=0.02, fine_tuning_rate=0.001),
        "class": Sizes06(reviews=25_000, epochs=2, classifier_epochs=3, vocab=20_000, dim=100,
                         pairs_batch=4096, rate=0.005, fine_tuning_rate=0.0001),
        "full": Sizes06(reviews=None, epochs=5, classifier_epochs=10, vocab=20_000, dim=100,
                        pairs_batch=4096, rate=0.005, fine_tuning_rate=0.0001),
    },
    # class: the whole text, both models smaller, 5 epochs each: still the perplexity race.
    # full: the GPT's warm-up and cosine span 10 epochs (benchmarks/README.md, "Notebook 07's
    # early stopping")
    "07": {
        "fast": Sizes07(lstm_epochs=4, gpt_epochs=4, embedding=32, lstm_units=128,
                        gpt={"d_model": 64, "num_heads": 4, "dff": 128, "num_layers": 2},
                        num_chars=100_000, steps=64, gpt_rate=0.003, sample_length=200),
        "class": Sizes07(lstm_epochs=5, gpt_epochs=5, embedding=64, lstm_units=256,
                         gpt={"d_model": 128, "num_heads": 4, "dff": 512, "num_layers": 2},
                         num_chars=None, steps=100, gpt_rate=0.001, sample_length=500),
        "full": Sizes07(lstm_epochs=20, gpt_epochs=10, embedding=64, lstm_units=512,
                        gpt={"d_model": 256, "num_heads": 8, "dff": 1024, "num_layers": 4},
                        num_chars=None, steps=100, gpt_rate=0.001, sample_length=500),
    },
    # class: one fine-tuning epoch of reviews cut to 128 word pieces. fine_tune_rate: the
    # pretrained network (BERT's 2e-5 to 5e-5, Devlin et al. 2019, §A.3; FAST's tiny network
    # barely pre-trained takes a from-scratch rate); control_rate: its random-weights twin
    "08": {
        "fast": Sizes08(sequence=48, fine_tune_epochs=3, mlm_epochs=3, reviews=2000, vocabulary=500,
                        batch=32, mlm_rate=0.005, fine_tune_rate=0.002, control_rate=0.002,
                        probe_epochs=2, probe_rate=0.01),
        "class": Sizes08(sequence=128, fine_tune_epochs=1, mlm_epochs=0, reviews=2000,
                         vocabulary=None, batch=32, mlm_rate=5e-05, fine_tune_rate=5e-05,
                         control_rate=0.001, probe_epochs=1, probe_rate=0.001),
        "full": Sizes08(sequence=256, fine_tune_epochs=2, mlm_epochs=0, reviews=2000,
                        vocabulary=None, batch=32, mlm_rate=5e-05, fine_tune_rate=5e-05,
                        control_rate=0.001, probe_epochs=1, probe_rate=0.001),
    },
}


#: A class size's training aims at about 15 minutes: a configuration fits when the minutes
#: expected at the runtime's speed are at most this many (at a quarter of the record's speed the
#: smallest of notebook 04 trained 15.7 min).
CLASS_MINUTES = 16

#: Notebooks 04 and 05's class sizes, largest first: what each changes in ``SETTINGS[n]["class"]``
#: (``{}``: nothing, the record's class size). Their seconds of training at the record's speed
#: (:data:`RECORD_SPEED`, the record's probe) come from the record
#: (``benchmarks/results/full_mode.json``, "class_plans", via :mod:`seqlab.recorded_minutes`):
#: each was run and showed its lesson's point on the real pairs (04: attention well above none;
#: 05: both models a non-zero BLEU). 04 trains four translators, one epoch (736 steps) or
#: ``train_steps`` each; 05's RNN trains as many seconds as its Transformer.
_SMALL_TRANSFORMER = {"num_layers": 2, "d_model": 64, "num_heads": 4, "dff": 256, "dropout": 0.1}
CLASS_PLAN_CHANGES: dict[str, list[dict]] = {
    "04": [{}, {"units": 64, "embedding_dim": 32, "train_steps": None},
           {"units": 64, "embedding_dim": 32, "train_steps": 736, "batch_size": 64}],
    "05": [{}, {"train_steps": 1358, "model": _SMALL_TRANSFORMER},
           {"train_steps": 1000, "model": _SMALL_TRANSFORMER},
           {"train_steps": 600, "model": _SMALL_TRANSFORMER}],
}
#: ``{notebook: [(change, seconds at the record's speed), ...]}``, largest first.
CLASS_PLANS: dict[str, list[tuple[dict, float]]] = {
    notebook: list(zip(changes, PLAN_SECONDS[notebook], strict=True))
    for notebook, changes in CLASS_PLAN_CHANGES.items()}


def check_size(size: str) -> str:
    """``size`` if it is one of :data:`SIZES`; else a ``ValueError`` naming them.

    >>> check_size("class")
    'class'
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(map(repr, SIZES))}; got {size!r}")
    return size


def settings(notebook: str, size: str, speed: float | None = None) -> Any:
    """Notebook ``"04"``'s numbers at ``size`` (a copy of :data:`SETTINGS`' entry, a
    :class:`Sizes04`), read by attribute: ``settings("04", "class").units``.

    Args:
        speed: this runtime's :func:`probe_speed`; at the class size of a notebook with
            :data:`CLASS_PLANS`, the configuration :func:`plan` chooses for it (``None``: the
            largest, the record's).

    Raises:
        ValueError: for a notebook or size that has no entry, naming those that do.
    """
    if notebook not in SETTINGS:
        raise ValueError(f"no sizes for notebook {notebook!r}; there are {sorted(SETTINGS)}")
    check_size(size)
    chosen = SETTINGS[notebook][size]
    if size == "class" and notebook in CLASS_PLANS:
        chosen = dataclasses.replace(chosen, **plan(notebook, speed)[0])
    return copy.deepcopy(chosen)


def plan(notebook: str, speed: float | None = None) -> tuple[dict, float]:
    """The class-size configuration of notebook ``"04"`` or ``"05"`` for a runtime, and its minutes.

    The largest of :data:`CLASS_PLANS` whose expected minutes of training (the record's scaled
    by ``RECORD_SPEED / speed``) are at most :data:`CLASS_MINUTES`; the smallest when none is.

    Args:
        speed: the runtime's :func:`probe_speed` in GFLOP/s; ``None``: the record's.

    Returns:
        (what the configuration changes in the class settings, its expected minutes).

    >>> change, minutes = plan("04"); change, round(minutes, 1)
    ({}, 10.7)
    """
    scale = 1.0 if speed is None else RECORD_SPEED / speed
    options = [(change, seconds * scale / 60) for change, seconds in CLASS_PLANS[notebook]]
    return next(((change, minutes) for change, minutes in options if minutes <= CLASS_MINUTES),
                options[-1])


def describe_plan(notebook: str, size: str, speed: float) -> str:
    """The line a notebook prints before training: this runtime's speed and expected minutes.

    At the class size of notebook 04 or 05 it names the configuration :func:`plan` chose, or
    says that none fits :data:`CLASS_MINUTES` and what to choose instead.
    """
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


def has_gpu() -> bool:
    """True when TensorFlow sees a GPU on this runtime."""
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU"))


def available_cpus(cgroup_root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> float:
    """The CPUs this process may use: its CPU affinity, lowered by a cgroup CPU quota (v2
    ``cpu.max``, v1 ``cpu.cfs_quota_us``) where one is set, as on a runtime throttled to a share
    of its cores.

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
        path = path.lstrip("/")
        if controllers == "":
            candidates = [(Path(cgroup_root, path, "cpu.max"), None)]
        elif "cpu" in controllers.split(","):
            folder = Path(cgroup_root, "cpu", path)
            candidates = [(folder / "cpu.cfs_quota_us", folder / "cpu.cfs_period_us")]
        else:
            continue
        for quota_file, period_file in candidates:
            try:
                if period_file is None:
                    quota, period = quota_file.read_text().split()[:2]
                else:
                    quota, period = quota_file.read_text(), period_file.read_text()
                if quota.strip() not in ("max", "-1"):
                    cpus = min(cpus, int(quota) / int(period))
            except (OSError, ValueError):
                continue
    return cpus


class SpeedReading(NamedTuple):
    """What :func:`probe_speed` read: GFLOP/s of its best trial, and the share of the
    :func:`available_cpus` this process had in that trial (near 1 on an idle runtime; another
    busy process lowers it, and with it the GFLOP/s)."""

    gflops: float
    cpu_share: float

    @property
    def reliable(self) -> bool:
        """True when the process had at least :data:`RELIABLE_CPU_SHARE` of its CPUs."""
        return self.cpu_share >= RELIABLE_CPU_SHARE

    @property
    def idle_gflops(self) -> float:
        """The speed with all the CPUs: ``gflops / cpu_share`` for an unreliable reading."""
        return self.gflops if self.reliable else self.gflops / max(self.cpu_share, 0.05)


#: Below this share of its CPUs in the probe's best trial, another process was busy.
RELIABLE_CPU_SHARE = 0.8


def probe_speed(seconds: float = 1.0, n: int = 1024, trials: int = 5) -> SpeedReading:
    """This runtime's speed: GFLOP/s of float32 ``n`` × ``n`` matrix products, the best of
    ``trials`` trials sharing ``seconds`` (as ``timeit`` takes the fastest repetition: a busy
    moment slows some trials, never speeds one up), with the share of the CPUs it had then.

    What the class size is scaled by (:func:`plan`): a runtime half as fast in this probe is
    taken to train half as fast. A CPU quota slows both alike; on real CPUs the ratio is a
    first guess, printed with the plan so that it can be checked.

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
    """Minutes of training the record gives notebook ``"04"`` at ``size`` on 2 CPU cores.

    ``None`` when the record has no such entry (FAST mode is not in it).
    """
    return MINUTES.get(str(notebook), {}).get(size)


def _cpu_time(notebook: str | None, size: str) -> str:
    minutes = expected_minutes(notebook, size) if notebook else None
    if minutes is None:
        return "its time is not recorded"
    amount = "under a minute" if minutes < 1 else f"about {minutes:.0f} min"
    return f"{amount} of training on 2 CPU cores"


def describe(notebook: str | None, size: str, gpu: bool) -> str:
    """The line a notebook prints about the class or full size it trains at and its time."""
    gpu_time = "on a GPU not measured, " if gpu else ""
    return f"Training at {_NAMES[size]}: {gpu_time}{_cpu_time(notebook, size)}."


def choose(value: str | None = None, *, fast: bool | None = None, notebook: str | None = None,
           gpu: bool | None = None) -> str:
    """The size this run trains at: ``"fast"``, ``"class"`` or ``"full"``.

    ``value`` (a notebook's ``SIZE`` parameter) wins; else ``$SEQLAB_SIZE``; else ``"fast"`` in
    FAST mode; else ``"full"`` on a runtime with a GPU and ``"class"`` without one. With
    ``notebook`` (e.g. ``"04"``) outside FAST mode it prints one line: the size, why, and the
    record's minutes.

    Args:
        gpu: whether a GPU is present; ``None`` asks TensorFlow (tests pass it).

    Raises:
        ValueError: for anything but the three sizes (a typo must not start a long run), or
            for ``"class"``/``"full"`` asked for in FAST mode.
    """
    fast = config.is_fast() if fast is None else bool(fast)
    raw = value if value is not None else os.environ.get("SEQLAB_SIZE")
    if raw is None:
        if fast:
            return "fast"
        gpu = has_gpu() if gpu is None else bool(gpu)
        chosen = "full" if gpu else "class"
        if notebook is not None:
            if gpu:
                print("A GPU is here, so the full size: on a GPU its time is not measured (no GPU"
                      f" was lent to this project); {_cpu_time(notebook, 'full')}.")
            else:
                print(f"No GPU on this runtime, so the class size ({_cpu_time(notebook, 'class')}"
                      f'); SIZE = "full" in the parameters cell trains the full size '
                      f"({_cpu_time(notebook, 'full')}).")
        return chosen
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
        print(describe(notebook, chosen, has_gpu() if gpu is None else bool(gpu)))
    return chosen
