"""Releases (seqlab_instructor.release): the changelog entry, the refusals, and a student copy
built at one release that keeps running after a breaking change on the next commit — with a
local bare repository standing in for GitHub and the setup cell's Colab path run for real."""

from __future__ import annotations

import json
import os
import re
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


def _release(work, version, change):
    """Describe ``change`` in the changelog, commit, release ``version``, push it."""
    changelog = work / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace(
        "## [Unreleased]\n", f"## [Unreleased]\n\n### Changed\n- {change}\n", 1))
    _git(work, "commit", "-qam", change, env=_env())
    done = subprocess.run([sys.executable, "-m", "seqlab_instructor.release", version], cwd=work,
                          env=_env(PYTHONPATH=str(work / "src")), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"git push origin HEAD v{version}" in done.stdout
    _git(work, "push", "-q", "origin", "HEAD:main", f"v{version}")
    return (work / "assignments" / NOTEBOOK).read_text(encoding="utf-8")


def _run_on_colab(copy_text, folder, github, *, until, checkout=None):
    """Run the student copy's code cells up to the one containing ``until`` as Colab would:
    ``google.colab`` imported, the repository URL answered by ``github``; returns the process."""
    folder.mkdir()
    (folder / "google" / "colab").mkdir(parents=True)  # google: a namespace, as protobuf's
    (folder / "google" / "colab" / "__init__.py").write_text('"""Colab stand-in: its name."""\n')
    runtime = folder / "content"
    runtime.mkdir()
    if checkout:
        _git(runtime, "clone", "-q", "--branch", checkout, f"file://{github}", "seqlab")
    cells = ["".join(cell["source"]) for cell in json.loads(copy_text)["cells"]
             if cell["cell_type"] == "code"]
    shown = next(i for i, source in enumerate(cells) if until in source)
    script = ("import google.colab\nnamespace = {}\n"
              f"for source in {cells[:shown + 1]!r}:\n    exec(source, namespace)\n"
              "import seqlab\nprint('release', seqlab.__version__)\n")
    redirect = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.file://{github}.insteadOf",
                "GIT_CONFIG_VALUE_0": config.REPOSITORY_URL}
    return subprocess.run([sys.executable, "-c", script], cwd=runtime, capture_output=True,
                          text=True, timeout=300,
                          env=_env(PYTHONPATH=str(folder), SEQLAB_FAST="1",
                                   TF_CPP_MIN_LOG_LEVEL="3", **redirect))


def _next(version, step):
    parts = [int(p) for p in version.split(".")]
    parts[2] += step
    return ".".join(map(str, parts))


def test_a_student_copy_keeps_its_release_after_a_breaking_change_on_main(tmp_path):
    github, work = _tree(tmp_path)
    first, second = (_next(release.current_version(work), step) for step in (1, 2))
    copy_a = _release(work, first, "release A")
    assert f'release, url = \\"v{first}\\", ' in copy_a  # the setup cell (JSON-escaped)
    assert json.loads(copy_a)["metadata"]["seqlab"]["release"] == f"v{first}"

    # The next commit on main breaks copy A's import: review_input is renamed.
    for path in [*(work / "src").rglob("*.py"), *(work / "notebooks").glob("*.ipynb")]:
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"\breview_input\b", "reviews_as_input", text), encoding="utf-8")
    _git(work, "commit", "-qam", "rename review_input", env=_env())
    _git(work, "push", "-q", "origin", "HEAD:main")
    main_layers = _git(github, "show", "main:src/seqlab/layers/__init__.py")
    assert not re.search(r"\breview_input\b", main_layers)

    ran = _run_on_colab(copy_a, tmp_path / "a", github, until="review_input")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.strip().endswith(f"release {first}")

    copy_b = _release(work, second, "release B")
    ran = _run_on_colab(copy_b, tmp_path / "b", github, until="reviews_as_input")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.strip().endswith(f"release {second}")

    # A runtime holding another release's checkout, and a release that does not exist, stop
    # with one message each.
    ran = _run_on_colab(copy_a, tmp_path / "mixed", github, until="review_input", checkout="main")
    assert ran.returncode != 0
    assert f"was built for v{first}. Runtime > Disconnect and delete runtime" in ran.stderr
    unknown = copy_a.replace(f'release, url = \\"v{first}\\"', 'release, url = \\"v9.9.9\\"')
    assert unknown != copy_a
    ran = _run_on_colab(unknown, tmp_path / "unknown", github, until="review_input")
    assert "Could not fetch seqlab v9.9.9, the release this notebook was built from" in ran.stderr


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
