"""The error every seqlab download raises, with its FAST-mode advice, and the broken-install error."""

from __future__ import annotations

FAST_MODE_ADVICE = (
    "To work offline, use FAST mode: set the environment variable SEQLAB_FAST=1 (or "
    "FAST = True in the notebook's parameters cell), which uses the project's sample data "
    "in data/ and a stand-in module built locally."
)


class DownloadError(ConnectionError):
    """A dataset or TF-Hub module could not be downloaded; the message says how to work offline."""

    def __init__(self, what: str, cause: BaseException | str, advice: str = FAST_MODE_ADVICE):
        reason = f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else cause
        if len(reason) > 300:  # requests' messages repeat the whole URL and retry policy
            reason = reason[:297] + "..."
        super().__init__(f"Could not download {what} ({reason}). {advice}")


class BrokenInstallError(ImportError):
    """A library that full mode needs is installed but unusable; the message names the fix."""

    def __init__(self, library: str, problem: str, fix: str):
        super().__init__(f"{library} is installed but cannot be used here: {problem}. Fix the "
                         f"environment with: {fix} (then restart the Python kernel). FAST mode "
                         f"does not use {library}: set the environment variable SEQLAB_FAST=1 "
                         "(or FAST = True in the notebook's parameters cell) to run without it.",
                         name=library)


def import_tensorflow_datasets():
    """``tensorflow_datasets``, checked to have imported fully, or one :class:`BrokenInstallError`."""
    try:
        import tensorflow_datasets as tfds  # only full runs pay for this import
    except ImportError as error:
        raise BrokenInstallError(
            "tensorflow_datasets", f"importing it failed ({type(error).__name__}: {error})",
            'pip install "tensorflow-datasets>=4.9" "tensorflow-metadata<1.18"') from error
    if not callable(getattr(tfds, "builder", None)):
        # tensorflow-metadata 1.18+ needs protobuf >= 6 without declaring it.
        raise BrokenInstallError(
            "tensorflow_datasets",
            "it imported only in part (no tfds.builder), which happens when tensorflow-metadata "
            "is too new for the installed protobuf (TFDS logged the import error above)",
            'pip install "tensorflow-metadata<1.18"')
    return tfds


def load_tfds(name: str, split, *, what: str, host: str, data_dir=None, **as_dataset_kwargs):
    """``tfds.builder(name).as_dataset(split, ...)``, downloading first if needed.

    Args:
        name, split: the TFDS dataset name and what ``as_dataset`` takes (a split or a list).
        what: the words the error uses for the data ("the IMDB reviews ...").
        host: the download host, looked up first so that a run without internet stops at once.
        data_dir: TFDS's data directory (default: TFDS's own).
        **as_dataset_kwargs: passed to ``as_dataset`` (``as_supervised``, ``shuffle_files``).

    Raises:
        DownloadError: the data could not be downloaded.
        BrokenInstallError: ``tensorflow_datasets`` cannot be used in this environment.
    """
    import socket

    tfds = import_tensorflow_datasets()
    try:
        builder = tfds.builder(name, data_dir=None if data_dir is None else str(data_dir))
        if not builder.is_prepared():
            socket.getaddrinfo(host, 443)
            builder.download_and_prepare()
        return builder.as_dataset(split=split, **as_dataset_kwargs)
    except (OSError, tfds.download.DownloadError) as error:
        raise DownloadError(what, error) from error
