"""seqlab.sizes: the size a run trains at (parameter, environment, FAST, hardware) and its minutes."""

import json

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
def record(monkeypatch, tmp_path):
    path = tmp_path / "full_mode.json"
    path.write_text(json.dumps({"notebooks": {"04": {"class": {"minutes": 12.6},
                                                      "full": {"minutes": 81.7}}}}))
    monkeypatch.setattr(sizes, "RECORD", path)
    sizes._record.cache_clear()
    yield path
    sizes._record.cache_clear()


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
    sizes._record.cache_clear()
    for number in ("01", "02", "03", "04", "05", "06", "07", "08"):
        assert sizes.expected_minutes(number, "class") is not None, number
        assert sizes.expected_minutes(number, "full") >= sizes.expected_minutes(number, "class")


def test_each_notebook_takes_its_size_s_numbers_from_one_home():
    """No notebook keeps a table of per-size numbers of its own (seqlab.sizes.SETTINGS is it)."""
    import nbformat

    from seqlab import config
    from seqlab.course.notebook_files import notebook_paths

    for path in notebook_paths(config.REPO_ROOT / "notebooks"):
        number = path.name[:2]
        cells = nbformat.read(path, as_version=4).cells
        first = cells[3].source  # the imports cell reads this size's numbers from RUN.settings
        assert ("RUN.settings" in first
                or f'AT_SIZE = sizes.settings("{number}", SIZE)' in first), path.name
        code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
        assert '{"fast":' not in code, f"{path.name} has a per-size table: move it to seqlab.sizes"


def test_settings_are_copies_and_refuse_unknown_notebooks_and_sizes():
    a = sizes.settings("07", "full")
    a["gpt"]["d_model"] = 1
    assert sizes.SETTINGS["07"]["full"]["gpt"]["d_model"] == 256
    with pytest.raises(ValueError, match="no sizes for notebook"):
        sizes.settings("09", "full")
    with pytest.raises(ValueError, match="size must be one of"):
        sizes.settings("04", "huge")
    assert all(set(sizes.SETTINGS[n]) == set(sizes.SIZES) for n in sizes.SETTINGS)
