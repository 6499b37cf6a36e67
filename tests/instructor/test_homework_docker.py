"""``--sandbox docker``: the image, the exact ``docker run`` of a submission, and ``auto``'s choice.

Everything is tested up to the engine call: the engine is a stand-in script that records its
arguments and, for the end-to-end test, runs the command it was given on the host, so grading
goes through the same path (resolve, run, read back) as with a real engine. Real containers:
tests/instructor/test_homework_container.py (opt-in; python -m benchmarks.container_sandbox).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from seqlab import config
from seqlab_instructor.homework import docker_sandbox, sandbox

SPEC = {"time_limit": 90, "epilogue_timeout": 30, "epilogue": ["a", "b"],
        "memory_limit": 2 * 1024**3}


@pytest.fixture(autouse=True)
def _fresh_probes(monkeypatch):
    monkeypatch.delenv("SEQLAB_CONTAINER_ENGINE", raising=False)
    monkeypatch.delenv("SEQLAB_CONTAINER_IMAGE", raising=False)
    docker_sandbox.docker_problem.cache_clear()
    yield
    docker_sandbox.docker_problem.cache_clear()


def _fake_engine(folder: Path, name: str, script: str) -> Path:
    """An executable ``name`` in ``folder`` running ``script`` (bash); put first on PATH."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _pairs(args: list[str]) -> list[tuple[str, str]]:
    return list(zip(args, args[1:], strict=False))


def test_the_dockerfile_uses_colabs_python_and_cis_pins():
    dockerfile = docker_sandbox.DOCKERFILE.read_text(encoding="utf-8")
    colab = (config.REPO_ROOT / ".ci" / "colab-runtime.txt").read_text(encoding="utf-8")
    python = re.search(r"Python (3\.\d+)", colab).group(1)
    assert re.search(rf"^FROM python:{re.escape(python)}-slim$", dockerfile, re.M)
    assert "-r /opt/seqlab-requirements/colab-runtime.txt" in dockerfile
    assert "-c /opt/seqlab-requirements/colab-runtime.txt" in dockerfile
    assert re.search(r"^USER grader$", dockerfile, re.M)
    files = docker_sandbox.context_files()
    assert sorted(files) == ["Dockerfile", "colab-runtime.txt", "requirements.txt"]
    requirements = files["requirements.txt"].decode()
    assert "tensorflow>=" in requirements and "papermill" in requirements
    assert not any(line.startswith("-e") for line in requirements.splitlines())


def test_the_image_is_named_after_its_context(monkeypatch):
    name = docker_sandbox.image()
    assert re.fullmatch(r"seqlab-grader:[0-9a-f]{12}", name)
    files = docker_sandbox.context_files()
    monkeypatch.setattr(docker_sandbox, "context_files",
                        lambda: {**files, "requirements.txt": b"numpy==9\n"})
    assert docker_sandbox.image() != name
    monkeypatch.setenv("SEQLAB_CONTAINER_IMAGE", "my/grader:1")
    assert docker_sandbox.image() == "my/grader:1"


def _command(tmp_path, monkeypatch, **kwargs):
    work = tmp_path / "work"
    work.mkdir()
    (work / "seqlab-run-spec.json").write_text(json.dumps(SPEC), encoding="utf-8")
    monkeypatch.setenv("GRADER_SECRET", "s3cr3t")
    inner = [sys.executable, "-m", "seqlab_instructor.homework.run",
             str(work / "seqlab-run-spec.json")]
    env = {"PATH": "/host/bin", "SEQLAB_HOME": str(work / "seqlab-home"),
           "PYTHONPATH": "/host/src", "CUDA_VISIBLE_DEVICES": "", "LANG": "C.UTF-8"}
    return work.resolve(), docker_sandbox.docker_command(inner, work, env=env, **kwargs)


def test_a_submission_runs_without_network_read_only_limited_and_as_nobody(tmp_path,
                                                                          monkeypatch):
    work, args = _command(tmp_path, monkeypatch, user=(65534, 65534),
                          package_root=Path("/grader/src"))
    image = docker_sandbox.image()
    options, inner = args[:args.index(image)], args[args.index(image) + 1:]
    pairs = _pairs(options)
    assert options[:3] == ["docker", "run", "--rm"] and "--init" in options
    assert ("--network", "none") in pairs and "--read-only" in options
    assert ("--cap-drop", "ALL") in pairs and ("--security-opt", "no-new-privileges") in pairs
    memory = str(SPEC["memory_limit"])
    assert ("--memory", memory) in pairs and ("--memory-swap", memory) in pairs
    assert ("--cpus", str(min(2, os.cpu_count()))) in pairs
    assert ("--pids-limit", "1024") in pairs and ("--user", "65534:65534") in pairs
    assert ("--tmpfs", "/tmp:rw,exec,mode=1777") in pairs
    assert ("--tmpfs", "/home/grader:rw,mode=1777") in pairs
    mounts = [value for option, value in pairs if option == "--mount"]
    assert mounts == [f"type=bind,source={work},target={work}",
                      "type=bind,source=/grader/src,target=/opt/seqlab-src,readonly"]
    assert not {"-v", "--volume", "--privileged", "--network=host"} & set(options)
    assert ("--workdir", str(work)) in pairs
    env = dict(value.split("=", 1) for option, value in pairs if option == "-e")
    assert env == {"SEQLAB_HOME": str(work / "seqlab-home"), "CUDA_VISIBLE_DEVICES": "",
                   "LANG": "C.UTF-8", "HOME": "/home/grader", "TMPDIR": "/tmp",
                   "PYTHONPATH": "/opt/seqlab-src"}
    assert "s3cr3t" not in " ".join(args)
    seconds = SPEC["time_limit"] + 2 * SPEC["epilogue_timeout"] + docker_sandbox.STARTUP_SECONDS
    assert inner == ["timeout", "-s", "KILL", str(seconds), "python", "-m",
                     "seqlab_instructor.homework.run", str(work / "seqlab-run-spec.json")]


def test_the_engine_is_configurable_and_podman_keeps_the_graders_uid(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_CONTAINER_ENGINE", "podman")
    _, args = _command(tmp_path, monkeypatch, user=(1000, 1000))
    assert args[:2] == ["podman", "run"] and ("--userns", "keep-id") in _pairs(args)
    assert ("--user", "1000:1000") in _pairs(args)


def test_the_startup_allowance_matches_the_graders():
    from seqlab_instructor.homework import run

    assert docker_sandbox.STARTUP_SECONDS == run.STARTUP_SECONDS


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root")
def test_a_root_grader_gives_the_working_folder_to_nobody(tmp_path):
    (tmp_path / "work" / "home").mkdir(parents=True)
    (tmp_path / "work" / "submission.ipynb").write_text("{}")
    assert docker_sandbox.container_user() == docker_sandbox.NOBODY
    docker_sandbox.give_work_folder(tmp_path / "work", docker_sandbox.NOBODY)
    owners = {(p.stat().st_uid, p.stat().st_gid) for p in [tmp_path / "work",
                                                            *(tmp_path / "work").rglob("*")]}
    assert owners == {docker_sandbox.NOBODY}


def test_the_probe_says_what_is_missing(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("SEQLAB_CONTAINER_ENGINE", "no-such-engine")
    assert docker_sandbox.docker_problem() == "no-such-engine is not installed"
    monkeypatch.setenv("SEQLAB_CONTAINER_ENGINE", "docker")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    _fake_engine(bin_dir, "docker", 'echo "Cannot connect to the Docker daemon" >&2; exit 1\n')
    docker_sandbox.docker_problem.cache_clear()
    assert "is its daemon or machine running" in docker_sandbox.docker_problem()
    log = tmp_path / "calls"
    _fake_engine(bin_dir, "docker", f'echo "$@" >> {log}\n'
                                    'case "$1" in info) exit 0;; image) exit 1;; '
                                    'build) exit ${BUILD_STATUS:-0};; '
                                    'run) echo "536870912 1024 200000";; esac\n')
    docker_sandbox.docker_problem.cache_clear()
    assert docker_sandbox.docker_problem(build=False).endswith("is not built")
    assert docker_sandbox.docker_problem(build=True) is None
    assert f"build -t {docker_sandbox.image()} " in log.read_text()
    monkeypatch.setenv("BUILD_STATUS", "1")
    docker_sandbox.docker_problem.cache_clear()
    assert "`docker build` failed" in docker_sandbox.docker_problem(build=True)


@pytest.mark.parametrize("answer, problem", [
    ('echo "536870912 1024 200000"', None),
    ('echo "536870912 1024 max 100000"', "without the limits of --cpus "),
    ('echo "9223372036854771712 max -1"', "without the limits of --memory, --pids-limit, --cpus"),
    ('echo "crun: cgroups in hybrid mode not supported" >&2; exit 126',
     "`docker run` fails here (crun: cgroups in hybrid mode not supported)")])
def test_a_trial_container_must_show_every_limit(tmp_path, monkeypatch, answer, problem):
    """Docker drops a limit the kernel cannot apply with a warning, rootless Podman on cgroup v1
    drops all; crun refuses hybrid cgroups only at `run`: each refuses the sandbox, saying so."""
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "calls"
    _fake_engine(tmp_path, "docker", f'echo "$@" >> {log}\n'
                                     f'case "$1" in run) {answer};; esac\n')
    found = docker_sandbox.docker_problem(build=False)
    assert found == problem or problem in found
    run = next(line for line in log.read_text().splitlines() if line.startswith("run "))
    assert "--memory 536870912 " in run and "--pids-limit 1024 " in run
    assert "--network none " in run and " python -c " in run
    if problem is not None:
        monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "bwrap is not installed")
        with pytest.raises(ValueError, match="refusing to grade without a sandbox") as refusal:
            sandbox.resolve("auto")
        assert problem in str(refusal.value)


# ----------------------------------------------------------- the whole path, engine stood in

FAKE_ENGINE = '''#!{python}
"""Stands in for docker: records its arguments; `run` runs the command on the host."""
import json, os, subprocess, sys
args = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[0] != "run":
    sys.exit(0)  # info, image inspect
image = args.index({image!r})
options, inner = args[1:image], args[image + 1:]
if "-c" in inner:  # the trial: the limits it was given, as its cgroup would show them
    given = dict(zip(options, options[1:]))
    print(given["--memory"], given["--pids-limit"], int(float(given["--cpus"]) * 100000))
    sys.exit(0)
env = {{"PATH": os.defpath}}
for option, value in zip(options, options[1:]):
    if option == "-e":
        name, _, text = value.partition("=")
        env[name] = text
    if option == "--workdir":
        cwd = value
env["PYTHONPATH"] = {package!r}  # what the read-only mount holds
env["HOME"] = os.path.join(cwd, "home")  # the tmpfs home
inner[inner.index("python")] = {python!r}
sys.exit(subprocess.run(inner, env=env, cwd=cwd).returncode)
'''


@pytest.mark.notebook
def test_auto_without_bwrap_grades_through_the_container_engine(tmp_path, monkeypatch):
    import nbformat
    from test_homework_sandbox import SOLUTION_1, _instructor_notebook, _submission

    import seqlab
    from seqlab_instructor.homework import grade, student_copies

    _instructor_notebook(tmp_path / "notebooks")
    (_, text), = student_copies.build(tmp_path / "notebooks", tmp_path / "assignments",
                                      root=tmp_path).items()
    copy = nbformat.reads(text, as_version=4)
    (tmp_path / "submissions").mkdir()
    _submission(copy, tmp_path / "submissions", "perfect")
    _submission(copy, tmp_path / "submissions", "half", solve=(SOLUTION_1, None))
    log = tmp_path / "engine-calls"
    engine = _fake_engine(tmp_path / "bin", "docker", "")
    engine.write_text(FAKE_ENGINE.format(
        python=sys.executable, log=str(log), image=docker_sandbox.image(),
        package=str(Path(seqlab.__file__).resolve().parent.parent)), encoding="utf-8")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "bwrap is not installed")
    lines = []
    grades = grade.grade(tmp_path / "submissions", tmp_path / "out",
                         notebooks_dir=tmp_path / "notebooks", time_limit=25, check_timeout=20,
                         memory_limit_gb=3, jobs=2, sandbox="auto", log=lines.append)
    assert "sandbox: docker" in "\n".join(lines)
    assert {g.student: (g.total, g.status) for g in grades} == {"perfect": (3.0, "ok"),
                                                               "half": (2.0, "ok")}
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    runs = [call for call in calls if call[0] == "run" and "-c" not in call]
    assert ["info"] in calls and len(runs) == 2
    for call in runs:
        assert ("--network", "none") in _pairs(call) and "--read-only" in call
        assert ("--memory", str(3 * 1024**3)) in _pairs(call)
