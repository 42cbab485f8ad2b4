"""torch.distributed.rpc.api: remote calls between named worker processes, as PyTorch's RPC
framework offers them: init_rpc, rpc_sync, rpc_async, remote, RRef, get_worker_info, shutdown.

Transport: each worker listens on a TCP socket whose address it publishes in the rendezvous store
(a TCPStore at MASTER_ADDR:MASTER_PORT, or the init_method's tcp:// address); a call opens a
connection to the callee and sends (kind, payload) pickled; a thread of the callee runs it and sends
back ("ok", value) or ("err", exception, traceback). So a callee may itself call back the caller
while the caller waits (an observer asking the agent for an action, as the RL examples do). An
RRef travels as (owner id, rref id) and reads its value from the owner's table.

Inside a distributed autograd context (minitorch.distributed.autograd) a call travels as an "ag"
message that makes it part of the autograd graph. Not built: device maps, the TorchScript paths, and
the reference counting of RRefs (an owner keeps each value until shutdown). No agent is started
unless init_rpc is called, and is_available() says True: the framework is there to start.
"""
from __future__ import annotations

import datetime
import itertools
import os
import pickle
import socket
import threading
import traceback
from typing import Any, Callable, Dict, Generic, Optional, TypeVar

from minitorch.distributed._store import _accept_each, _recv_msg, _send_msg
from minitorch.futures import Future

T = TypeVar("T")

__all__ = ["RRef", "WorkerInfo", "init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "get_worker_info"]

DEFAULT_RPC_TIMEOUT_SEC = 60.0  # rpc.constants.DEFAULT_RPC_TIMEOUT_SEC
UNSET_RPC_TIMEOUT = -1.0  # a call's timeout argument when not given: the agent's own


class WorkerInfo:
    """A worker's name and id (its rank), as get_worker_info returns them."""

    __slots__ = ("name", "id")

    def __init__(self, name: str, id: int) -> None:
        self.name = name
        self.id = id

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, name={self.name})"

    def __eq__(self, other) -> bool:
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name, other.id)

    def __hash__(self) -> int:
        return hash((self.name, self.id))

    def __reduce__(self):
        return WorkerInfo, (self.name, self.id)


class _Agent:
    """This process's RPC endpoint: its listener, the other workers' addresses, owned RRef values."""

    def __init__(self, name: str, rank: int, world_size: int, store, timeout: float) -> None:
        self.info = WorkerInfo(name, rank)
        self.world_size = world_size
        self.store = store
        self.timeout = timeout
        self.owned: Dict[tuple, Any] = {}
        self.created: Dict[tuple, threading.Event] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count()
        host = os.environ.get("MINITORCH_RPC_HOST", "127.0.0.1")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(128)
        self.closed = False
        threading.Thread(target=_accept_each, args=(self,), name=f"minitorch-rpc-{name}", daemon=True).start()
        store.set(f"rpc/worker/{rank}", pickle.dumps((name, host, self.sock.getsockname()[1])))
        store.wait([f"rpc/worker/{r}" for r in range(world_size)])
        self.workers: Dict[int, WorkerInfo] = {}
        self.addrs: Dict[int, tuple] = {}
        for r in range(world_size):
            peer, peer_host, peer_port = pickle.loads(store.get(f"rpc/worker/{r}"))
            if any(w.name == peer for w in self.workers.values()):
                raise RuntimeError(f"RpcAgent name {peer} is not unique. Workers {r} and "
                                   f"{next(w.id for w in self.workers.values() if w.name == peer)} share it.")
            self.workers[r] = WorkerInfo(peer, r)
            self.addrs[r] = (peer_host, peer_port)

    # -- who is who --

    def worker(self, to) -> WorkerInfo:
        if isinstance(to, WorkerInfo):
            return self.workers[to.id]
        if isinstance(to, int):
            if to not in self.workers:
                raise RuntimeError(f"Unknown destination worker {to}")
            return self.workers[to]
        if isinstance(to, str):
            for w in self.workers.values():
                if w.name == to:
                    return w
            raise RuntimeError(f"Unknown destination worker {to}")
        raise TypeError(f"to must be a str, an int or a WorkerInfo, not {type(to).__name__}")

    # -- the caller's side --

    def send(self, to: WorkerInfo, message, timeout: float, typed: bool = True) -> Future:
        """A Future of the reply of worker `to` to message, received by a thread of its own; typed:
        the error message starts with the exception's type name, as rpc_sync's and rpc_async's do
        in PyTorch (not RRef.to_here's)."""
        done = threading.Event()
        reply: list = []
        seconds = self.timeout if timeout is None or timeout < 0 else timeout
        conn = socket.create_connection(self.addrs[to.id])
        try:
            _send_msg(conn, message)  # here: a value that cannot be pickled raises in the caller
        except BaseException:
            conn.close()
            raise

        def exchange():
            with conn:
                try:
                    reply.append(_recv_msg(conn))
                except (OSError, EOFError) as e:
                    reply.append(("err", RuntimeError(f"RPC to {to} failed: {e}"), ""))
            done.set()

        threading.Thread(target=exchange, daemon=True).start()

        def result():
            if not done.wait(seconds if seconds > 0 else None):
                raise RuntimeError(f"RPC ran for more than set timeout ({seconds:g} s) and will now be marked "
                                   "with an error")
            kind, *rest = reply[0]
            if kind == "ok":
                return rest[0]
            raise _remote_error(rest[0], rest[1], to, typed)

        return Future._of(result, done.is_set)

    # -- the callee's side --

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                kind, *payload = _recv_msg(conn)
                if kind == "ag":  # inside a distributed autograd context
                    value = _dist_autograd()._serve(self, *payload)
                else:
                    value = self.run_request(kind, payload)
                reply = ("ok", value)
            except BaseException as e:  # noqa: BLE001 - goes back to the caller, which raises it
                reply = ("err", _picklable(e), traceback.format_exc())
            try:
                pickle.dumps(reply)
            except Exception as e:  # noqa: BLE001 - a result that cannot travel is the caller's error
                reply = ("err", RuntimeError(f"the RPC's result cannot be pickled: {e}"), "")
            try:
                _send_msg(conn, reply)
            except OSError:
                pass

    def run_request(self, kind: str, payload):
        """What a "call", "remote" or "fetch" message asks of this worker, its value returned."""
        if kind == "call":
            return _run(*payload)
        if kind == "remote":
            rref_id, func, args, kwargs = payload
            try:
                self.own(rref_id, _run(func, args, kwargs))
            except BaseException:
                self.own(rref_id, None)
                raise
            return None
        (rref_id,) = payload  # "fetch": an RRef's value, once its remote() has run here
        self.created_event(rref_id).wait()
        return self.owned[rref_id]

    def created_event(self, rref_id: tuple) -> threading.Event:
        with self.lock:
            return self.created.setdefault(rref_id, threading.Event())

    def own(self, rref_id: tuple, value) -> None:
        self.owned[rref_id] = value
        self.created_event(rref_id).set()

    def new_rref_id(self) -> tuple:
        return (self.info.id, next(self.ids))

    def close(self) -> None:
        self.closed = True
        self.sock.close()


def _run(func: Callable, args, kwargs):
    """func(*args, **kwargs) on the callee; a function marked @rpc.functions.async_execution
    returns a Future, whose value is the call's result."""
    value = func(*(args or ()), **(kwargs or {}))
    if getattr(func, "_wrapped_async_rpc_function", None) is not None:
        value = value.wait()
    return value


def _picklable(e: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:  # noqa: BLE001 - an exception type that cannot travel goes as RuntimeError
        return RuntimeError(repr(e))


def _remote_error(e: BaseException, text: str, worker: WorkerInfo, typed: bool) -> BaseException:
    """The callee's exception with PyTorch's message: where it ran, the exception and its
    traceback. RRef.to_here raises it as its own type; rpc_sync and rpc_async (typed) as PyTorch's
    future does, a ValueError or TypeError as that class, any other as RuntimeError, the message
    led by the type's name: a KeyError comes as RuntimeError("KeyError: 'On worker1: ...'")."""
    message = f"On {worker}:\n{e!r}\n{text}"
    try:
        exc = type(e)(message)
    except Exception as failure:  # noqa: BLE001 - a type whose constructor needs other arguments
        return RuntimeError(f"Failed to create original exception type. Error msg was {failure} Original "
                            f"exception on remote side was {message}")
    if not typed:
        return exc
    kind = ValueError if isinstance(exc, ValueError) else TypeError if isinstance(exc, TypeError) else RuntimeError
    return kind(f"{type(exc).__name__}: {exc}")


_agent: Optional[_Agent] = None


def _current() -> _Agent:
    if _agent is None:
        raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.")
    return _agent


def init_rpc(name: str, backend=None, rank: int = -1, world_size: Optional[int] = None,
             rpc_backend_options=None) -> None:
    """Starts this process's RPC agent as worker `name` of rank `rank` in a group of world_size,
    and waits until every worker has started its own."""
    global _agent
    from minitorch.distributed._store import TCPStore

    if _agent is not None:
        raise RuntimeError("RPC is already initialized")
    if not isinstance(name, str):
        raise TypeError(f"Argument name must be of type str but got {type(name)}")
    if not isinstance(rank, int) or not isinstance(world_size, int):
        raise TypeError("Argument rank and world_size must be of type int")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, {world_size})")
    options = rpc_backend_options
    timeout = getattr(options, "rpc_timeout", DEFAULT_RPC_TIMEOUT_SEC)
    init_method = getattr(options, "init_method", "env://")
    if init_method.startswith("tcp://"):
        host, port = init_method[len("tcp://"):].rsplit(":", 1)
    else:
        for var in ("MASTER_ADDR", "MASTER_PORT"):
            if var not in os.environ:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {var} expected, but not set")
        host, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    store = TCPStore(host, int(port), world_size, is_master=rank == 0,
                     timeout=datetime.timedelta(seconds=max(timeout, DEFAULT_RPC_TIMEOUT_SEC) * 5))
    _agent = _Agent(name, rank, world_size, store, timeout)
    # every worker's agent is in place before any returns: a first call finds its callee ready
    store.add("rpc/ready", 1)
    _wait_count(_agent, "rpc/ready", world_size)


def shutdown(graceful: bool = True, timeout: float = 0) -> None:
    """Stops this worker's agent; graceful: first waits until every worker has called shutdown,
    so that none stops while another may still call it."""
    global _agent
    agent = _current()
    if graceful:
        agent.store.add("rpc/shutdown", 1)
        _wait_count(agent, "rpc/shutdown", agent.world_size)
        # the store lives in rank 0's process: it stays until every other worker is past the barrier
        if agent.info.id == 0:
            _wait_count(agent, "rpc/exit", agent.world_size - 1)
        else:
            agent.store.add("rpc/exit", 1)
    agent.close()
    _agent = None


def _wait_count(agent: _Agent, key: str, n: int) -> None:
    import time

    pause = 0.001
    while n and int(agent.store.add(key, 0)) < n:
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def get_worker_info(worker_name: Optional[str] = None) -> WorkerInfo:
    """This worker's WorkerInfo, or that of the worker named worker_name."""
    agent = _current()
    return agent.info if worker_name is None else agent.worker(worker_name)


def _check_call(func, args, kwargs) -> None:
    if not callable(func):
        raise TypeError("function should be callable.")
    if args is not None and not isinstance(args, (tuple, list)):
        raise TypeError(f"args must be a tuple or a list, not {type(args).__name__}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs must be a dict, not {type(kwargs).__name__}")


def rpc_async(to, func: Callable, args=None, kwargs=None, timeout: float = UNSET_RPC_TIMEOUT) -> Future:
    """A Future of func(*args, **kwargs) run on worker `to` (a name, a rank or a WorkerInfo)."""
    agent = _current()
    _check_call(func, args, kwargs)
    callee = agent.worker(to)
    body = (func, tuple(args or ()), dict(kwargs or {}))
    ctx = _dist_autograd()._active()
    if ctx is None:
        return agent.send(callee, ("call", *body), timeout)
    return _with_autograd(agent, ctx, callee, "call", body, timeout)


def rpc_sync(to, func: Callable, args=None, kwargs=None, timeout: float = UNSET_RPC_TIMEOUT):
    """func(*args, **kwargs) run on worker `to`; blocks until its result is back."""
    return rpc_async(to, func, args, kwargs, timeout).wait()


def remote(to, func: Callable, args=None, kwargs=None, timeout: float = UNSET_RPC_TIMEOUT) -> "RRef":
    """An RRef to the value of func(*args, **kwargs), run on and owned by worker `to`."""
    agent = _current()
    _check_call(func, args, kwargs)
    owner = agent.worker(to)
    rref_id, fork_id = agent.new_rref_id(), agent.new_rref_id()
    body = (rref_id, func, tuple(args or ()), dict(kwargs or {}))
    ctx = _dist_autograd()._active()
    if ctx is None:
        created = agent.send(owner, ("remote", *body), timeout, typed=False)
    else:
        created = _with_autograd(agent, ctx, owner, "remote", body, timeout, typed=False)
    return RRef._of(owner, rref_id, fork_id, created)


def _dist_autograd():
    from minitorch.distributed import autograd

    return autograd


def _with_autograd(agent: _Agent, ctx, callee: WorkerInfo, kind: str, body, timeout: float, typed: bool = True):
    """The call as part of ctx's autograd graph (see minitorch.distributed.autograd)."""
    dist_autograd = _dist_autograd()
    message, key = dist_autograd._outgoing(ctx, callee.id, kind, body)
    reply = agent.send(callee, message, timeout, typed)
    return Future._of(lambda: dist_autograd._incoming(ctx, callee.id, key, reply.wait()), reply.done)


class RRef(Generic[T]):
    """A reference to a value owned by one RPC worker. RRef(value) makes the current worker its
    owner; remote() makes one owned by the callee."""

    def __init__(self, value: T, type_hint=None, devices=None) -> None:
        if _agent is None:
            raise RuntimeError("Current RPC agent is not set! Did you initialize the RPC framework "
                               "(e.g. by calling `rpc.init_rpc`)?")
        agent = _agent
        self._owner = agent.info
        self._id = self._fork = agent.new_rref_id()
        self._created: Optional[Future] = None
        agent.own(self._id, value)

    @classmethod
    def _of(cls, owner: WorkerInfo, rref_id: tuple, fork_id: tuple, created: Optional[Future] = None) -> "RRef":
        rref = cls.__new__(cls)
        rref._owner, rref._id, rref._fork, rref._created = owner, rref_id, fork_id, created
        return rref

    def __reduce__(self):  # each copy sent is a new fork of the reference
        return RRef._of, (self._owner, self._id, _current().new_rref_id())

    def __repr__(self) -> str:
        if self.is_owner():
            return f"OwnerRRef({_gid(self._id)})"
        return f"UserRRef(RRefId = {_gid(self._id)}, ForkId = {_gid(self._fork)})"

    def owner(self) -> WorkerInfo:
        return self._owner

    def owner_name(self) -> str:
        return self._owner.name

    def is_owner(self) -> bool:
        return _agent is not None and self._owner == _agent.info

    def confirmed_by_owner(self) -> bool:
        return self.is_owner() or self._created is None or self._created.done()

    def local_value(self) -> T:
        if not self.is_owner():
            raise RuntimeError(f"For UserRRef(rref_id={_gid(self._id)}, fork_id={_gid(self._fork)}), can't call "
                               f"localValue() on user {get_worker_info()}. Call it on owner {self._owner}")
        agent = _current()
        agent.created_event(self._id).wait()
        return agent.owned[self._id]

    def to_here(self, timeout: float = UNSET_RPC_TIMEOUT) -> T:
        """The value, copied from its owner (the value itself on the owner)."""
        if self._created is not None:
            self._created.wait()  # raises the error of the remote() call that made it
        if self.is_owner():
            return self.local_value()
        agent = _current()
        ctx = _dist_autograd()._active()
        if ctx is None:
            return agent.send(self._owner, ("fetch", self._id), timeout).wait()
        return _with_autograd(agent, ctx, self._owner, "fetch", (self._id,), timeout).wait()

    def rpc_sync(self, timeout: float = UNSET_RPC_TIMEOUT) -> "_Proxy":
        """rref.rpc_sync().method(*args): method run on the owner's value, its result back."""
        return _Proxy(self, rpc_sync, timeout)

    def rpc_async(self, timeout: float = UNSET_RPC_TIMEOUT) -> "_Proxy":
        return _Proxy(self, rpc_async, timeout)

    def remote(self, timeout: float = UNSET_RPC_TIMEOUT) -> "_Proxy":
        return _Proxy(self, remote, timeout)


def _gid(rref_id: tuple) -> str:
    return f"GloballyUniqueId(created_on={rref_id[0]}, local_id={rref_id[1]})"


def _invoke(rref: RRef, name: str, args, kwargs):
    method = getattr(rref.local_value(), name)
    return _run(method, args, kwargs)


class _Proxy:
    """What rref.rpc_sync() / rpc_async() / remote() return: attribute calls go to the owner."""

    def __init__(self, rref: RRef, call: Callable, timeout: float) -> None:
        self._rref, self._call, self._timeout = rref, call, timeout

    def __getattr__(self, name: str):
        def method(*args, **kwargs):
            return self._call(self._rref.owner(), _invoke, args=(self._rref, name, args, kwargs),
                              timeout=self._timeout)

        return method
