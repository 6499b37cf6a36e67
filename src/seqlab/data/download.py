"""The one error every seqlab download raises, and the FAST-mode advice it carries."""

from __future__ import annotations

FAST_MODE_ADVICE = (
    "To work offline, use FAST mode: set the environment variable SEQLAB_FAST=1 (or "
    "FAST = True in the notebook's parameters cell), which uses the project's sample data "
    "in data/ and a stand-in module built locally."
)


class DownloadError(ConnectionError):
    """A dataset or TF-Hub module could not be downloaded.

    The message says what was being fetched, why it failed, and how to carry on offline with
    FAST mode. The original exception is chained as ``__cause__``.
    """

    def __init__(self, what: str, cause: BaseException | str, advice: str = FAST_MODE_ADVICE):
        reason = f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else cause
        if len(reason) > 300:  # requests' messages repeat the whole URL and retry policy
            reason = reason[:297] + "..."
        super().__init__(f"Could not download {what} ({reason}). {advice}")
