"""In a worker process: the one :class:`~aem.evaluate.Evaluator` of the job it serves.

Why a cache, and why one: a worker of the shared pool (:mod:`aem.engines.pool`) serves an
audit's chunks and ``aem serve``'s sessions alike, and building an Evaluator (its metrics,
later its embedding model) on every task would cost more than most sessions. A job is the
pickled configuration and cases (plus what the caller adds), sent with every task under a
key unique to one audit or one server; the evaluator is built on the job's first task and
kept until a task of another job arrives.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from typing import Any

from aem.cases import Case
from aem.evaluate import Evaluator
from aem.settings import AemConfig

# In a worker process: the key of the job it is serving and that job's evaluator.
_JOB: tuple[str, Evaluator] | None = None
# The jobs whose ``prepare`` ran in this process (an adopted job's has not run yet).
_PREPARED: set[str] = set()


def pack_job(config: AemConfig, cases: Mapping[str, Case] | None, *extra: Any) -> bytes:
    """A job as it crosses the pipe: configuration, cases, then ``extra`` (handed to the
    ``prepare`` of :func:`job_evaluator` when a worker first sees the job)."""
    return pickle.dumps((config, dict(cases or {}), *extra), protocol=pickle.HIGHEST_PROTOCOL)


def job_evaluator(
    job_key: str, job: bytes, prepare: Callable[..., None] | None = None
) -> Evaluator:
    """In a worker: the evaluator of job ``job_key``, built on the job's first task.

    ``prepare`` is called once per job with the job's ``extra`` values, before its
    evaluator is built (``aem serve`` starts watching its server process there)."""
    global _JOB
    if _JOB is None or _JOB[0] != job_key:
        _JOB = None  # the previous job's evaluator (and model) goes before the next loads
        config, cases, *extra = pickle.loads(job)
        _prepare(job_key, prepare, extra)
        _JOB = (job_key, Evaluator(config, cases))
    elif job_key not in _PREPARED:  # adopted before the fork: prepared here, once
        _prepare(job_key, prepare, pickle.loads(job)[2:])
    return _JOB[1]


def adopt(job_key: str, evaluator: Evaluator) -> None:
    """In the process that forks the workers, before it forks them: ``evaluator`` serves
    job ``job_key``, so every worker forked from here starts with it built — its metrics,
    and its embedding model if it was loaded — instead of building its own. The job's
    ``prepare`` still runs in each worker, on its first task."""
    global _JOB
    _JOB = (job_key, evaluator)
    _PREPARED.discard(job_key)


def release(job_key: str) -> None:
    """In the process that forked the workers, once they all run: the adopted evaluator
    of ``job_key`` (and its model) goes from this process; each worker keeps its copy."""
    global _JOB
    if _JOB is not None and _JOB[0] == job_key:
        _JOB = None


def _prepare(job_key: str, prepare: Callable[..., None] | None, extra: list[Any]) -> None:
    if prepare is not None:
        prepare(*extra)
    _PREPARED.add(job_key)
