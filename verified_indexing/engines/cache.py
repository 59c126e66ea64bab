"""A persistent, content-addressed proof cache in SQLite.

Key: sha256 of the canonical question text (which includes the engine), the
package version (``verified_indexing.__version__``), the z3 and isl versions and
:data:`SEMANTICS_VERSION`: a result proven by other code is never looked up.
Value: the verdict, the engine-independent evidence of a refutation, and how to
rebuild the question (``replay``, for ``verify-cache``). Promises:

* only ``proved`` and ``refuted`` are stored (``put`` ignores anything else);
* every row carries a sha256 checksum of its key and payload; a row whose
  checksum does not match is deleted and reported as a miss (never trusted);
* the caller re-checks a cached refutation's counterexample with the evaluator
  (see :func:`verified_indexing.engines.api.answer`);
* a file that is not a valid cache (not SQLite, failed ``PRAGMA quick_check``,
  wrong schema) is moved aside and rebuilt;
* several processes may use one file at once (WAL journal, busy timeout,
  retries on ``database is locked``), and threads may share one object (a
  lock); a forked child opens its own connection; any other database failure
  turns the cache off for this object instead of failing the proof.

Location: ``$VERIFIED_INDEXING_CACHE`` if set, else
``$XDG_CACHE_HOME/verified_indexing/proofs.sqlite`` (``~/.cache`` by default).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import islpy
import z3

from verified_indexing.engines.verdict import Verdict

__all__ = ["SEMANTICS_VERSION", "ProofCache", "default_cache", "default_cache_path"]

SEMANTICS_VERSION = "vi-semantics-1"
"""Bump whenever the meaning of a question or an encoding changes."""

_SCHEMA = "CREATE TABLE IF NOT EXISTS proofs (key TEXT PRIMARY KEY, payload TEXT NOT NULL, checksum TEXT NOT NULL)"
_META = "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
_FORMAT = "proof-cache-1"


@functools.lru_cache(maxsize=1)
def _engine_versions() -> str:
    return f"z3 {z3.get_version_string()}; isl {islpy.version.VERSION_TEXT}"


def _versions() -> str:
    """Everything a key carries besides the question: the package version (read on every call), the z3 and isl
    versions (fixed for a process) and :data:`SEMANTICS_VERSION`."""
    package = sys.modules["verified_indexing"].__version__
    return f"verified-indexing {package}; {_engine_versions()}; {SEMANTICS_VERSION}"


def default_cache_path() -> Path:
    """``$VERIFIED_INDEXING_CACHE``, or the user cache directory's ``proofs.sqlite``."""
    env = os.environ.get("VERIFIED_INDEXING_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "verified_indexing" / "proofs.sqlite"


class ProofCache:
    """The proof cache at ``path`` (created on first use).

    ``hits``, ``misses`` and ``rebuilt`` count what happened (``rebuilt`` is
    True when a corrupted file was moved aside). ``disabled`` is set (with
    ``disabled_reason``) when the database cannot be used at all.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, retries: int = 20) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.retries = retries
        self.hits = 0
        self.misses = 0
        self.rebuilt = False
        self.disabled = False
        self.disabled_reason = ""
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self._front: dict[str, dict[str, Any]] = {}  # whole results by key (see get_result)
        self._objects: dict[Any, Any] = {}  # their parsed forms (see memo_get)

    # -- keys ----------------------------------------------------------------
    @staticmethod
    def key_of(question: str) -> str:
        """The content address of a canonical question text."""
        return hashlib.sha256(f"{_versions()}\n{question}".encode()).hexdigest()

    @staticmethod
    def _checksum(key: str, payload: str) -> str:
        return hashlib.sha256(f"{_FORMAT}\n{key}\n{payload}".encode()).hexdigest()

    # -- connection ----------------------------------------------------------
    def _open(self) -> sqlite3.Connection | None:
        if self.disabled:
            return None
        if self._conn is not None and self._pid != os.getpid():
            # A forked child must not use its parent's connection.
            self._conn = None
            self._pid = os.getpid()
        if self._conn is not None:
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._connect_checked()
        except (OSError, sqlite3.Error) as exc:
            self.disabled = True
            self.disabled_reason = f"cannot use the proof cache at {self.path}: {exc}"
            return None
        self._conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=10.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 10000")
        return conn

    def _connect_checked(self) -> sqlite3.Connection:
        try:
            conn = self._connect()
            ok = conn.execute("PRAGMA quick_check").fetchone()
            if ok is None or ok[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {ok}")
            self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
            self._retry(lambda: conn.execute(_SCHEMA))
            self._retry(lambda: conn.execute(_META))
            self._retry(
                lambda: conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('format', ?)", (_FORMAT,))
            )
            row = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
            cols = [r[1] for r in conn.execute("PRAGMA table_info(proofs)").fetchall()]
            if row is None or row[0] != _FORMAT or cols != ["key", "payload", "checksum"]:
                raise sqlite3.DatabaseError("unexpected cache schema")
            return conn
        except sqlite3.DatabaseError:
            try:
                conn.close()
            except (sqlite3.Error, UnboundLocalError):
                pass
            self._move_aside()
            conn = self._connect()
            self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
            self._retry(lambda: conn.execute(_SCHEMA))
            self._retry(lambda: conn.execute(_META))
            self._retry(
                lambda: conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('format', ?)", (_FORMAT,))
            )
            return conn

    def _move_aside(self) -> None:
        self.rebuilt = True
        stamp = f"{os.getpid()}.{time.time_ns()}"
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                try:
                    p.replace(Path(f"{self.path}{suffix}.corrupt.{stamp}"))
                except OSError:
                    p.unlink(missing_ok=True)

    def _retry(self, fn: Any) -> Any:
        delay = 0.01
        for attempt in range(self.retries):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == self.retries - 1:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        return None  # pragma: no cover

    # -- operations ----------------------------------------------------------
    def get(self, question: str) -> tuple[Verdict, dict[str, Any] | None] | None:
        """The cached ``(verdict, evidence)`` for a question, or ``None``."""
        with self._lock:
            return self._get(question)

    def _get(self, question: str) -> tuple[Verdict, dict[str, Any] | None] | None:
        conn = self._open()
        if conn is None:
            return None
        key = self.key_of(question)
        try:
            row = self._retry(
                lambda: conn.execute("SELECT payload, checksum FROM proofs WHERE key = ?", (key,)).fetchone()
            )
        except sqlite3.Error:
            self.misses += 1
            return None
        if row is None:
            self.misses += 1
            return None
        payload, checksum = row
        try:
            if checksum != self._checksum(key, payload):
                raise ValueError("checksum mismatch")
            data = json.loads(payload)
            if data.get("question") != question:
                raise ValueError("the row records another question (or none)")
            verdict = Verdict.from_json(data["verdict"])
            if verdict.status not in ("proved", "refuted"):
                raise ValueError("unexpected cached verdict")
            evidence = data.get("evidence")
        except (ValueError, KeyError, TypeError):
            self._delete(question)
            self.misses += 1
            return None
        self.hits += 1
        return verdict, evidence

    def put(
        self, question: str, verdict: Verdict, evidence: dict[str, Any] | None, replay: dict[str, Any] | None = None
    ) -> None:
        """Store a ``proved`` or ``refuted`` verdict (anything else is ignored);
        ``replay`` says how to rebuild and re-ask the question (``verify-cache``)."""
        with self._lock:
            self._put(question, verdict, evidence, replay)

    def _put(
        self, question: str, verdict: Verdict, evidence: dict[str, Any] | None, replay: dict[str, Any] | None = None
    ) -> None:
        if verdict.status not in ("proved", "refuted"):
            return
        conn = self._open()
        if conn is None:
            return
        key = self.key_of(question)
        payload = json.dumps({"question": question, "verdict": verdict.to_json(), "evidence": evidence,
                              "replay": replay}, sort_keys=True)
        try:
            self._retry(
                lambda: conn.execute(
                    "INSERT OR REPLACE INTO proofs (key, payload, checksum) VALUES (?, ?, ?)",
                    (key, payload, self._checksum(key, payload)),
                )
            )
        except sqlite3.Error:
            pass

    # -- whole results (the simplifier's; see verified_indexing.simplify.result_cache) --------------------------
    def get_result(self, question: str) -> dict[str, Any] | None:
        """The stored whole result for ``question`` (a row written by :meth:`put_result`), or ``None``.

        A hit is served from an in-process front (a dict) when this object stored or read the row
        before, else from the file; the front is keyed by the same content address as the file."""
        with self._lock:
            key = self.key_of(question)
            hit = self._front.get(key)
            if hit is not None:
                self.hits += 1
                return hit
            conn = self._open()
            if conn is None:
                return None
            try:
                row = self._retry(
                    lambda: conn.execute("SELECT payload, checksum FROM proofs WHERE key = ?", (key,)).fetchone()
                )
            except sqlite3.Error:
                row = None
            if row is None:
                self.misses += 1
                return None
            payload, checksum = row
            try:
                if checksum != self._checksum(key, payload):
                    raise ValueError("checksum mismatch")
                data = json.loads(payload)
                if not isinstance(data, dict) or not isinstance(data.get("result"), dict):
                    raise ValueError("not a whole-result row")
                if data.get("question") != question:
                    raise ValueError("the row records another question (or none)")
                if data["result"].get("map") != (data.get("replay") or {}).get("output"):
                    raise ValueError("the served map is not the one the row's proof is about")
                if data.get("verdict", {}).get("status") != "proved":
                    raise ValueError("unexpected cached verdict")
            except (ValueError, TypeError, AttributeError):
                self._delete(question)
                self.misses += 1
                return None
            self.hits += 1
            result: dict[str, Any] = data["result"]
            self._remember(key, result)
            return result

    def put_result(self, question: str, verdict: Verdict, result: dict[str, Any], replay: dict[str, Any]) -> None:
        """Store a whole result proven equal to its input (``verdict`` must be ``proved``: the proof of the
        whole chain); ``replay`` lets ``verify-cache`` re-prove it."""
        if verdict.status != "proved":
            return
        with self._lock:
            conn = self._open()
            if conn is None:
                return
            key = self.key_of(question)
            payload = json.dumps({"question": question, "verdict": verdict.to_json(), "evidence": None,
                                  "replay": replay, "result": result}, sort_keys=True)
            try:
                self._retry(
                    lambda: conn.execute(
                        "INSERT OR REPLACE INTO proofs (key, payload, checksum) VALUES (?, ?, ?)",
                        (key, payload, self._checksum(key, payload)),
                    )
                )
            except sqlite3.Error:
                return
            self._remember(key, result)

    def memo_get(self, key: Any) -> Any:
        """An object a caller remembered with :meth:`memo_put` (``None`` if none): the parsed form of a
        whole result, keyed by the caller with everything the row's key holds. Forgotten whenever a row is
        deleted or the cache cleared."""
        hit = self._objects.get(key)
        if hit is not None:
            self.hits += 1
        return hit

    def memo_put(self, key: Any, value: Any) -> None:
        """Remember ``value`` for this process (see :meth:`memo_get`)."""
        with self._lock:
            if len(self._objects) >= 4096:
                self._objects.clear()
            self._objects[key] = value

    def _remember(self, key: str, result: dict[str, Any]) -> None:
        if len(self._front) >= 4096:
            self._front.clear()
            self._objects.clear()
        self._front[key] = result

    def delete(self, question: str) -> None:
        """Forget a question."""
        with self._lock:
            self._delete(question)

    def _delete(self, question: str) -> None:
        conn = self._open()
        if conn is None:
            return
        try:
            self._retry(lambda: conn.execute("DELETE FROM proofs WHERE key = ?", (self.key_of(question),)))
        except sqlite3.Error:
            pass
        self._front.pop(self.key_of(question), None)
        self._objects.clear()

    def rows(self) -> list[tuple[str, dict[str, Any]]]:
        """Every stored row of this code's versions as ``(key, payload)``, payloads
        whose checksum matches only (rows of other versions are never read back)."""
        with self._lock:
            conn = self._open()
            if conn is None:
                return []
            out = []
            for key, payload, checksum in conn.execute("SELECT key, payload, checksum FROM proofs").fetchall():
                if checksum != self._checksum(key, payload):
                    continue
                try:
                    out.append((str(key), json.loads(payload)))
                except ValueError:
                    continue
            return out

    def delete_key(self, key: str) -> None:
        """Forget a row by its key (see :meth:`rows`)."""
        with self._lock:
            self._front.pop(key, None)
            self._objects.clear()
            conn = self._open()
            if conn is not None:
                self._retry(lambda: conn.execute("DELETE FROM proofs WHERE key = ?", (key,)))

    def __len__(self) -> int:
        with self._lock:
            conn = self._open()
            if conn is None:
                return 0
            return int(conn.execute("SELECT COUNT(*) FROM proofs").fetchone()[0])

    def clear(self) -> None:
        """Delete every stored proof."""
        with self._lock:
            self._front.clear()
            self._objects.clear()
            conn = self._open()
            if conn is not None:
                self._retry(lambda: conn.execute("DELETE FROM proofs"))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_DEFAULT: dict[Path, ProofCache] = {}


def default_cache() -> ProofCache:
    """The process-wide cache at :func:`default_cache_path` (one object per path)."""
    path = default_cache_path()
    cache = _DEFAULT.get(path)
    if cache is None:
        cache = _DEFAULT[path] = ProofCache(path)
    return cache
