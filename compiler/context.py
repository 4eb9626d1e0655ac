"""The xDSL context holding every dialect fusec's IR may contain."""

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math

from dialects.graph import Graph
from dialects.loop import Loop


def project_dialects():
    """The project's own dialects, by name (loaded lazily by `fusec-opt`)."""
    return {"graph": lambda: Graph, "loop": lambda: Loop}


def make_context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math):
        ctx.load_dialect(dialect)
    for name, factory in project_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
