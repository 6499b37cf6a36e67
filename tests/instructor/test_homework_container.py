"""``--sandbox docker`` in real containers: each limit, then the hostile submissions.

Opt-in (minutes; needs an engine that runs containers and the built image)::

    SEQLAB_CONTAINER_TESTS=1 SEQLAB_CONTAINER_ENGINE=podman \\
        pytest tests/instructor/test_homework_container.py

``python -m benchmarks.container_sandbox`` builds the image without a registry and runs them.
The hostile submissions and their checks are test_homework_sandbox's, graded here with
``--sandbox docker`` instead of bwrap.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
import test_homework_sandbox as hostile_tests

from seqlab_instructor.homework import docker_sandbox

PROBLEM = ("set SEQLAB_CONTAINER_TESTS=1 to run them"
           if os.environ.get("SEQLAB_CONTAINER_TESTS") != "1"
           else docker_sandbox.docker_problem(build=False))
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"no container tests: {PROBLEM}")
MEMORY = 256 * 1024**2


def _inside(tmp_path, code: str, *, seconds: int = 60) -> subprocess.CompletedProcess:
    """``python -c code`` in a submission's container (``MEMORY``, time limit ``seconds``)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "spec.json").write_text(json.dumps({"time_limit": seconds, "epilogue_timeout": 0,
                                                "epilogue": [], "memory_limit": MEMORY}))
    docker_sandbox.give_work_folder(work, docker_sandbox.container_user())
    command = docker_sandbox.docker_command(["python", "-c", code], work, env={},
                                            spec_name="spec.json")
    return subprocess.run(command, capture_output=True, text=True, timeout=seconds + 300)


def test_no_network_read_only_no_capabilities_and_not_root(tmp_path):
    done = _inside(tmp_path, (
        "import os, pathlib\n"
        "print(os.getuid(), os.getgid())\n"
        "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))\n"
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0])\n"
        "for place in ['/', '/opt/seqlab-src', '/tmp', os.getcwd()]:\n"
        "    try:\n"
        "        pathlib.Path(place, 'probe').write_text('x')\n"
        "        print(place, 'writable')\n"
        "    except OSError as error:\n"
        "        print(place, type(error).__name__)\n"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "{} {}".format(*docker_sandbox.container_user()) != "0 0"
    assert lines[1] == "['lo']" and lines[2] == "0000000000000000"
    assert lines[3:] == ["/ OSError", "/opt/seqlab-src OSError", "/tmp writable",
                         f"{(tmp_path / 'work').resolve()} writable"]


def test_memory_processes_and_cpus_are_limited_by_the_cgroup(tmp_path):
    assert _inside(tmp_path, docker_sandbox.LIMITS_PROBE).stdout.split()[:2] == \
        [str(MEMORY), str(docker_sandbox.PIDS_LIMIT)]
    # Without RLIMIT_AS (the kernel's own limit): only the cgroup stops it.
    memory = _inside(tmp_path, f"chunk = b'x' * {2 * MEMORY}\nprint('survived')")
    assert memory.returncode == 137 and "survived" not in memory.stdout
    threads = _inside(tmp_path, (
        "import threading, time\nstarted = 0\ntry:\n"
        f"    for _ in range({docker_sandbox.PIDS_LIMIT + 100}):\n"
        "        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "        started += 1\nexcept RuntimeError as error:\n"
        "    print(started, error, flush=True)\n"
        "import os\nos._exit(0)\n"), seconds=120)
    started = int(threads.stdout.split()[0])
    assert docker_sandbox.PIDS_LIMIT - 20 < started < docker_sandbox.PIDS_LIMIT, threads.stdout


def test_the_time_limit_kills_the_container(tmp_path, monkeypatch):
    monkeypatch.setattr(docker_sandbox, "STARTUP_SECONDS", 0)
    start = time.monotonic()
    done = _inside(tmp_path, "import time\ntime.sleep(120)", seconds=5)
    assert done.returncode == 137 and time.monotonic() - start < 60


# ------------------------------------------------- the hostile submissions, graded in containers


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """test_homework_sandbox's hostile submissions, graded with ``--sandbox docker``."""
    return hostile_tests.grade_hostile_submissions(tmp_path_factory, "docker")


@pytest.mark.notebook
def test_the_container_grades_honest_submissions_exactly_as_without(hostile):
    hostile_tests.same_grades_as_without_a_sandbox(hostile, "docker")


@pytest.mark.notebook
def test_no_secret_reaches_any_output_file_or_grade(hostile):
    hostile_tests.test_no_secret_reaches_any_output_file_or_grade(hostile)


@pytest.mark.notebook
def test_nothing_is_written_outside_and_nothing_connects_or_outlives_the_run(hostile):
    hostile_tests.test_nothing_is_written_outside_and_nothing_connects_or_outlives_the_run(hostile)


@pytest.mark.notebook
def test_memory_and_time_limits_hold_inside_the_sandbox(hostile):
    hostile_tests.test_memory_and_time_limits_hold_inside_the_sandbox(hostile)


@pytest.mark.notebook
def test_forged_checks_earn_nothing_and_deleted_checks_change_nothing(hostile):
    hostile_tests.test_forged_checks_earn_nothing_and_deleted_checks_change_nothing(hostile)
