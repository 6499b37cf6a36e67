"""seqlab.sizes: the size a run trains at (parameter, environment, FAST, hardware) and its minutes."""


import dataclasses
import math

import pytest

from seqlab import sizes


@pytest.mark.parametrize("fast, env, value, gpu, expected", [
    (True, None, None, False, "fast"),
    (True, None, None, True, "fast"),
    (False, None, None, False, "class"),   # nothing set, no GPU: the class size
    (False, None, None, True, "full"),     # nothing set, a GPU: the full size
    (False, "class", None, True, "class"),
    (False, "CLASS ", None, False, "class"),
    (False, "class", "full", False, "full"),   # the notebook's parameter wins over the environment
    (False, None, "full", False, "full"),      # an explicit size wins over the hardware
    (True, None, "fast", False, "fast"),
])
def test_size_resolves_parameter_environment_mode_and_hardware(monkeypatch, fast, env, value, gpu,
                                                                expected):
    if env is None:
        monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    else:
        monkeypatch.setenv("SEQLAB_SIZE", env)
    assert sizes.choose(value, fast=fast, gpu=gpu) == expected


@pytest.mark.parametrize("fast, value, message", [
    (False, "classroom", "must be one of 'fast', 'class', 'full'"),
    (True, "class", "FAST mode is on"),
    (False, "fast", "needs FAST mode"),
])
def test_size_refuses_typos_and_contradictions(monkeypatch, fast, value, message):
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    with pytest.raises(ValueError, match=message):
        sizes.choose(value, fast=fast, gpu=False)


@pytest.fixture
def record(monkeypatch):
    monkeypatch.setattr(sizes, "MINUTES", {"04": {"class": 12.6, "full": 81.7}})


def test_a_cpu_runtime_says_in_one_line_why_the_class_size_and_how_to_choose_full(
        monkeypatch, capsys, record):
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    assert sizes.choose(None, fast=False, notebook="04", gpu=False) == "class"
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1
    assert "No GPU" in printed[0] and 'SIZE = "full"' in printed[0]
    assert "about 13 min" in printed[0] and "about 82 min" in printed[0]  # from the record


def test_a_gpu_runtime_trains_full_and_says_its_gpu_time_is_not_measured(monkeypatch, capsys,
                                                                         record):
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    assert sizes.choose(None, fast=False, notebook="04", gpu=True) == "full"
    printed = capsys.readouterr().out
    assert "GPU" in printed and "not measured" in printed and "about 82 min" in printed


def test_an_explicit_size_prints_the_record_s_minutes(monkeypatch, capsys, record):
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    assert sizes.choose("full", fast=False, notebook="04", gpu=False) == "full"
    assert "about 82 min of training on 2 CPU cores" in capsys.readouterr().out
    assert sizes.choose("class", fast=False, notebook="99", gpu=False) == "class"
    assert "not recorded" in capsys.readouterr().out
    assert sizes.expected_minutes("04", "fast") is None


def test_fast_mode_and_calls_without_a_notebook_print_nothing(monkeypatch, capsys, record):
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    sizes.choose(None, fast=True, notebook="04", gpu=False)
    sizes.choose(None, fast=False, gpu=False)
    assert capsys.readouterr().out == ""


def test_every_notebook_of_the_real_record_has_both_sizes():
    for number in ("01", "02", "03", "04", "05", "06", "07", "08"):
        assert sizes.expected_minutes(number, "class") is not None, number
        assert sizes.expected_minutes(number, "full") >= sizes.expected_minutes(number, "class")


def test_each_notebook_takes_its_size_s_numbers_from_one_home():
    """No notebook keeps a table of per-size numbers of its own (seqlab.sizes.SETTINGS is it)."""
    import nbformat

    from seqlab import config
    from seqlab_instructor.notebook_files import notebook_paths

    for path in notebook_paths(config.REPO_ROOT / "notebooks"):
        number = path.name[:2]
        cells = nbformat.read(path, as_version=4).cells
        first = [cell.source for cell in cells[3:5]]  # the imports cell, after a #@save one
        assert any("RUN.settings" in source or f'sizes.settings("{number}", SIZE)' in source
                   for source in first), path.name
        code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
        assert '{"fast":' not in code, f"{path.name} has a per-size table: move it to seqlab.sizes"


def test_settings_are_copies_and_refuse_unknown_notebooks_and_sizes():
    a = sizes.settings("07", "full")
    a.gpt["d_model"] = 1
    assert sizes.SETTINGS["07"]["full"].gpt["d_model"] == 256
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.epochs = 3                                   # a typed, read-only object
    assert sizes.settings("04", "full").units == 256  # read by attribute
    with pytest.raises(ValueError, match="no sizes for notebook"):
        sizes.settings("09", "full")
    with pytest.raises(ValueError, match="size must be one of"):
        sizes.settings("04", "huge")
    assert all(set(sizes.SETTINGS[n]) == set(sizes.SIZES) for n in sizes.SETTINGS)


def test_the_class_plan_is_the_largest_configuration_that_fits_the_runtime_s_speed():
    for notebook, options in sizes.CLASS_PLANS.items():
        seconds = [recorded for _, recorded in options]
        assert seconds == sorted(seconds, reverse=True), notebook   # largest first
        # At the record's speed: the largest, the class size of the record's minutes.
        assert sizes.plan(notebook) == sizes.plan(notebook, sizes.RECORD_SPEED)
        assert sizes.plan(notebook)[0] == options[0][0]
        assert round(options[0][1] / 60, 1) == sizes.expected_minutes(notebook, "class")
        previous = 0
        for speed in (400.0, sizes.RECORD_SPEED, 120.0, 95.0, 60.0, 47.0):  # ever slower
            change, minutes = sizes.plan(notebook, speed)
            position = [option for option, _ in options].index(change)
            assert position >= previous, (notebook, speed)              # never a larger one
            previous = position
            if minutes <= sizes.CLASS_MINUTES:                          # the largest that fits
                assert all(seconds[i] * sizes.RECORD_SPEED / speed / 60 > sizes.CLASS_MINUTES
                           for i in range(position))
            else:                                                       # none fits: the smallest
                assert position == len(options) - 1


def test_the_class_settings_follow_the_plan_and_the_printed_line_names_it():
    assert sizes.settings("04", "class") == sizes.settings("04", "class", sizes.RECORD_SPEED)
    slow = sizes.RECORD_SPEED / 4
    change, minutes = sizes.plan("04", slow)
    chosen = sizes.settings("04", "class", slow)
    assert all(getattr(chosen, key) == value for key, value in change.items())
    assert chosen.task == "anki" and sizes.settings("04", "full", slow).units == 256
    line = sizes.describe_plan("04", "class", slow)
    assert "0.25 ×" in line and f"{chosen.units} units" in line
    assert f"about {minutes:.0f} min" in line and "GPU" not in line


def test_a_runtime_too_slow_for_any_configuration_is_told_what_to_choose_instead():
    for notebook in sizes.CLASS_PLANS:
        line = sizes.describe_plan(notebook, "class", sizes.RECORD_SPEED / 20)
        assert "even at its smallest" in line and "GPU runtime" in line and "FAST" in line


def test_other_notebooks_and_sizes_print_the_record_s_minutes_scaled_to_this_speed():
    recorded = sizes.expected_minutes("07", "class")
    line = sizes.describe_plan("07", "class", sizes.RECORD_SPEED / 2)
    assert f"about {2 * recorded:.0f} min of training at this speed" in line
    line = sizes.describe_plan("04", "full", sizes.RECORD_SPEED)
    assert f"about {sizes.expected_minutes('04', 'full'):.0f} min" in line


# ------------------------------------------------------------------------- the speed probe


@pytest.mark.parametrize("cgroup, files, expected", [
    ("0::/student\n", {"student/cpu.max": "50000 100000\n"}, 0.5),            # v2, half a core
    ("0::/\n", {"cpu.max": "max 100000\n"}, None),                           # v2, no quota
    ("4:cpu,cpuacct:/quota\n", {"cpu/quota/cpu.cfs_quota_us": "100000\n",    # v1, one core
                                "cpu/quota/cpu.cfs_period_us": "100000\n"}, 1.0),
    ("4:cpu,cpuacct:/\n", {"cpu/cpu.cfs_quota_us": "-1\n",
                           "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ("4:memory:/x\n", {}, None),                                               # no cpu controller
])
def test_available_cpus_is_the_affinity_lowered_by_a_cgroup_quota(tmp_path, cgroup, files,
                                                                  expected):
    (tmp_path / "cgroup").write_text(cgroup)
    for name, text in files.items():
        (tmp_path / "root" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "root" / name).write_text(text)
    cpus = sizes.available_cpus(str(tmp_path / "root"), str(tmp_path / "cgroup"))
    affinity = sizes.available_cpus(str(tmp_path / "none"), str(tmp_path / "none"))
    assert cpus == (affinity if expected is None else min(expected, affinity))


def test_a_reading_with_a_small_cpu_share_is_unreliable_and_corrected():
    assert sizes.SpeedReading(190.0, 0.95).reliable
    assert sizes.SpeedReading(190.0, 0.95).idle_gflops == 190.0
    busy = sizes.SpeedReading(95.0, 0.5)
    assert not busy.reliable and busy.idle_gflops == pytest.approx(190.0)


def _probe_beside_busy_processes():
    """A probe while one CPU-bound process per available CPU spins (each busy before it starts)."""
    import subprocess
    import sys

    spin = "print('spinning', flush=True)\nwhile True: pass"
    busy_processes = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE,
                                       text=True)
                      for _ in range(min(8, max(1, math.ceil(sizes.available_cpus()))))]
    try:
        for process in busy_processes:
            process.stdout.readline()
        return sizes.probe_speed()
    finally:
        for process in busy_processes:
            process.kill()
            process.wait()


def test_the_probe_beside_busy_processes_plans_as_an_idle_run_or_says_it_is_unreliable():
    """Issue 50: one-second probes on a busy moment chose smaller class sizes than the runtime
    needed. Beside CPU-bound processes (one per available CPU, so the probe gets about half),
    the probe either plans the configuration a quiet probe plans, or flags its reading.

    The reference must be a quiet reading: on a machine already busy (CI runs two test
    processes at once) there is none to compare with, so up to three tries look for one; a
    scheduler's odd moment gets the same three tries."""
    readings = []
    for _ in range(3):
        quiet = sizes.probe_speed()
        if not quiet.reliable:
            readings.append((quiet, None))
            continue
        busy = _probe_beside_busy_processes()
        readings.append((quiet, busy))
        if all(not busy.reliable or sizes.plan(notebook, busy.idle_gflops)[0]
               == sizes.plan(notebook, quiet.idle_gflops)[0] for notebook in ("04", "05")):
            return
    if all(busy is None for _, busy in readings):
        pytest.skip(f"no quiet reading to compare with: this machine is busy ({readings})")
    pytest.fail(f"(quiet, busy) readings: {readings}")
