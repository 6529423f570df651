"""One stored entry of the result cache (:mod:`cudalens.pipeline.result_cache`): one file, read in one go.

Layout: :data:`FORMAT` (the storage format), the HMAC-SHA256 of the rest under this user's key, the
length of the manifest (4 bytes, big-endian), the manifest (JSON: what proves the entry still holds:
its dependency list and their digest, the places a new file would change it), then the payload (a
pickle). The signature is checked before anything is parsed; the payload is unpickled only once the
manifest holds (:func:`unpickle`).

The entries are pickles, so each is signed with a key the cache folder does not hold:
``$CUDALENS_CACHE_KEY`` (a CI secret, so a persisted cache stays usable across runners), else a random
key made once in ``$XDG_CONFIG_HOME/cudalens/cache.key`` (``~/.config``; mode 0600). An entry whose
signature does not match (written by someone else, or restored from a cache that a pull request could
write) is a miss and is never unpickled.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cudalens.gc_pause import collector_paused

FORMAT = b"cudalens-result/3\n"  # 3: one file per entry (the manifest, then the pickle); views "full" and "summary"


@functools.lru_cache(maxsize=1)
def signing_key() -> bytes:
    """The key that signs this user's entries (see the module docstring); b"" when none can be had
    (then nothing is stored or read)."""
    given = os.environ.get("CUDALENS_CACHE_KEY")
    if given:
        return hashlib.sha256(given.encode()).digest()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "cudalens"
    path = base / "cache.key"
    try:
        if not path.exists():
            base.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another process made it first
                pass
            else:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(os.urandom(32))
        data = path.read_bytes()
    except OSError:
        return b""
    return data[:32] if len(data) >= 32 else b""


def sealed(manifest: Mapping[str, Any], payload: bytes) -> bytes | None:
    """The stored form of ``manifest`` and ``payload`` (see the module docstring); None: no key."""
    key = signing_key()
    if not key:
        return None
    head = json.dumps(manifest).encode()
    body = len(head).to_bytes(4, "big") + head + payload
    return FORMAT + hmac.new(key, body, hashlib.sha256).digest() + body


def opened(f: Path) -> tuple[dict[str, Any], bytes] | None:
    """(manifest, payload) of the entry ``f`` if this user's key signed it, else None (missing,
    truncated, another format, another signer)."""
    try:
        data = f.read_bytes()
    except OSError:
        return None
    key = signing_key()
    if not key or not data.startswith(FORMAT):
        return None
    mac, body = data[len(FORMAT):len(FORMAT) + 32], data[len(FORMAT) + 32:]
    if len(body) < 4 or not hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).digest()):
        return None  # not signed with this user's key: never unpickled
    size = int.from_bytes(body[:4], "big")
    try:
        manifest = json.loads(body[4:4 + size])
    except ValueError:
        return None
    return (manifest, body[4 + size:]) if isinstance(manifest, dict) else None


def unpickle(payload: bytes) -> Any:
    """The object ``payload`` (from a signed entry) holds; None for one that cannot be read."""
    with collector_paused():
        try:
            return pickle.loads(payload)  # noqa: S301 - signed by this user's key (see the module docstring)
        except Exception:  # noqa: BLE001 - a truncated or foreign entry is a miss
            return None

