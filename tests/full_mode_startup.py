"""IPython start-up file for seqlab's offline full-mode notebook runs (tests only, never shipped).

``tests/test_full_mode_offline.py`` copies it into ``<IPYTHONDIR>/profile_default/startup/`` of a
temporary IPython folder, so the kernel that executes a notebook with ``FAST = False`` answers
full mode's downloads with stand-ins before the first cell runs:

- TFDS: ``tfds.testing.mock_data`` (TFDS's own test support), ``SEQLAB_TEST_TFDS_EXAMPLES``
  generated examples per split, no download;
- the download hosts' name lookup (what ``seqlab.data.download.load_tfds`` checks first);
- the Anki text's sha256 pin, set to the generated zip's (``SEQLAB_TEST_ANKI_SHA256``,
  ``SEQLAB_TEST_ANKI_PAIRS``). The zip itself sits in ``$KERAS_HOME/datasets`` and the TF-Hub
  module in ``$TFHUB_CACHE_DIR``, both written by the test.
"""

import os
import socket

import tensorflow_datasets as _tfds

from seqlab.data import translation as _translation

# Kept in a variable: a closed context manager would undo the mock.
_seqlab_tfds_mock = _tfds.testing.mock_data(
    num_examples=int(os.environ["SEQLAB_TEST_TFDS_EXAMPLES"]))
_seqlab_tfds_mock.__enter__()

_seqlab_real_getaddrinfo = socket.getaddrinfo
_SEQLAB_DOWNLOAD_HOSTS = ("ai.stanford.edu", "raw.githubusercontent.com")


def _seqlab_getaddrinfo(host, port, *args, **kwargs):
    if host in _SEQLAB_DOWNLOAD_HOSTS:  # stands in for DNS; nothing connects (TFDS is mocked)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", port))]
    return _seqlab_real_getaddrinfo(host, port, *args, **kwargs)


socket.getaddrinfo = _seqlab_getaddrinfo
_translation.ANKI_TEXT_SHA256 = os.environ["SEQLAB_TEST_ANKI_SHA256"]
_translation.ANKI_PAIRS = int(os.environ["SEQLAB_TEST_ANKI_PAIRS"])

_seqlab_real_connect = socket.socket.connect


def _seqlab_connect(self, address, *args, **kwargs):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") \
            and self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"offline full-mode test: a connection to {address} was attempted")
    return _seqlab_real_connect(self, address, *args, **kwargs)


socket.socket.connect = _seqlab_connect
