"""ruff (it reads notebooks too) over the package, tests, benchmarks and notebooks."""

import shutil
import subprocess

import pytest

from seqlab import config


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed by requirements.txt")
def test_ruff_finds_nothing():
    folders = [f for f in ("src", "tests", "benchmarks", "notebooks", "assignments")
               if (config.REPO_ROOT / f).exists()]
    result = subprocess.run(["ruff", "check", *folders], cwd=config.REPO_ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
