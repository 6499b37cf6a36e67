"""seqlab.course.notebook: setup(), the Colab check and the GPU choices (kernel side)."""

import importlib.metadata
import os
import re
import subprocess

import pytest

from seqlab import config
from seqlab.course import notebook, tensorflow_startup


@pytest.fixture(autouse=True)
def _keep_seqlab_fast(monkeypatch):
    """setup() writes SEQLAB_FAST into the environment: undo it after each test."""
    monkeypatch.setenv("SEQLAB_FAST", os.environ.get("SEQLAB_FAST", "1"))


def test_setup_reports_versions_and_seeds_everything(capsys):
    import keras
    import numpy as np

    run = notebook.setup(seed=7)
    first = np.random.rand(3)
    notebook.setup(seed=7, quiet=True)
    assert np.array_equal(first, np.random.rand(3))
    assert run.keras == keras.__version__ and run.keras.startswith("3.")
    out = capsys.readouterr().out
    assert "TensorFlow" in out and "Keras 3." in out and "FAST mode" in out


# --------------------------------------------------------------------------------------------
# TensorFlow's start-up lines, held back by setup() (measured lines of TF 2.19, 2.20 and 2.21).
# --------------------------------------------------------------------------------------------

STARTUP_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795554111.007714    9178 port.cc:153] oneDNN custom operations are on. You may "
    "see slightly different numerical results due to floating-point round-off errors from "
    "different computation orders. To turn them off, set the environment variable "
    "`TF_ENABLE_ONEDNN_OPTS=0`.",
    "I0000 00:00:1795554111.008700    9178 cudart_stub.cc:31] Could not find cuda drivers on your "
    "machine, GPU will not be used.",
    "I0000 00:00:1795554111.100458    9178 cpu_feature_guard.cc:227] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild "
    "TensorFlow with the appropriate compiler flags.",
    "2026-11-24 21:10:52.286246: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:467] "
    "Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one "
    "has already been registered",
    "W0000 00:00:1795554652.410788   25457 computation_placer.cc:177] computation placer already "
    "registered. Please check linkage and avoid linking the same target more than once.",
    "2026-11-24 21:32:21.155288: E tensorflow/core/util/util.cc:131] oneDNN supports DT_BOOL only "
    "on platforms with AVX-512. Falling back to the default Eigen-based implementation if present.",
]
CUINIT = ("E0000 00:00:1795554113.813236    9178 cuda_platform.cc:52] failed call to cuInit: "
          "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)")
REAL = "W0000 00:00:1795554113.8 gpu_device.cc:2344] Cannot dlopen some GPU libraries."


@pytest.mark.parametrize("line", STARTUP_LINES)
def test_known_startup_lines_are_noise(line):
    assert tensorflow_startup.is_startup_noise(line, nvidia_device=True)


def test_cuda_failing_is_noise_only_where_there_is_no_nvidia_device():
    assert tensorflow_startup.is_startup_noise(CUINIT, nvidia_device=False)
    assert not tensorflow_startup.is_startup_noise(CUINIT, nvidia_device=True)
    assert not tensorflow_startup.is_startup_noise(REAL, nvidia_device=False)
    assert not tensorflow_startup.is_startup_noise("Epoch 1/3", nvidia_device=False)


def _write_to_stderr_in_block(monkeypatch, level=None, fail=False):
    if level is None:
        monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
    with tensorflow_startup.hide_tensorflow_startup_lines():
        # What C++ does: write straight to file descriptor 2, past Python's sys.stderr.
        os.write(2, "\n".join([*STARTUP_LINES, REAL, STARTUP_LINES[0]]).encode() + b"\n")
        if fail:
            raise ImportError("TensorFlow failed to load")


def test_the_startup_filter_passes_on_every_other_line(monkeypatch, capfd):
    _write_to_stderr_in_block(monkeypatch)
    assert capfd.readouterr().err == REAL + "\n"
    with pytest.raises(ImportError):
        _write_to_stderr_in_block(monkeypatch, fail=True)
    assert capfd.readouterr().err == REAL + "\n"


def test_tf_cpp_min_log_level_0_shows_the_startup_lines(monkeypatch, capfd):
    _write_to_stderr_in_block(monkeypatch, level="0")
    err = capfd.readouterr().err
    assert STARTUP_LINES[1] in err and REAL in err


# --------------------------------------------------------------------------------------------
# The tested version range: one source (seqlab.config), read against the files that state it.
# --------------------------------------------------------------------------------------------


def _pins(path):
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def _lower_bounds(lines):
    bounds = {}
    for line in lines:
        match = re.match(r'\s*"?([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)', line.split("#")[0])
        if match:
            bounds[match[1].lower().replace("_", "-")] = match[2]
    return bounds


def test_tested_floor_is_what_the_constraints_and_the_lower_bounds_say():
    root = config.REPO_ROOT
    pins = _pins(root / ".ci" / "constraints-floor.txt")
    requirements = _lower_bounds((root / "requirements.txt").read_text().splitlines())
    # pyproject's [project] dependencies list (tomllib is Python 3.11+ only).
    pyproject = (root / "pyproject.toml").read_text()
    dependencies = pyproject.split("\ndependencies = [", 1)[1].split("\n]", 1)[0]
    declared = _lower_bounds(dependencies.splitlines())
    for name, floor in config.TESTED_FLOOR.items():
        assert pins[name] == floor, (name, pins)
        short = ".".join(floor.split(".")[:2])
        assert notebook.parse_version(requirements[name]) == notebook.parse_version(floor), short
        assert notebook.parse_version(declared[name]) == notebook.parse_version(floor), short
    # Every other package the constraints pin is bounded at that same version where declared.
    for name, version in pins.items():
        for bounds in (requirements, declared):
            if name in bounds:
                assert notebook.parse_version(bounds[name]) == notebook.parse_version(version), name


def test_colab_pins_are_what_the_config_calls_colab_today():
    pins = _pins(config.REPO_ROOT / ".ci" / "colab-runtime.txt")
    for name, version in config.TESTED_COLAB.items():
        assert pins[name] == version, (name, pins)
    # Colab today lies inside the tested range, so setup() calls it tested.
    for name, version in config.TESTED_COLAB.items():
        assert notebook.version_status(name, version) == notebook.TESTED


@pytest.mark.parametrize(
    ("package", "version", "status"),
    [
        ("tensorflow", "2.18.1", notebook.BELOW_FLOOR),
        ("tensorflow", "2.19.0", notebook.TESTED),
        ("tensorflow", "2.21.3", notebook.TESTED),
        ("tensorflow", "2.22.0rc1", notebook.NEWER),
        ("keras", "3.9.2", notebook.BELOW_FLOOR),
        ("keras", "3.10.0", notebook.TESTED),
        ("keras", "3.15.1", notebook.TESTED),
        ("keras", "3.16.0.dev2026", notebook.NEWER),
    ],
)
def test_version_status_places_a_version_against_the_tested_range(package, version, status):
    assert notebook.version_status(package, version) == status


def test_a_version_string_that_is_not_one_is_rejected_clearly():
    with pytest.raises(ValueError, match="Not a version number"):
        notebook.parse_version("latest")


def test_setup_says_the_running_versions_are_tested(capsys):
    run = notebook.setup(quiet=False)
    out = capsys.readouterr().out
    # The two venvs CI uses (newest and floor) are both inside the range.
    assert run.versions == {"tensorflow": notebook.TESTED, "keras": notebook.TESTED}
    assert "is tested" in out and "below floor" not in out


def test_setup_flags_a_keras_below_the_floor(monkeypatch, capsys):
    import keras

    monkeypatch.setattr(keras, "__version__", "3.8.0")
    run = notebook.setup()
    out = capsys.readouterr().out
    assert run.versions["keras"] == notebook.BELOW_FLOOR
    assert "Keras 3.8.0 is below floor" in out and "keras>=3.10.0" in out


class _Recorder:
    """Stands in for subprocess.run: records each command; ``fails`` makes pip fail."""

    def __init__(self, fails=False):
        self.commands, self.fails = [], fails

    def __call__(self, command, capture_output, text):
        assert capture_output and text  # pip's progress and warnings stay out of the cell
        self.commands.append(command)
        return subprocess.CompletedProcess(command, int(self.fails), "",
                                           "ERROR: No matching distribution" if self.fails else "")


_REAL_VERSION = importlib.metadata.version


def _installed_seqlab(monkeypatch, installed):
    def fake(name):
        if name == "seqlab" and not installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return _REAL_VERSION(name)

    monkeypatch.setattr(importlib.metadata, "version", fake)


def test_colab_with_an_old_tensorflow_stops_with_one_message_and_installs_nothing():
    run = _Recorder()
    with pytest.raises(notebook.UnsupportedRuntimeError) as caught:
        notebook.prepare_colab(versions={"tensorflow": "2.17.1", "keras": "3.4.1"}, run=run,
                               imported=set())
    assert run.commands == []
    message = str(caught.value)
    assert "TensorFlow 2.17.1" in message and ">= 2.19.0" in message
    assert "Runtime > Change runtime type" in message


def test_colab_with_another_commits_checkout_stops_before_installing_anything(tmp_path):
    pinned, other = "a" * 40, "b" * 40
    (tmp_path / "seqlab" / ".git").mkdir(parents=True)
    (tmp_path / "seqlab" / ".git" / "HEAD").write_text(other + "\n")
    run = _Recorder()
    with pytest.raises(notebook.UnsupportedRuntimeError) as caught:
        notebook.prepare_colab(str(tmp_path / "seqlab"), commit=pinned,
                               versions={"tensorflow": "2.20.0", "keras": "3.13.2"}, run=run)
    assert run.commands == []
    assert f"holds {other}, but this notebook was built with seqlab's commit aaaaaaaaaaaa" in str(
        caught.value)
    assert "Disconnect and delete runtime" in str(caught.value)
    (tmp_path / "seqlab" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")  # a branch
    with pytest.raises(notebook.UnsupportedRuntimeError, match="holds no seqlab commit"):
        notebook.prepare_colab(str(tmp_path / "seqlab"), commit=pinned, run=run)


def test_colab_shows_pips_output_only_when_it_fails(monkeypatch):
    _installed_seqlab(monkeypatch, installed=False)
    with pytest.raises(notebook.UnsupportedRuntimeError) as caught:
        notebook.prepare_colab(versions={"tensorflow": "2.20.0", "keras": "3.13.2"},
                               run=_Recorder(fails=True), imported=set())
    message = str(caught.value)
    assert message.startswith("pip could not install seqlab's needs; it said:")
    assert "ERROR: No matching distribution" in message and "run this cell again" in message


def test_colab_with_an_old_keras_upgrades_keras_alone(monkeypatch, capsys):
    _installed_seqlab(monkeypatch, installed=False)
    run = _Recorder()
    notebook.prepare_colab("checkout", versions={"tensorflow": "2.19.0", "keras": "3.8.0"},
                           run=run, imported=set())
    keras_upgrade, install = run.commands
    assert keras_upgrade[-1] == "keras>=3.10.0"
    assert not any("tensorflow" in part for part in keras_upgrade)
    # seqlab is installed with the runtime's TensorFlow pinned: pip can never replace it.
    assert install[-3:] == ["-e", "checkout", "tensorflow==2.19.0"]
    assert "upgraded Keras alone" in capsys.readouterr().out


def test_colab_with_an_old_keras_already_imported_asks_for_a_restart(monkeypatch):
    _installed_seqlab(monkeypatch, installed=False)
    run = _Recorder()
    with pytest.raises(notebook.UnsupportedRuntimeError, match="Restart session"):
        notebook.prepare_colab(versions={"tensorflow": "2.20.0", "keras": "3.8.0"}, run=run,
                               imported={"keras"})
    assert len(run.commands) == 1 and run.commands[0][-1] == "keras>=3.10.0"


def test_colab_inside_the_range_only_installs_seqlab_once(monkeypatch):
    _installed_seqlab(monkeypatch, installed=False)
    run = _Recorder()
    notebook.prepare_colab(versions={"tensorflow": "2.21.0", "keras": "3.15.1"}, run=run,
                           imported={"keras"})
    assert [c[-3:] for c in run.commands] == [["-e", "seqlab", "tensorflow==2.21.0"]]
    _installed_seqlab(monkeypatch, installed=True)
    run = _Recorder()
    notebook.prepare_colab(versions={"tensorflow": "2.21.0", "keras": "3.15.1"}, run=run,
                           imported={"keras"})
    assert run.commands == []


# --------------------------------------------------------------------------------------------
# GPU choices, with fake device details (no GPU here).
# --------------------------------------------------------------------------------------------

T4 = {"device_name": "Tesla T4", "compute_capability": (7, 5)}
A100 = {"device_name": "NVIDIA A100-SXM4-40GB", "compute_capability": (8, 0)}


@pytest.mark.parametrize(
    ("devices", "requested", "policy", "because"),
    [
        ([], "off", "float32", "opt-in"),
        ([A100], "off", "float32", "opt-in"),                 # a GPU changes nothing by itself
        ([T4], "bfloat16", "mixed_bfloat16", "not measured"),
        ([], "float16", "mixed_float16", "CPU"),
        ([T4], "mixed_float16", "mixed_float16", "Tesla T4"),
    ],
)
def test_mixed_precision_is_opt_in(devices, requested, policy, because):
    chosen, reason = notebook.choose_precision(devices, requested)
    assert chosen == policy
    assert because in reason


def test_mixed_precision_and_xla_are_read_from_the_environment(monkeypatch):
    monkeypatch.delenv("SEQLAB_MIXED_PRECISION", raising=False)
    monkeypatch.delenv("SEQLAB_XLA", raising=False)
    assert notebook.choose_precision([A100], None)[0] == "float32"
    assert notebook.resolve_jit_compile(None) is False
    monkeypatch.setenv("SEQLAB_MIXED_PRECISION", "bfloat16")
    monkeypatch.setenv("SEQLAB_XLA", "1")
    assert notebook.choose_precision([A100], None)[0] == "mixed_bfloat16"
    assert notebook.resolve_jit_compile(None) is True
    assert notebook.resolve_jit_compile(False) is False       # the argument wins
    monkeypatch.setenv("SEQLAB_MIXED_PRECISION", "fp8")
    with pytest.raises(ValueError, match="SEQLAB_MIXED_PRECISION must be one of"):
        notebook.choose_precision([A100], None)
    monkeypatch.setenv("SEQLAB_XLA", "yes")
    with pytest.raises(ValueError, match="SEQLAB_XLA must be 1 or 0"):
        notebook.resolve_jit_compile(None)
    with pytest.raises(ValueError, match="jit_compile must be True, False or None"):
        notebook.resolve_jit_compile("auto")


def test_setup_on_a_cpu_changes_nothing_and_a_forced_policy_is_applied(capsys):
    import keras

    before = keras.config.dtype_policy().name
    try:
        run = notebook.setup(mixed_precision="off", jit_compile=None)
        assert run.dtype_policy == "float32" and run.jit_compile is False
        assert run.fixed_shapes is False  # no XLA: batches may change shape
        assert "opt-in" in run.reasons["dtype_policy"] and "opt-in" in run.reasons["jit_compile"]
        assert "dtype policy" not in capsys.readouterr().out  # the default goes unsaid
        assert notebook.setup(jit_compile=True, quiet=True).fixed_shapes is True
        run = notebook.setup(mixed_precision="bfloat16", quiet=True)
        assert run.dtype_policy == keras.config.dtype_policy().name == "mixed_bfloat16"
        run = notebook.setup(mixed_precision="off", quiet=True)
        assert keras.config.dtype_policy().name == "float32"
    finally:
        keras.config.set_dtype_policy(before)


def test_setup_prints_what_a_student_needs_and_no_default_choice(capsys, monkeypatch):
    import keras
    import tensorflow as tf

    import seqlab

    monkeypatch.setenv("SEQLAB_STRATEGY", "default")
    run = notebook.setup(fast=True, notebook="01")
    assert run.replicas == 1 and not tf.distribute.has_strategy()
    printed = capsys.readouterr().out
    assert printed.startswith(f"seqlab {seqlab.__version__} | TensorFlow {tf.__version__} | "
                              f"Keras {keras.__version__} | FAST mode ON")
    # one device, float32, no XLA: the defaults go unsaid (tests/test_distribute.py: replicas)
    assert "Strategy" not in printed and "dtype policy" not in printed and "XLA" not in printed
    assert len(printed.splitlines()) == 3, printed


def test_a_runtime_without_tensorflow_such_as_colab_s_tpu_gets_one_honest_message():
    run = _Recorder()
    with pytest.raises(notebook.UnsupportedRuntimeError) as caught:
        notebook.prepare_colab(versions={"tensorflow": None, "keras": "3.13.2"}, run=run,
                               imported=set())
    assert run.commands == []
    message = str(caught.value)
    assert "TPU runtimes no longer ship TensorFlow" in message and "not tested on TPUs" in message
    assert "Runtime > Change runtime type > CPU or T4 GPU" in message


# --------------------------------------------------------------------------------------------
# A run's settings: resolved once, by setup(), from the parameters cell's values.
# --------------------------------------------------------------------------------------------


@pytest.fixture
def chosen_strategies(monkeypatch):
    """setup()'s strategy choices, recorded (the real choice would fix TensorFlow's devices)."""
    import tensorflow as tf

    from seqlab import distribute

    names = []

    def choose(name=None, *, quiet=False):
        names.append(distribute.strategy_name(name))
        return tf.distribute.get_strategy()

    monkeypatch.setattr(distribute, "choose_strategy", choose)
    return names


@pytest.mark.parametrize("argument, environment, expected", [
    (True, "0", True),      # the parameters cell's value wins
    (False, "1", False),
    (None, "1", True),      # None: $SEQLAB_FAST
    (None, "0", False),
    (None, None, False),    # neither: off
])
def test_setup_resolves_fast_from_the_argument_then_the_environment(monkeypatch, argument,
                                                                     environment, expected):
    if environment is None:
        monkeypatch.delenv("SEQLAB_FAST")
    else:
        monkeypatch.setenv("SEQLAB_FAST", environment)
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    run = notebook.setup(fast=argument, size="fast" if expected else "class", quiet=True)
    assert run.fast is expected
    # Written back, so package code that reads config.is_fast() agrees with the notebook.
    assert os.environ["SEQLAB_FAST"] == ("1" if expected else "0") and config.is_fast() is expected


@pytest.mark.parametrize("argument, environment, fast, expected", [
    ("full", "class", False, "full"),   # the parameters cell's value wins
    (None, "class", False, "class"),    # None: $SEQLAB_SIZE
    (None, None, True, "fast"),         # neither: FAST mode's size ...
    (None, None, False, "class"),       # ... or, on this CPU, the class size
])
def test_setup_resolves_the_size_from_the_argument_then_the_environment(monkeypatch, capsys,
                                                                        argument, environment,
                                                                        fast, expected):
    if environment is None:
        monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    else:
        monkeypatch.setenv("SEQLAB_SIZE", environment)
    run = notebook.setup(fast=fast, size=argument, notebook="04")
    assert run.size == expected and run.notebook == "04"
    lines = capsys.readouterr().out.strip().splitlines()
    # sizes.choose's one line, printed once, then the speed probe's (neither in FAST mode).
    if expected == "fast":
        assert not [line for line in lines if "class size" in line or "full size" in line]
        assert run.speed is None
    else:
        # (a busy machine adds the probe's "unreliable" line before its plan)
        assert lines[-1].startswith("Speed probe: ")
        assert any(f"the {expected} size" in line for line in lines[-3:-1])
        assert run.speed > 0 and f"{run.speed:.0f} GFLOP/s" in lines[-1]
        assert sum(line.count(f"the {expected} size") for line in lines) == 1


@pytest.mark.parametrize("environment, expected", [("default", "default"), (None, "auto")])
def test_setup_chooses_the_strategy_once_from_the_environment(
        monkeypatch, chosen_strategies, environment, expected):
    import tensorflow as tf

    if environment is None:
        monkeypatch.delenv("SEQLAB_STRATEGY", raising=False)
    else:
        monkeypatch.setenv("SEQLAB_STRATEGY", environment)
    run = notebook.setup(quiet=True)
    assert chosen_strategies == [expected]
    # one replica: nothing is made current (tests/test_distribute.py runs two)
    assert run.replicas == 1 and not tf.distribute.has_strategy()


@pytest.mark.parametrize("settings, message", [
    ({"fast": "yes"}, "FAST must be True, False or None"),
    ({"fast": False, "size": "huge"}, "must be one of 'fast', 'class', 'full'"),
    ({"fast": True, "size": "full"}, "FAST mode is on"),
    ({"SEQLAB_STRATEGY": "gpus"}, "strategy must be one of"),
])
def test_setup_refuses_a_setting_that_is_not_one_of_its_choices(settings, message, monkeypatch):
    for name, value in settings.items():
        if name.isupper():
            monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=message):
        notebook.setup(quiet=True, **{k: v for k, v in settings.items() if not k.isupper()})


def test_the_run_settings_are_frozen():
    import dataclasses

    run = notebook.setup(quiet=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.fast = not run.fast
