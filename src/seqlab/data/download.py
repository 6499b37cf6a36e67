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


def load_tfds(name: str, split, *, what: str, host: str, data_dir=None, **as_dataset_kwargs):
    """``tfds.builder(name).as_dataset(split, ...)``, downloading first if needed, or one
    :class:`DownloadError`.

    Offline, TFDS retries a download for minutes before it gives up; looking up ``host`` (the
    server TFDS downloads ``name`` from) tells the same in milliseconds, so a full-mode run
    without internet stops at once with the FAST-mode advice.

    Args:
        name: the TFDS dataset name (``"imdb_reviews"``, ``"tiny_shakespeare"``).
        split: what ``as_dataset`` takes (a split name or a list of them).
        what: the words the error uses for the data ("the IMDB reviews ...").
        host: the download host of ``name``'s files.
        data_dir: TFDS's data directory (default: TFDS's own, ``~/tensorflow_datasets``).
        **as_dataset_kwargs: passed to ``as_dataset`` (``as_supervised``, ``shuffle_files``).
    """
    import socket

    import tensorflow_datasets as tfds  # only full runs pay for this import

    try:
        builder = tfds.builder(name, data_dir=None if data_dir is None else str(data_dir))
        if not builder.is_prepared():
            socket.getaddrinfo(host, 443)
            builder.download_and_prepare()
        return builder.as_dataset(split=split, **as_dataset_kwargs)
    except (OSError, tfds.download.DownloadError) as error:
        raise DownloadError(what, error) from error
