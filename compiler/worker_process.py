"""The worker process's side of ``compiler.worker``: it compiles the programs it is
asked about and answers requests on them (``runtime.helper_process`` starts it and
calls ``serve``). The caller's side, ``compiler.worker.Worker``, never imports this
module: it runs only in the worker process.
"""

from __future__ import annotations

import pickle
import traceback
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compiler.api import Program
from compiler.source import source_to_module
from compiler.worker import Spec
from runtime import helper_process
from runtime.errors import FusecError
from runtime.process_memory import rss_bytes

#: programs a worker keeps compiled, the most recently used last; a program evicted
#: and called again is compiled again from its source (its kernels from the disk cache)
KEPT_PROGRAMS = 8

_programs: OrderedDict[Spec, Program] = OrderedDict()


def _program(spec: Spec) -> Program:
    program = _programs.get(spec)
    if program is None:
        text, path, options = spec
        program = Program(source_to_module(text, path), path, **dict(options))
        _programs[spec] = program
        while len(_programs) > KEPT_PROGRAMS:
            _programs.popitem(last=False)
    _programs.move_to_end(spec)
    return program


def _compiled(program: Program) -> tuple[str, list[str]]:
    return program.target, program.functions


def _call(program: Program, name: str, arrays: Sequence, named: dict) -> tuple[np.ndarray, ...]:
    return program.run(name, program.arguments(name, arrays, named))


#: each request's answer, from the program asked about and the request's arguments
REQUESTS: dict[str, Callable[..., Any]] = {"compile": _compiled, "call": _call, "ir": Program.ir, "signature": Program.signature}


def _serve(kind: str, spec: Spec, *args) -> tuple[bool, Any, str | None, int | None]:
    """In the worker: answers one request about the program ``spec``. Returns whether
    it succeeded, the answer or the error, the worker's traceback of an error that is
    a bug (not a `FusecError`, which the caller sees as raised there), and the
    worker's RSS."""
    try:
        return True, REQUESTS[kind](_program(spec), *args), None, rss_bytes()
    except FusecError as error:
        return False, error, None, rss_bytes()
    except Exception as error:  # noqa: BLE001 -- a bug: the caller sees it, the worker stays
        return False, error, traceback.format_exc(), rss_bytes()


def serve() -> None:
    """The worker's loop (``runtime.helper_process``): answers requests until its
    input ends."""
    requests, replies = helper_process.serving()
    while (request := helper_process.receive(requests)) is not None:
        ok, answer, where, rss = _serve(*request)
        try:
            helper_process.send(replies, (ok, answer, where, rss))
        except (pickle.PicklingError, TypeError, AttributeError) as error:  # an answer that cannot cross
            helper_process.send(replies, (False, RuntimeError(f"cannot send the worker's reply: {error}"), where, rss))
        except BrokenPipeError:  # the caller is gone
            return
