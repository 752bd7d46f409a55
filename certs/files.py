"""Atomic writes of a TLS pair into a certificate directory (``tls.crt``, ``tls.key``, ``ca.crt``)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TLS_CRT = "tls.crt"
TLS_KEY = "tls.key"
CA_CRT = "ca.crt"
CA_KEY = "ca.key"


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> bool:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync and rename.

    Returns False (and leaves the file alone) when it already holds exactly ``data`` with ``mode``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        st = path.stat()
        if (st.st_mode & 0o777) == mode and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return True


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write_cert_dir(
    cert_dir: Path,
    cert_pem: bytes,
    key_pem: bytes,
    ca_pem: bytes | None = None,
    ca_key_pem: bytes | None = None,
) -> bool:
    """Write the serving pair (and optionally the CA) into ``cert_dir``; keys get mode 0600.

    The key is written before the certificate so that a reader polling ``tls.crt`` sees a matching key
    once the certificate changes. Returns True when any file changed.
    """
    changed = False
    if ca_pem is not None:
        changed |= atomic_write(cert_dir / CA_CRT, ca_pem, 0o644)
    if ca_key_pem is not None:
        changed |= atomic_write(cert_dir / CA_KEY, ca_key_pem, 0o600)
    changed |= atomic_write(cert_dir / TLS_KEY, key_pem, 0o600)
    changed |= atomic_write(cert_dir / TLS_CRT, cert_pem, 0o644)
    return changed


def read_optional(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
