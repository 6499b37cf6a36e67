"""``--sandbox docker`` for real: the grader's image built without a registry, then the hostile
submissions graded in real containers (tests/instructor/test_homework_container.py).

    python -m benchmarks.container_sandbox            # Podman, as root, on Debian or Ubuntu

1. The base: ``FROM python:3.13-slim`` needs a registry, so a stand-in is made from Debian's
   packages: ``mmdebstrap`` of trixie (Python 3.13, Colab's) with a virtual environment at
   /opt/python first on ``PATH`` (as the official image has ``python`` and ``pip`` on it) and this
   machine's extra CA certificates (for a proxy between it and PyPI), imported as
   ``localhost/seqlab-python:3.13-trixie`` and tagged ``python:3.13-slim``, so the grader's own
   Dockerfile builds unchanged. Remove the tag with ``podman rmi python:3.13-slim`` before
   building against the real image.
2. The grader's image, by the grader's own code (``docker_sandbox.docker_problem``: build, then a
   trial container that must show every limit in its cgroup).
3. ``SEQLAB_CONTAINER_TESTS=1 pytest tests/instructor/test_homework_container.py``.

Podman here runs with :data:`CONTAINERS_CONF` (``CONTAINERS_CONF``), for machines like the
development one (cgroup v1 with a controller on the v2 hierarchy, no ``CAP_SYS_RESOURCE``):
runc, as crun refuses hybrid cgroups; open files and processes limits no higher than this
process's own, as Podman's defaults (1048576 and 4194304) cannot be set without that capability;
the host's network for builds (``pip install``; no bridge without iptables). Measured on the
2-core development machine beside a CPU benchmark: base 34 s, image 146 s (3.2 GB, from a PyPI
proxy), tests 62 s; 4 minutes in all, 1 once both images are there.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from seqlab import config

BASE = "localhost/seqlab-python:3.13-trixie"
BASE_TAG = "docker.io/library/python:3.13-slim"
PACKAGES = "python3.13,python3.13-venv,ca-certificates,passwd"
#: Where the trixie rootfs comes from (a Debian mirror: no container registry).
MIRROR = "http://deb.debian.org/debian"
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]
netns = "host"
[engine]
runtime = "runc"
"""
CUSTOMIZE = [  # mmdebstrap hooks, run with the rootfs as $1
    'for c in /usr/local/share/ca-certificates/*.crt; do [ -e "$c" ] && cp "$c" '
    '"$1/usr/local/share/ca-certificates/"; done; chroot "$1" update-ca-certificates',
    'chroot "$1" python3.13 -m venv /opt/python',
    'rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*']
PATH = "/opt/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("$", " ".join(args), flush=True)
    return subprocess.run(args, check=True, **kwargs)


def _hard_limit(which: int, most: int) -> int:
    hard = resource.getrlimit(which)[1]
    return most if hard == resource.RLIM_INFINITY else min(hard, most)


def engine_config(folder: Path) -> Path:
    """``folder/seqlab-containers.conf``: Podman settings for machines like this (module doc)."""
    path = folder / "seqlab-containers.conf"
    path.write_text(CONTAINERS_CONF.format(
        nofile=_hard_limit(resource.RLIMIT_NOFILE, 1048576),
        nproc=_hard_limit(resource.RLIMIT_NPROC, 16384)), encoding="utf-8")
    return path


def build_base(engine: str) -> None:
    """:data:`BASE` from Debian's packages, tagged :data:`BASE_TAG` (skipped when there)."""
    if subprocess.run([engine, "image", "exists", BASE_TAG]).returncode == 0:
        print(f"base: {BASE_TAG} is there ({engine} image inspect {BASE})")
        return
    with tempfile.TemporaryDirectory(prefix="seqlab-rootfs-") as folder:
        tar = Path(folder) / "rootfs.tar"
        _run(["mmdebstrap", "--variant=apt", f"--include={PACKAGES}",
              *(f"--customize-hook={hook}" for hook in CUSTOMIZE), "trixie", str(tar), MIRROR])
        _run([engine, "import", "--change", f"ENV PATH={PATH}", "--change",
              'CMD ["python"]', str(tar), BASE], stdout=subprocess.DEVNULL)
    _run([engine, "tag", BASE, BASE_TAG])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default=os.environ.get("SEQLAB_CONTAINER_ENGINE", "podman"))
    parser.add_argument("--no-tests", action="store_true", help="build and probe only")
    args = parser.parse_args(argv)
    if shutil.which(args.engine) is None or (args.engine == "podman"
                                             and shutil.which("mmdebstrap") is None):
        print(f"needs {args.engine} and mmdebstrap (apt-get install podman runc mmdebstrap)")
        return 2
    os.environ["SEQLAB_CONTAINER_ENGINE"] = args.engine
    if args.engine == "podman" and "CONTAINERS_CONF" not in os.environ:
        os.environ["CONTAINERS_CONF"] = str(engine_config(Path(tempfile.gettempdir())))
        print(f"CONTAINERS_CONF={os.environ['CONTAINERS_CONF']}:\n"
              f"{Path(os.environ['CONTAINERS_CONF']).read_text()}")
    start = time.monotonic()
    build_base(args.engine)
    print(f"base: {time.monotonic() - start:.0f} s", flush=True)

    from seqlab_instructor.homework import docker_sandbox

    start = time.monotonic()
    problem = docker_sandbox.docker_problem(build=True)
    fine = "there, and a trial container got every limit (memory, pids, CPUs)"
    print(f"image {docker_sandbox.image()}: {problem or fine} "
          f"({time.monotonic() - start:.0f} s)", flush=True)
    if problem is not None or args.no_tests:
        return 1 if problem else 0
    start = time.monotonic()
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-rA", "-p", "no:cacheprovider",
         "tests/instructor/test_homework_container.py"], cwd=config.REPO_ROOT,
        env={**os.environ, "SEQLAB_CONTAINER_TESTS": "1"})
    print(f"tests: {time.monotonic() - start:.0f} s")
    return tests.returncode


if __name__ == "__main__":
    raise SystemExit(main())
