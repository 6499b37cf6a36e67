"""Grading untrusted notebooks: hostile submissions graded in one sandboxed run with honest ones.

The course is a small instructor notebook built here (two exercises with NumPy-only checks, so
each kernel starts in seconds), not one of the course notebooks. Every hostile submission also
solves or attempts the exercises, so its grade shows that the attack changed nothing. The
honest submissions are graded a second time without the sandbox: same points, same messages.
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import shutil
import socket
import threading
from pathlib import Path

import nbformat
import pytest

from seqlab import config
from seqlab_instructor.homework import grade, sandbox, student_copies
from seqlab_instructor.notebook_files import BADGE_IMAGE

EXERCISE_1 = "Exercise 1: how surprised is the model by its own samples"
EXERCISE_2 = "Exercise 2: accuracy from predicted probabilities"
SOLUTION_1 = ("float(np.exp(-np.mean([row[i] - row.max() - np.log(np.exp(row - row.max()).sum())"
              " for row, i in zip(np.asarray(logits)[start - 1:-1], np.asarray(ids)[start:])])))")
SOLUTION_2 = "float(np.mean((np.asarray(probabilities).reshape(-1) > 0.5) == np.asarray(labels)))"
WRONG_2 = "float(np.mean((np.asarray(probabilities).reshape(-1) >= 0.5) == np.asarray(labels)))"
TIME_LIMIT = 25
NO_BWRAP = sandbox.bwrap_problem()


def _instructor_notebook(folder: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    code = nbformat.v4.new_code_cell
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# 99 · Sandbox\n[![Open In Colab]({BADGE_IMAGE})](x)"),
        code("FAST = True", metadata={"tags": ["parameters"]}),
        code("import numpy as np\nfrom seqlab.course import checks"),
        code("def sample_perplexity(logits, ids, start):\n    ### BEGIN SOLUTION\n"
             f"    return {SOLUTION_1}\n    ### END SOLUTION",
             metadata={"tags": ["exercise"], "seqlab": {"exercise": EXERCISE_1, "points": 2}}),
        code("checks.check_perplexity(sample_perplexity)\n### BEGIN HIDDEN TESTS\n"
             "assert abs(sample_perplexity(np.zeros((3, 4)), [0, 1, 2], 1) - 4) < 1e-6, 'uniform'\n"
             "### END HIDDEN TESTS",
             metadata={"tags": ["check"]}),
        code("def accuracy_from_probabilities(probabilities, labels):\n"
             f"    ### BEGIN SOLUTION\n    return {SOLUTION_2}\n    ### END SOLUTION",
             metadata={"tags": ["exercise"], "seqlab": {"exercise": EXERCISE_2}}),
        code("checks.check_accuracy_function(accuracy_from_probabilities)",
             metadata={"tags": ["check"]}),
    ]
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "99_sandbox.ipynb")


def _submission(copy, folder: Path, name: str, *, solve=(SOLUTION_1, SOLUTION_2), extra="",
                delete_checks=False):
    notebook = nbformat.from_dict(json.loads(json.dumps(copy)))
    exercises = [i for i, c in enumerate(notebook.cells) if "exercise" in c.metadata.get("tags", [])]
    for index, answer in zip(exercises, solve, strict=False):
        if answer:
            source = notebook.cells[index].source
            notebook.cells[index].source = source[:source.index("    raise")] + f"    return {answer}"
    if delete_checks:
        notebook.cells = [c for c in notebook.cells if "check" not in c.metadata.get("tags", [])]
    if extra:
        notebook.cells.append(nbformat.v4.new_code_cell(extra))
    nbformat.write(notebook, folder / f"{name}.ipynb")


def _listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    accepted = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            accepted.append(connection)
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, accepted, stop, thread


def _grade(folder, out, root, sandbox_choice, jobs=3):
    lines = []
    grades = grade.grade(folder, out, notebooks_dir=root / "notebooks", time_limit=TIME_LIMIT,
                         check_timeout=20, memory_limit_gb=3, jobs=jobs,
                         sandbox=sandbox_choice,
                         log=lambda *parts: lines.append(" ".join(map(str, parts))))
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return grades, rows, "\n".join(lines)


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return grade_hostile_submissions(tmp_path_factory, "bwrap" if NO_BWRAP is None else None)


def grade_hostile_submissions(tmp_path_factory, sandbox: str | None) -> dict:
    """The hostile submissions graded with ``sandbox`` (None: not at all), the honest ones also
    without a sandbox; what came out, and what was left behind (test_homework_container uses it
    with ``"docker"``)."""
    root = tmp_path_factory.mktemp("course")
    _instructor_notebook(root / "notebooks")
    (path, text), = student_copies.build(root / "notebooks", root / "assignments",
                                         root=root).items()
    copy = nbformat.reads(text, as_version=4)
    secret = f"SECRET-{secrets.token_hex(8)}"
    secret_file = root / "instructor-secret.txt"
    secret_file.write_text(secret, encoding="utf-8")
    outside = root / "written-by-a-submission.txt"
    in_repo = config.REPO_ROOT / f"written-by-a-submission-{secrets.token_hex(4)}.txt"
    marker = f"seqlab-orphan-{secrets.token_hex(6)}"
    server, accepted, stop, thread = _listener()
    port = server.getsockname()[1]
    folder = root / "submissions"
    folder.mkdir()
    honest = root / "honest"
    honest.mkdir()
    for where in (folder, honest):
        _submission(copy, where, "perfect")
        _submission(copy, where, "wrong", solve=(SOLUTION_1, WRONG_2))
        _submission(copy, where, "untouched", solve=())
    leak = ("\nimport os, pathlib\nfound = []\n"
            "for p in [{file!r}, *(str(q) for q in pathlib.Path({root!r}).rglob('*'))]:\n"
            "    try:\n        found.append(pathlib.Path(p).read_text())\n"
            "    except Exception as e:\n        found.append(type(e).__name__)\n"
            "found.append(os.environ.get('SEQLAB_TEST_SECRET', 'no env secret'))\n"
            "print(found)\npathlib.Path('loot.txt').write_text(str(found))\n")
    _submission(copy, folder, "reads_secrets", extra=leak.format(file=str(secret_file),
                                                                  root=str(root)))
    _submission(copy, folder, "raises_secret", solve=(SOLUTION_1, f"open({str(secret_file)!r}).read()"))
    _submission(copy, folder, "writes_outside", extra=(
        f"for p in [{str(outside)!r}, {str(in_repo)!r}]:\n    try:\n        open(p, 'w').write('pwned')\n"
        "    except OSError as e:\n        print(e)\n"))
    _submission(copy, folder, "connects", extra=(
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    print('connected')\nexcept OSError as e:\n    print('no network:', e)\n"))
    _submission(copy, folder, "forks", extra=(
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
        f"'import time; time.sleep(900)', {marker!r}], start_new_session=True)\n"))
    _submission(copy, folder, "fills_memory", extra=(
        "chunks = []\nwhile True:\n    chunks.append(bytearray(200 * 1024**2))\n"))
    _submission(copy, folder, "loops", extra="while True:\n    pass\n")
    _submission(copy, folder, "forges_checks", solve=(), extra=(
        "import seqlab.course.checks, seqlab.course.checks.transcript as t\n"
        "for name in dir(seqlab.course.checks):\n"
        "    if name.startswith('check_'):\n"
        "        setattr(seqlab.course.checks, name, lambda *a, **k: print('\\u2713 passed.'))\n"
        "t.Transcript.record = lambda self, key, compute: None\n"
        f"print('\\u2713 {EXERCISE_1} passed.')\nprint('\\u2713 {EXERCISE_2} passed.')\n"))
    _submission(copy, folder, "deletes_checks", delete_checks=True)

    os.environ["SEQLAB_TEST_SECRET"] = secret
    try:
        graded = _grade(folder, root / "grades", root, sandbox) if sandbox else None
        plain = _grade(honest, root / "grades-without-sandbox", root, "none")
    finally:
        del os.environ["SEQLAB_TEST_SECRET"]
        stop.set()
        thread.join()
        server.close()
        left = _processes_with(marker)
        written = [p for p in (outside, in_repo) if p.exists()]
        for p in written:
            p.unlink()
    return {"root": root, "secret": secret, "graded": graded, "plain": plain,
            "accepted": accepted, "left": left, "written": written}


needs_bwrap = pytest.mark.skipif(NO_BWRAP is not None,
                                 reason=f"no working bubblewrap here: {NO_BWRAP}")


def _row(rows, student):
    row = rows[student]
    return row[EXERCISE_1], row[EXERCISE_2], row["total"], row["status"]


@pytest.mark.notebook
def test_honest_submissions_get_their_points_without_a_sandbox(hostile):
    _, rows, log = hostile["plain"]
    assert _row(rows, "perfect") == ("2", "1", "3", "ok")
    assert _row(rows, "wrong") == ("2", "0", "2", "ok")
    assert _row(rows, "untouched") == ("0", "0", "0", "ok")
    assert "sandbox: none" in log


def same_grades_as_without_a_sandbox(hostile, sandbox: str) -> None:
    """The honest submissions graded in ``sandbox`` got what they got without one."""
    by_student = {g.student: g for g in hostile["graded"][0]}
    for expected in hostile["plain"][0]:
        got = by_student[expected.student]
        assert [(r.name, r.points, r.message) for r in got.results] == \
            [(r.name, r.points, r.message) for r in expected.results]
        assert (got.status, got.reason) == (expected.status, expected.reason)
    assert f"sandbox: {sandbox}" in hostile["graded"][2]


@pytest.mark.notebook
@needs_bwrap
def test_the_sandbox_grades_honest_submissions_exactly_as_without(hostile):
    same_grades_as_without_a_sandbox(hostile, "bwrap")


@pytest.mark.notebook
@needs_bwrap
def test_no_secret_reaches_any_output_file_or_grade(hostile):
    root, secret = hostile["root"], hostile["secret"]
    files = [p for p in (root / "grades").rglob("*") if p.is_file()]
    assert files and not [p for p in files if secret in p.read_text(errors="replace")]
    for graded in hostile["graded"][0]:
        assert secret not in repr(graded)
    executed = (root / "grades" / "executed" / "reads_secrets.ipynb").read_text()
    assert "no env secret" in executed and "FileNotFoundError" in executed  # it did try
    _, rows, _ = hostile["graded"]
    assert _row(rows, "reads_secrets") == ("2", "1", "3", "ok")
    assert _row(rows, "raises_secret")[:2] == ("2", "0")


@pytest.mark.notebook
@needs_bwrap
def test_nothing_is_written_outside_and_nothing_connects_or_outlives_the_run(hostile):
    assert hostile["written"] == []
    assert hostile["accepted"] == []
    assert hostile["left"] == []
    _, rows, _ = hostile["graded"]
    for student in ("writes_outside", "connects", "forks"):
        assert _row(rows, student) == ("2", "1", "3", "ok"), student
    executed = (hostile["root"] / "grades" / "executed" / "connects.ipynb").read_text()
    assert "no network" in executed


@pytest.mark.notebook
@needs_bwrap
def test_memory_and_time_limits_hold_inside_the_sandbox(hostile):
    _, rows, _ = hostile["graded"]
    assert _row(rows, "fills_memory")[:3] == ("2", "1", "3")
    assert rows["fills_memory"]["status"] in ("error", "kernel died")
    assert "MemoryError" in rows["fills_memory"]["reason"] or "died" in rows["fills_memory"]["reason"]
    assert _row(rows, "loops") == ("2", "1", "3", "timeout")


@pytest.mark.notebook
@needs_bwrap
def test_forged_checks_earn_nothing_and_deleted_checks_change_nothing(hostile):
    root = hostile["root"]
    _, rows, _ = hostile["graded"]
    assert _row(rows, "forges_checks") == ("0", "0", "0", "ok")
    feedback = (root / "grades" / "feedback" / "forges_checks.md").read_text()
    # Its patch stopped the recording, so the grader has no answer of its code to judge.
    assert feedback.count("not passed yet") == 2 and "no result of your code" in feedback
    assert _row(rows, "deletes_checks") == ("2", "1", "3", "ok")
    assert "deleted: a check cell (x2)" in (root / "grades" / "feedback" /
                                           "deletes_checks.md").read_text()


# ------------------------------------------------------------------ without a kernel


def test_auto_refuses_to_grade_when_neither_bwrap_nor_a_container_can_run(monkeypatch,
                                                                           tmp_path):
    from seqlab_instructor.homework import docker_sandbox

    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "bwrap (bubblewrap) is not installed")
    monkeypatch.setattr(docker_sandbox, "docker_problem", lambda: "docker is not installed")
    (tmp_path / "submissions").mkdir()
    _instructor_notebook(tmp_path / "course")
    lines = []
    with pytest.raises(ValueError, match="refusing to grade without a sandbox") as refusal:
        grade.grade(tmp_path / "submissions", tmp_path / "out", notebooks_dir=tmp_path / "course",
                    sandbox="auto", log=lines.append)
    message = str(refusal.value)
    assert "bwrap (bubblewrap) is not installed" in message and "docker is not installed" in message
    assert "apt-get install bubblewrap" in message and "Docker Desktop" in message
    assert "pass --sandbox none" in message and not (tmp_path / "out" / "grades.csv").exists()
    with pytest.raises(ValueError, match="bwrap is not installed|not installed; install"):
        sandbox.resolve("bwrap")
    with pytest.raises(ValueError, match="--sandbox docker: docker is not installed"):
        sandbox.resolve("docker")
    before = len(lines)
    assert sandbox.resolve("none", log=lines.append) == "none" and len(lines) == before


def test_auto_takes_bwrap_first_then_a_container(monkeypatch):
    from seqlab_instructor.homework import docker_sandbox

    monkeypatch.setattr(docker_sandbox, "docker_problem", lambda: None)
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: None)
    assert sandbox.resolve("auto") == "bwrap"
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "bwrap cannot create namespaces here")
    lines = []
    assert sandbox.resolve("auto", log=lines.append) == "docker"
    assert len(lines) == 1 and "container instead" in lines[0]
    assert sandbox.resolve("docker", log=lines.append) == "docker" and len(lines) == 1


def test_unknown_sandboxes_are_refused():
    with pytest.raises(ValueError, match="must be one of auto, bwrap, docker, none"):
        sandbox.resolve("chroot")


def test_the_bwrap_command_isolates_and_hides(tmp_path):
    work, hidden = tmp_path / "work", tmp_path / "notebooks"
    work.mkdir()
    hidden.mkdir()
    command = sandbox.bwrap_command(["python", "-V"], work, hide=[hidden],
                                    env={"HOME": str(work)})
    text = " ".join(command)
    for option in ("--unshare-all", "--die-with-parent", "--ro-bind / /", "--clearenv",
                   f"--tmpfs {hidden.resolve()}", f"--bind {work.resolve()} {work.resolve()}",
                   "--tmpfs /tmp", f"--setenv HOME {work}"):
        assert option in text, option
    assert command[-3:] == ["--", "python", "-V"]
    assert text.index("--tmpfs /tmp") < text.index(f"--bind {work.resolve()}")


def test_the_bwrap_command_binds_both_packages_back_where_hidden(tmp_path):
    """The kernel imports seqlab and the grader's recording module in seqlab_instructor."""
    import seqlab
    import seqlab_instructor

    work = tmp_path / "work"
    work.mkdir()
    source = Path(seqlab.__file__).resolve().parent.parent
    text = " ".join(sandbox.bwrap_command(["python", "-V"], work, hide=[source]))
    assert f"--tmpfs {source}" in text
    for package in (seqlab, seqlab_instructor):
        folder = Path(package.__file__).resolve().parent
        assert f"--ro-bind {folder} {folder}" in text, package.__name__


@needs_bwrap
def test_inside_bwrap_the_environment_is_clean_and_the_home_empty(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setenv("SEQLAB_TEST_SECRET", "visible?")
    (tmp_path / "secret.txt").write_text("hidden?")
    work = tmp_path / "work"
    work.mkdir()
    command = sandbox.bwrap_command(
        ["sh", "-c", f"env; ls {tmp_path}; cat {tmp_path / 'secret.txt'}; touch {work}/ok"],
        work, env={"HOME": str(work)})
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert "visible?" not in result.stdout and "hidden?" not in result.stdout
    assert "SEQLAB_TEST_SECRET" not in result.stdout and (work / "ok").is_file()


@needs_bwrap
def test_inside_bwrap_a_temporary_folder_outside_tmp_is_hidden_too(tmp_path, monkeypatch):
    """An instructor whose $TMPDIR is not /tmp: the grader's temporary files stay hidden."""
    import subprocess
    import tempfile

    from seqlab import config

    config.MODELS_DIR.mkdir(parents=True, exist_ok=True)
    elsewhere = Path(tempfile.mkdtemp(prefix="sandbox-tmpdir-", dir=config.MODELS_DIR))
    try:
        (elsewhere / "secret.txt").write_text("hidden?")
        monkeypatch.setattr(tempfile, "tempdir", str(elsewhere))
        work = tmp_path / "work"
        work.mkdir()
        command = sandbox.bwrap_command(["sh", "-c", f"cat {elsewhere / 'secret.txt'}"], work,
                                        env={"HOME": str(work)})
        assert f"--tmpfs {elsewhere.resolve()}" in " ".join(command)
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert "hidden?" not in result.stdout and result.returncode != 0
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


def test_without_a_sandbox_a_submission_keeps_its_own_training_backups(tmp_path, monkeypatch):
    """The grader's SEQLAB_BACKUP_DIR does not reach a submission run with --sandbox none: one
    student's finished training run must never be loaded into the next student's model."""
    import asyncio

    import nbformat

    from seqlab_instructor.homework import run as homework_run

    monkeypatch.setenv("SEQLAB_BACKUP_DIR", str(tmp_path / "graders-backups"))
    seen = {}

    async def fake_exec(*command, env=None, **kwargs):
        seen["env"] = env
        raise OSError("stop here: only the environment is under test")

    monkeypatch.setattr(homework_run.asyncio, "create_subprocess_exec", fake_exec)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(OSError, match="stop here"):
        asyncio.run(homework_run.run_submission(
            nbformat.v4.new_notebook(), work, sandbox="none", time_limit=10, check_timeout=5,
            memory_limit=None, epilogue=[]))
    assert "SEQLAB_BACKUP_DIR" not in seen["env"]
    assert seen["env"]["SEQLAB_HOME"] == str(work / "seqlab-home")
