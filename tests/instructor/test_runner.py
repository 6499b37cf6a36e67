"""The notebook runner: papermill-style ``-p NAME VALUE``, time limit, epilogue, memory limit."""

from __future__ import annotations

import asyncio
import os

import nbformat
import pytest

from seqlab_instructor import cells, runner


@pytest.mark.parametrize(("text", "expected"), [
    ("2", 2), ("-3", -3), ("30000", 30000), ("3e-4", 3e-4), ("0.5", 0.5),
    ("True", True), ("False", False), ("None", None),
    ("dates", "dates"), ("true", "true"), ("", ""), ("1,000", "1,000"),
])
def test_values_are_read_as_papermill_reads_them(text, expected):
    value = runner.parse_parameter_value(text)
    assert value == expected and type(value) is type(expected)


def test_parameters_from_repeated_flags_last_one_wins():
    assert runner.parse_parameters([["EPOCHS", "2"], ["NUM_EXAMPLES", "30000"],
                                    ["EPOCHS", "3"]]) == {"EPOCHS": 3, "NUM_EXAMPLES": 30000}
    assert runner.parse_parameters(None) == {}


def test_a_name_that_is_not_a_variable_is_refused():
    with pytest.raises(ValueError, match="NAME a Python variable name"):
        runner.parse_parameters([["num-examples", "3"]])


def test_the_command_line_passes_parameters_to_run_notebook(monkeypatch, tmp_path, capsys):
    (tmp_path / "04_x.ipynb").write_text("{}")
    calls = []

    def fake_run(path, output, *, fast, parameters, timeout):
        calls.append((path.name, fast, parameters, timeout))
        return runner.NotebookRun(path, output / path.name, 1.0)

    monkeypatch.setattr(runner, "run_notebook", fake_run)
    code = runner.main(["04", "--full", "--notebooks", str(tmp_path), "--output",
                        str(tmp_path / "out"), "-p", "EPOCHS", "2", "-p", "NUM_EXAMPLES", "30000"])
    assert code == 0
    # full mode: no per-cell limit (its training cells run for an hour or more); FAST: 900 s
    assert calls == [("04_x.ipynb", False, {"EPOCHS": 2, "NUM_EXAMPLES": 30000}, None)]
    runner.main(["04", "--notebooks", str(tmp_path), "--output", str(tmp_path / "out")])
    runner.main(["04", "--full", "--cell-timeout", "60", "--notebooks", str(tmp_path),
                 "--output", str(tmp_path / "out")])
    assert [call[3] for call in calls[1:]] == [900, 60]
    assert "EPOCHS = 2" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        runner.main(["04", "-p", "EPOCHS"])  # a name without a value


def _tiny_notebook(path, *cells):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                       "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_code_cell("FAST = None\nSIZE = None\nEPOCHS = 1\nNAME = 'x'",
                                                metadata={"tags": ["parameters"]})]
    notebook.cells += [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(notebook, path)
    return path


def _stdout(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


@pytest.mark.notebook
def test_parameters_reach_the_kernel_end_to_end(tmp_path):
    notebook = _tiny_notebook(tmp_path / "tiny.ipynb", "print(EPOCHS * 2, repr(NAME), FAST)")
    assert runner.main(["tiny", "--notebooks", str(tmp_path), "--output", str(tmp_path / "out"),
                        "-p", "EPOCHS", "21", "-p", "NAME", "dates"]) == 0
    executed = nbformat.read(tmp_path / "out" / notebook.name, as_version=4)
    assert _stdout(executed.cells[-1]).strip() == "42 'dates' True"


@pytest.mark.notebook
def test_fast_and_size_reach_the_kernel_once_as_parameters(tmp_path, monkeypatch):
    """Only as papermill parameters: the runner sets no SEQLAB_FAST or SEQLAB_SIZE for the
    kernel (the notebook's setup() resolves the parameters), and leaves the caller's own
    environment variables as they are."""
    monkeypatch.setenv("SEQLAB_FAST", "1")  # the opposite of the run's fast=False: untouched
    monkeypatch.delenv("SEQLAB_SIZE", raising=False)
    notebook = _tiny_notebook(tmp_path / "once.ipynb",
                              "import os\nprint(FAST, SIZE, os.environ.get('SEQLAB_FAST'), "
                              "os.environ.get('SEQLAB_SIZE'))")
    run = runner.run_notebook(notebook, tmp_path / "out", fast=False,
                              parameters={"SIZE": "class"})
    executed = nbformat.read(run.output, as_version=4)
    (injected,) = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert [line.split(" = ")[0] for line in injected.source.splitlines()
            if " = " in line] == ["FAST", "SIZE"]
    assert _stdout(executed.cells[-1]).strip() == "False class 1 None"


@pytest.mark.notebook
def test_plots_land_in_the_executed_copy_whatever_the_callers_matplotlib_backend(tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # as tests/conftest.py sets it for this process
    notebook = _tiny_notebook(tmp_path / "plot.ipynb",
                              "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplt.show()")
    executed = nbformat.read(runner.run_notebook(notebook, tmp_path / "out").output, as_version=4)
    assert any("image/png" in output.get("data", {}) for output in executed.cells[-1].outputs)


@pytest.mark.notebook
def test_time_limit_interrupts_skips_the_rest_and_still_runs_the_epilogue(tmp_path):
    notebook = _tiny_notebook(tmp_path / "loop.ipynb", "done = 'before'",
                              "while True:\n    pass", "done = 'after'")
    run = runner.run_notebook(notebook, tmp_path / "out", cwd=tmp_path, allow_errors=True,
                              time_limit=8, epilogue=["print('epilogue sees', done)"])
    assert run.stopped is not None and "time limit of 8 s" in run.stopped
    assert run.seconds < 60
    executed = nbformat.read(run.output, as_version=4)
    assert cells.EPILOGUE_TAG in executed.cells[-1].metadata.tags
    assert _stdout(executed.cells[-1]).strip() == "epilogue sees before"


@pytest.mark.notebook
def test_a_cell_runs_past_the_cell_timeout_of_fast_mode_when_there_is_none(tmp_path):
    """timeout=None (the command line's full mode) sets no per-cell limit; a time limit of the
    whole notebook still applies."""
    notebook = _tiny_notebook(tmp_path / "slow.ipynb", "import time\ntime.sleep(3)\ndone = 1",
                              "print('after', done)")
    run = runner.run_notebook(notebook, tmp_path / "out", cwd=tmp_path, timeout=None)
    assert run.stopped is None
    assert _stdout(nbformat.read(run.output, as_version=4).cells[-1]).strip() == "after 1"
    limited = runner.run_notebook(notebook, tmp_path / "out2", cwd=tmp_path, timeout=1,
                                  allow_errors=True)
    assert limited.stopped is not None and "ran longer than its 1 s timeout" in limited.stopped


@pytest.mark.notebook
def test_errors_are_listed_and_the_memory_limit_applies_to_the_kernel(tmp_path):
    notebook = _tiny_notebook(
        tmp_path / "memory.ipynb", "1 / 0",
        "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0])",
        "block = bytearray(3 * 1024**3)")
    run = runner.run_notebook(notebook, tmp_path / "out", cwd=tmp_path, allow_errors=True,
                              memory_limit=2 * 1024**3)
    executed = nbformat.read(run.output, as_version=4)
    assert _stdout(executed.cells[-2]).strip() == str(2 * 1024**3)
    names = [error.split(":")[0] for _, error in run.errors]
    assert names == ["ZeroDivisionError", "MemoryError"], run.errors


@pytest.mark.notebook
@pytest.mark.skipif(os.name != "posix", reason="Unix sockets: POSIX only (TCP elsewhere)")
def test_two_kernels_side_by_side_talk_over_their_own_unix_sockets(tmp_path, capfd):
    # ipykernel warns on the console when it runs "over TCP without encryption"; over ZeroMQ's
    # IPC transport only this user can reach the kernel. jupyter_client's default IPC path is
    # relative to the working directory, so two kernels there would talk over the same sockets.
    code = ("from ipykernel.connect import get_connection_info\n"
            "info = get_connection_info(unpack=True)\n"
            "print(info['transport'], os.path.dirname(info['ip']), sep='|')")
    notebook = _tiny_notebook(tmp_path / "sockets.ipynb", "import os", code)

    async def both():
        return await asyncio.gather(*[runner.async_run_notebook(notebook, tmp_path / name,
                                                                 cwd=tmp_path)
                                      for name in ("a", "b")])

    runs = asyncio.run(both())
    answers = [_stdout(nbformat.read(run.output, as_version=4).cells[-1]).strip().split("|")
               for run in runs]
    assert [transport for transport, _ in answers] == ["ipc", "ipc"]
    folders = [folder for _, folder in answers]
    assert folders[0] != folders[1] and not any(os.path.exists(f) for f in folders)
    assert "without encryption" not in "".join(capfd.readouterr())


def test_the_docstring_example_runs():
    import doctest

    assert doctest.testmod(runner, report=False).failed == 0
