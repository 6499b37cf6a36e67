"""Make a release: a version number and a changelog entry, for people.

    python -m seqlab_instructor.release 0.2.0

What a notebook or a student copy runs does not depend on releases: its setup cell fetches the
commit it pins (:mod:`seqlab_instructor.notebook_files`), which the branch carries. A release
labels one such state. On a clean working tree with the changes described under
``## [Unreleased]`` in ``CHANGELOG.md``, it

1. sets ``seqlab.__version__`` (the one place the version lives; ``pyproject.toml`` reads it)
   and moves the changelog's Unreleased entries under ``## [0.2.0] - <today>``, and commits
   that as "Release 0.2.0";
2. pins every notebook to that commit (``python -m seqlab_instructor.notebook_files sync``),
   rebuilds the student copies (``python -m seqlab_instructor.homework build``), checks both,
   and commits them;
3. tags the result ``v0.2.0`` (a label: no copy fetches a tag) and prints the one push that
   publishes it.

Raises one clear error (exit status 1) for a dirty tree, a version that is not ``X.Y.Z`` or not
newer, a tag that exists, or an empty Unreleased section.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

from seqlab import config

VERSION_FILE = Path("src") / "seqlab" / "__init__.py"
CHANGELOG = "CHANGELOG.md"
UNRELEASED = "## [Unreleased]"


class ReleaseError(Exception):
    """Why the release was not made (nothing was changed)."""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def current_version(root: Path) -> str:
    """``__version__`` as written in ``src/seqlab/__init__.py`` under ``root``."""
    match = re.search(r'^__version__ = "([^"]+)"$', (root / VERSION_FILE).read_text(), re.M)
    if not match:
        raise ReleaseError(f"no __version__ line in {VERSION_FILE}")
    return match[1]


def changelog_with_release(text: str, version: str, date: str,
                           url: str = config.REPOSITORY_URL) -> str:
    """``text`` (a Keep-a-Changelog file) with the Unreleased entries moved under ``version``
    and the compare links at its end rewritten.

    Raises:
        ReleaseError: if there is no Unreleased section or nothing in it.
    """
    if UNRELEASED not in text:
        raise ReleaseError(f"{CHANGELOG} has no '{UNRELEASED}' section")
    text = re.sub(r"\n\[[^\]]+\]: \S+", "", text).rstrip() + "\n"  # the links, rewritten below
    head, rest = text.split(UNRELEASED, 1)
    entries, older, later = rest.partition("\n## [")
    if not entries.strip():
        raise ReleaseError(f"nothing under '{UNRELEASED}' in {CHANGELOG}: say what changed "
                           "for students and instructors first")
    body = (f"{head}{UNRELEASED}\n\n## [{version}] - {date}\n\n{entries.strip()}\n"
            + (f"\n## [{later}" if older else ""))
    versions = re.findall(r"^## \[(\d[^\]]*)\]", body, re.M)  # newest first
    links = [f"[Unreleased]: {url}/compare/v{version}...HEAD"]
    for newer, previous in zip(versions, [*versions[1:], None], strict=True):
        links.append(f"[{newer}]: {url}/compare/v{previous}...v{newer}" if previous
                     else f"[{newer}]: {url}/releases/tag/v{newer}")
    return body.rstrip() + "\n\n" + "\n".join(links) + "\n"


def release(version: str, root: Path = config.REPO_ROOT, *, log=print) -> str:
    """Make release ``version`` in the repository at ``root``; return its tag.

    Raises:
        ReleaseError: before changing anything, if the release cannot be made.
    """
    root = Path(root)
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ReleaseError(f"expected a version X.Y.Z, such as 0.2.0; got {version!r}")
    tag = f"v{version}"
    if _git(root, "status", "--porcelain").strip():
        raise ReleaseError("the working tree has uncommitted changes: commit or stash them")
    if _git(root, "tag", "--list", tag).strip():
        raise ReleaseError(f"tag {tag} exists already: choose the next version")
    now = current_version(root)
    if _parts(version) <= _parts(now):
        raise ReleaseError(f"{version} is not newer than the current version {now}")
    changelog = root / CHANGELOG
    new_changelog = changelog_with_release(changelog.read_text(encoding="utf-8"), version,
                                           datetime.date.today().isoformat())

    version_file = root / VERSION_FILE
    version_file.write_text(re.sub(r'^__version__ = "[^"]+"$', f'__version__ = "{version}"',
                                   version_file.read_text(), flags=re.M))
    changelog.write_text(new_changelog, encoding="utf-8")
    _git(root, "commit", "-q", "-am", f"Release {version}")
    python = [sys.executable, "-m"]
    # the steps run the code of the tree being released, whatever is installed
    env = {**{k: v for k, v in os.environ.items() if k != "SEQLAB_HOME"},
           "PYTHONPATH": str(root / "src")}
    for step in (["seqlab_instructor.notebook_files", "sync"],
                 ["seqlab_instructor.homework", "build"],
                 ["seqlab_instructor.notebook_files", "check"],
                 ["seqlab_instructor.homework", "check"]):
        done = subprocess.run([*python, *step], cwd=root, env=env, capture_output=True,
                              text=True)
        if done.returncode:
            raise ReleaseError(f"{' '.join(step)} failed after the release commit (the tree is "
                               "left as it is for you to inspect; `git checkout . && git reset "
                               f"--hard HEAD~1` undoes it):\n{done.stdout}{done.stderr}")
    pin = _git(root, "rev-parse", "HEAD").strip()
    _git(root, "commit", "-q", "-am", f"Release {version}: notebooks and copies pin {pin[:12]}")
    _git(root, "tag", "-a", tag, "-m", f"seqlab {version}")
    log(f"released {tag}: every notebook and student copy fetches commit {pin[:12]} on Colab.\n"
        "Publish it: git push --follow-tags origin HEAD:main")
    return tag


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.release", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("version", help="the new version, X.Y.Z")
    args = parser.parse_args(argv)
    try:
        release(args.version)
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
