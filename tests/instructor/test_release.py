"""Releases (seqlab_instructor.release): the changelog entry, the refusals, and what a release
commits and tags. What a copy runs does not depend on releases: tests/instructor/test_colab.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from seqlab import config
from seqlab_instructor import release

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (config.REPO_ROOT / ".git").exists(),
    reason="needs git and a git checkout of the project")

NOTEBOOK = "01_imdb_pretrained_embedding.ipynb"
IDENTITY = {"GIT_AUTHOR_NAME": "Instructor", "GIT_AUTHOR_EMAIL": "instructor@example.org",
            "GIT_COMMITTER_NAME": "Instructor", "GIT_COMMITTER_EMAIL": "instructor@example.org"}


def test_the_changelog_moves_unreleased_entries_under_the_release_with_compare_links():
    text = "# Changelog\n\n## [Unreleased]\n\n### Added\n- releases\n"
    first = release.changelog_with_release(text, "0.1.0", "2026-11-28", url="https://x/y")
    assert "## [Unreleased]\n\n## [0.1.0] - 2026-11-28\n\n### Added\n- releases\n" in first
    assert first.endswith("[Unreleased]: https://x/y/compare/v0.1.0...HEAD\n"
                          "[0.1.0]: https://x/y/releases/tag/v0.1.0\n")
    second = release.changelog_with_release(
        first.replace("## [Unreleased]\n", "## [Unreleased]\n\n### Changed\n- a name\n"),
        "0.2.0", "2026-12-01", url="https://x/y")
    assert second.index("## [0.2.0]") < second.index("- a name") < second.index("## [0.1.0]")
    assert "[0.2.0]: https://x/y/compare/v0.1.0...v0.2.0\n" in second
    with pytest.raises(release.ReleaseError, match="nothing under"):
        release.changelog_with_release(second, "0.3.0", "2026-12-02")


def _git(root, *args, env=None):
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env=env).stdout


def _tree(tmp_path):
    """A clone of this project's HEAD whose origin is a bare repository ("GitHub")."""
    github = tmp_path / "github.git"
    _git(tmp_path, "init", "-q", "--bare", str(github))
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(config.REPO_ROOT), str(work))
    _git(work, "remote", "set-url", "origin", str(github))
    return github, work


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("SEQLAB_HOME", "PYTHONPATH")}
    return {**env, **IDENTITY, **extra}


def test_a_release_labels_a_commit_and_pins_the_notebooks_to_it(tmp_path):
    _, work = _tree(tmp_path)
    version = ".".join(map(str, [*release._parts(release.current_version(work))[:2],
                                 release._parts(release.current_version(work))[2] + 1]))
    changelog = work / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace(
        "## [Unreleased]\n", "## [Unreleased]\n\n### Changed\n- a change\n", 1))
    _git(work, "commit", "-qam", "describe a change", env=_env())
    done = subprocess.run([sys.executable, "-m", "seqlab_instructor.release", version], cwd=work,
                          env=_env(PYTHONPATH=str(work / "src")), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "git push --follow-tags origin HEAD:main" in done.stdout
    stamped = _git(work, "rev-parse", "HEAD~1").strip()
    assert _git(work, "log", "-2", "--format=%s").splitlines() == [
        f"Release {version}: notebooks and copies pin {stamped[:12]}", f"Release {version}"]
    assert f'__version__ = "{version}"' in (work / "src" / "seqlab" / "__init__.py").read_text()
    assert _git(work, "rev-parse", f"v{version}^{{commit}}").strip() == _git(
        work, "rev-parse", "HEAD").strip()  # the tag: a label on the pinned state
    copy = json.loads((work / "assignments" / NOTEBOOK).read_text(encoding="utf-8"))
    assert copy["metadata"]["seqlab"]["commit"] == stamped
    assert stamped in "".join(next(c["source"] for c in copy["cells"]
                                   if "setup" in c["metadata"].get("tags", [])))
    assert not _git(work, "status", "--porcelain").strip()


def test_a_release_is_refused_on_a_dirty_tree_a_bad_version_or_an_existing_tag(tmp_path):
    _, work = _tree(tmp_path)
    with pytest.raises(release.ReleaseError, match="expected a version X.Y.Z"):
        release.release("1.0", work)
    _git(work, "tag", "v9.0.0")
    with pytest.raises(release.ReleaseError, match="tag v9.0.0 exists already"):
        release.release("9.0.0", work)
    (work / "README.md").write_text("changed")
    with pytest.raises(release.ReleaseError, match="uncommitted changes"):
        release.release("9.1.0", work)
    assert not _git(work, "diff", "--stat", "--", "src").strip()  # nothing was changed
