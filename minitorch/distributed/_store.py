"""torch.distributed's key-value stores: Store, TCPStore, FileStore, HashStore, PrefixStore.

A store is where processes meet before (and beside) their collectives: set/get/add/wait/
delete_key/num_keys/compare_set/check/append/multi_get/multi_set, with PyTorch's semantics: get
and wait block until the keys exist, at most the store's timeout, then raise DistStoreError
(FileStore: RuntimeError, as PyTorch's). init_process_group(init_method="tcp://host:port" or
"file:///path", or store=) rendezvous through one, and the "nccl" backend passes its unique ids
through it.

- HashStore: a dict in this process (threads), guarded by a condition variable.
- TCPStore: the master (is_master=True) serves a dict on host:port from a thread of its process;
  every store object, the master's too, is a client over its own socket: one request, one reply
  (length-prefixed pickles). The server never blocks on a missing key; a client's get/wait asks
  again, at growing intervals (1 ms to 50 ms), until the keys exist or the timeout passed.
- FileStore: a pickled dict in a file, read and rewritten under an exclusive fcntl lock, so that
  any process on the machine that opens the same path sees the same keys.
"""
from __future__ import annotations

import datetime
import fcntl
import os
import pickle
import socket
import struct
import threading
import time
from typing import Dict, List, Optional, Union

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)  # PyTorch's default store timeout
_INIT_KEY = "init/"  # TCPStore's worker count (PyTorch keeps one too: num_keys counts it)
_FILE_KEY = "cleanupKey"  # FileStore's count of the store objects on the file (counted too)

Value = Union[str, bytes, bytearray]


class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistStoreError(DistError):
    """Raised when a store operation fails: a timeout waiting for a key, a server gone."""


def _b(v: Value) -> bytes:
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"set(): incompatible value type {type(v).__name__} (expected str or bytes)")


def _key(k) -> str:
    if not isinstance(k, str):
        raise TypeError(f"a store key must be a str, got {type(k).__name__}")
    return k


class Store:
    """The interface of every store; a subclass implements _op(name, *args) over its dict."""

    def __init__(self, timeout: datetime.timedelta = _DEFAULT_TIMEOUT) -> None:
        self._timeout = timeout

    # ---- PyTorch's methods ----
    @property
    def timeout(self) -> datetime.timedelta:
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    def set(self, key: str, value: Value) -> None:
        self._op("set", _key(key), _b(value))

    def get(self, key: str) -> bytes:
        self._wait([_key(key)], self._timeout, True)
        return self._op("get", key)

    def add(self, key: str, amount: int) -> int:
        return self._op("add", _key(key), int(amount))

    def compare_set(self, key: str, expected_value: Value, desired_value: Value) -> bytes:
        return self._op("compare_set", _key(key), _b(expected_value), _b(desired_value))

    def append(self, key: str, value: Value) -> None:
        self._op("append", _key(key), _b(value))

    def multi_get(self, keys: List[str]) -> List[bytes]:
        self.wait(keys)
        return [self._op("get", _key(k)) for k in keys]

    def multi_set(self, keys: List[str], values: List[Value]) -> None:
        for k, v in zip(keys, values):
            self.set(k, v)

    def delete_key(self, key: str) -> bool:
        return self._op("delete", _key(key))

    def num_keys(self) -> int:
        return self._op("num_keys")

    def check(self, keys: List[str]) -> bool:
        return self._op("check", [_key(k) for k in keys])

    def wait(self, keys: List[str], timeout: Optional[datetime.timedelta] = None) -> None:
        self._wait([_key(k) for k in keys], timeout if timeout is not None else self._timeout, False)

    def _wait(self, keys: List[str], timeout: datetime.timedelta, for_get: bool) -> None:
        limit = timeout.total_seconds()
        deadline = time.monotonic() + limit
        pause = 0.001
        while not self._op("check", keys):
            if time.monotonic() >= deadline:
                raise self._timeout_error(keys, limit, for_get)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _timeout_error(self, keys: List[str], seconds: float, for_get: bool) -> Exception:
        return DistStoreError(f"wait timeout after {round(seconds * 1000)}ms, keys: "
                              + ", ".join("/" + k for k in keys))

    def _op(self, name: str, *args):
        raise NotImplementedError


def _apply(data: Dict[str, bytes], name: str, *args):
    """One operation on a store's dict (the same for every kind of store)."""
    if name == "set":
        data[args[0]] = args[1]
        return None
    if name == "get":
        return data[args[0]]
    if name == "add":
        value = int(data.get(args[0], b"0")) + args[1]
        data[args[0]] = str(value).encode()
        return value
    if name == "compare_set":
        key, expected, desired = args
        if key not in data:
            if expected == b"":
                data[key] = desired
                return desired
            return expected
        if data[key] == expected:
            data[key] = desired
        return data[key]
    if name == "append":
        data[args[0]] = data.get(args[0], b"") + args[1]
        return None
    if name == "delete":
        return data.pop(args[0], None) is not None
    if name == "num_keys":
        return len(data)
    if name == "check":
        return all(k in data for k in args[0])
    raise ValueError(f"unknown store operation {name!r}")


class HashStore(Store):
    """A store in this process's memory (its threads share it)."""

    def __init__(self) -> None:
        super().__init__()
        self._data: Dict[str, bytes] = {}
        self._lock = threading.Lock()

    def _op(self, name: str, *args):
        with self._lock:
            return _apply(self._data, name, *args)

    def _timeout_error(self, keys: List[str], seconds: float, for_get: bool) -> Exception:
        return DistStoreError("Wait timeout")


class PrefixStore(Store):
    """Every key of store, prefixed with "prefix/"."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self._prefix = prefix
        self.underlying_store = store

    def _k(self, key: str) -> str:
        return f"{self._prefix}/{_key(key)}"

    @property
    def timeout(self) -> datetime.timedelta:
        return self.underlying_store.timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def append(self, key, value):
        self.underlying_store.append(self._k(key), value)

    def multi_get(self, keys):
        return self.underlying_store.multi_get([self._k(k) for k in keys])

    def multi_set(self, keys, values):
        self.underlying_store.multi_set([self._k(k) for k in keys], values)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in keys], timeout)


class FileStore(Store):
    """A store in a file: every process that opens file_name shares its keys."""

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        self._op("add", _FILE_KEY, 1)

    def _op(self, name: str, *args):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as f:
                raw = f.read()
            data = pickle.loads(raw) if raw else {}
            result = _apply(data, name, *args)
            if name not in ("get", "num_keys", "check"):
                blob = pickle.dumps(data)
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                os.write(fd, blob)
            return result
        finally:
            os.close(fd)  # and so the lock

    def delete_key(self, key: str) -> bool:
        self._op("delete", _key(key))
        return True  # as PyTorch's FileStore, whether or not the key was there

    def _timeout_error(self, keys: List[str], seconds: float, for_get: bool) -> Exception:
        if for_get:
            return RuntimeError(f"Timeout waiting for key: {', '.join(keys)} after {round(seconds * 1000)} ms")
        return RuntimeError("Wait timeout")


# ---- TCPStore ----

def _send_msg(sock: socket.socket, obj) -> None:
    blob = pickle.dumps(obj)
    sock.sendall(struct.pack("!Q", len(blob)) + blob)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    parts = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the store's peer closed the connection")
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _recv_msg(sock: socket.socket):
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


def _accept_each(server) -> None:
    """Hands each connection to server.sock to server._serve, in a thread of its own, until
    server.closed (the store's server; an RPC agent's listener too)."""
    while not server.closed:
        try:
            conn, _ = server.sock.accept()
        except OSError:
            return
        threading.Thread(target=server._serve, args=(conn,), daemon=True).start()


class _Server:
    """The master's dict, served to every client connection by a thread each."""

    def __init__(self, host: str, port: int) -> None:
        self.data: Dict[str, bytes] = {}
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError as e:
            self.sock.close()
            raise DistStoreError(f"The server socket has failed to listen on any local network address. "
                                 f"port: {port}, useIpv6: 0, code: {-e.errno}, name: {e.strerror}, "
                                 f"message: address already in use") from None
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=_accept_each, args=(self,), name="minitorch-TCPStore", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    name, args = _recv_msg(conn)
                except (ConnectionError, OSError, EOFError):
                    return
                try:
                    with self.lock:
                        reply = (True, _apply(self.data, name, *args))
                except Exception as e:  # noqa: BLE001 - goes back to the client, which raises it
                    reply = (False, repr(e))
                try:
                    _send_msg(conn, reply)
                except OSError:
                    return

    def close(self) -> None:
        self.closed = True
        self.sock.close()


class TCPStore(Store):
    """A store served over TCP by the process that created it with is_master=True."""

    def __init__(self, host_name: str, port: int, world_size: Optional[int] = None, is_master: bool = False,
                 timeout: datetime.timedelta = _DEFAULT_TIMEOUT, wait_for_workers: bool = True,
                 multi_tenant: bool = False, master_listen_fd: Optional[int] = None, use_libuv: bool = True) -> None:
        super().__init__(timeout)
        self.host = host_name
        self.world_size = world_size
        self.libuvBackend = use_libuv
        self._server = _Server(host_name, port) if is_master else None
        self.port = self._server.port if self._server else port
        self._sock = self._connect(timeout.total_seconds())
        self._lock = threading.Lock()
        if world_size is not None and wait_for_workers:
            self.add(_INIT_KEY, 1)
            if is_master:
                self._wait_workers(world_size)

    def _connect(self, seconds: float) -> socket.socket:
        deadline = time.monotonic() + seconds
        pause = 0.01
        while True:
            try:
                s = socket.create_connection((self.host, self.port), timeout=max(0.1, deadline - time.monotonic()))
                s.settimeout(None)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return s
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DistStoreError(f"The client socket has timed out after {seconds:g}s while trying to "
                                         f"connect to ({self.host}, {self.port}): {e}") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.2)

    def _wait_workers(self, n: int) -> None:
        deadline = time.monotonic() + self._timeout.total_seconds()
        while int(self._op("get", _INIT_KEY)) < n:
            if time.monotonic() >= deadline:
                raise DistStoreError(f"Timed out after {self._timeout.total_seconds():g} seconds waiting for "
                                     f"clients. {int(self._op('get', _INIT_KEY))}/{n} clients joined.")
            time.sleep(0.005)

    def _op(self, name: str, *args):
        with self._lock:
            try:
                _send_msg(self._sock, (name, args))
                ok, value = _recv_msg(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistStoreError(f"TCPStore at {self.host}:{self.port}: {e}") from None
        if not ok:
            raise DistStoreError(f"TCPStore {name}: {value}")
        return value

    def __del__(self) -> None:
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        server = getattr(self, "_server", None)
        if server is not None:
            server.close()
