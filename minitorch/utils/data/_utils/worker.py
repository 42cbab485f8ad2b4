"""What runs inside a DataLoader worker process: the loop that takes (batch number, indices) from
its index queue, fetches and collates the batch, and puts (batch number, batch) on the shared
result queue; plus what the worker knows about itself (get_worker_info) and how an exception
travels back to the main process with its traceback (ExceptionWrapper).

A worker is forked from a parent that may already have run OpenMP parallel regions: libgomp's
thread pool does not survive fork, and the child's first parallel region would wait forever for
the parent's threads. So the first thing a worker does is drop to one OpenMP (and OpenBLAS)
thread, as PyTorch's workers call torch.set_num_threads(1); a region of one thread runs on the
calling thread alone and never touches the pool."""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

import minitorch

from . import MP_STATUS_CHECK_INTERVAL, shared
from .fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]


class WorkerInfo:
    """id, num_workers, seed and dataset (this worker's copy) of the current worker; read-only."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info: Optional[WorkerInfo] = None


def get_worker_info() -> Optional[WorkerInfo]:
    """In a DataLoader worker process, its WorkerInfo; in the main process, None. An
    IterableDataset shards its stream by worker_info.id and worker_info.num_workers."""
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError repr()s its argument, which would show the
    traceback's newlines as \\n)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, as its type and formatted traceback (both picklable);
    reraise() raises the same type in the main process with the worker's traceback in the message."""

    def __init__(self, exc_info=None, where: str = "in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # an exception type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # No cycle exception -> traceback -> this frame -> exception: the DataLoader iterator
            # in the traceback is then freed (and its workers stopped) as soon as the exception is,
            # not by the cyclic collector, which may close its queues before its __del__ runs.
            del exception


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at a new epoch: rebuild the fetcher, answer with this."""
    seed: Optional[int] = None


class ManagerWatchdog:
    """Says whether the process that started this worker still lives (a worker outlives a
    killed parent otherwise, as it is reparented)."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _single_threaded() -> None:
    """One thread in this (forked) process for minitorch's loops and OpenBLAS's (one pool); see
    the module comment."""
    minitorch.set_num_threads(1)


def _generate_state(base_seed: int, worker_id: int):
    """NumPy's seed for a worker: PyTorch's, a SeedSequence of (worker_id, base_seed's two halves)."""
    return np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]).generate_state(4)


def _seed_worker(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    minitorch.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers):
    global _worker_info
    try:
        _single_threaded()
        shared.enable_in_worker()
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False  # an IterableDataset exhausted: idle until resumed or told to stop
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break  # the main process is shutting down and our stop message was lost
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:  # the main process says stop
                break
            if done_event.is_set() or iteration_end:
                continue  # shutting down: drain the queue without working
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group: the main process handles it
    # Exiting flushes what the queue's thread holds (the main process drains the queue while it
    # waits for us): a batch it has pickled into a shared-memory file is delivered and unlinked
    # there, not left behind in /dev/shm.
    data_queue.close()
