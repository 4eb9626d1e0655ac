"""tinygrad-``check_schedule``-style helpers: how many kernels a program becomes,
and what they are when the count is not the expected one.

    from tests.passes.fusion.schedule import assert_kernel_count, fuse_text
    module = fuse_text(MLIR_TEXT)          # parse + fuse (options as for FusePass)
    assert_kernel_count(module, 1)         # prints the kernels if not 1

``assert_kernel_count`` takes any fused module (``fuse``/``no-fuse`` output), so
sample tests can run their own pipeline and reuse it.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.parser import Parser

from compiler.context import make_context
from dialects import graph
from passes.fusion.classify import is_free, short_name
from passes.fusion.fuse import FusePass, NoFusePass, not_fused_reasons
from passes.fusion.report import entry_functions, op_labels


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def fuse_text(text: str, **options) -> ModuleOp:
    """``text`` parsed and fused with ``FusePass(**options)``, verified."""
    module = parse(text)
    FusePass(**options).apply(make_context(), module)
    module.verify()
    return module


def no_fuse_text(text: str) -> ModuleOp:
    module = parse(text)
    NoFusePass().apply(make_context(), module)
    module.verify()
    return module


def fusion_groups(module: ModuleOp, entry: str | None = None) -> list[graph.FusionGroupOp]:
    return [
        op
        for fn in entry_functions(module, entry)
        for op in fn.body.block.ops
        if isinstance(op, graph.FusionGroupOp)
    ]


def _attr(op, name: str) -> str:
    value = op.attributes.get(name)
    return value.data if isinstance(value, StringAttr) else "?"


def describe_schedule(module: ModuleOp, entry: str | None = None) -> str:
    """One line per kernel (name, kind, rule, ops) and one per edge left unfused."""
    lines: list[str] = []
    for fn in entry_functions(module, entry):
        labels = op_labels(fn)
        lines.append(f"@{fn.sym_name.data}:")
        for op in fn.body.block.ops:
            if isinstance(op, graph.FusionGroupOp):
                ops = [labels[o] for o in op.body.block.ops if o in labels]
                lines.append(
                    f"  {op.kernel_name}  kind={_attr(op, 'kind')} rule={_attr(op, 'rule')}  "
                    f"ops=[{', '.join(ops)}]"
                )
            elif not isinstance(op, func.ReturnOp) and not is_free(op):
                lines.append(f"  (not in a group) {short_name(op)}")
        for record in not_fused_reasons(fn):
            lines.append(f"  not fused: {record['producer']} -> {record['consumer']}: {record['reason']}")
    return "\n".join(lines)


def kernel_count(module: ModuleOp, entry: str | None = None) -> int:
    return len(fusion_groups(module, entry))


def assert_kernel_count(module: ModuleOp, expected: int, entry: str | None = None) -> None:
    """Fail, printing the kernels, unless ``entry`` became ``expected`` kernels."""
    count = kernel_count(module, entry)
    if count != expected:
        schedule = describe_schedule(module, entry)
        print(schedule)
        raise AssertionError(f"expected {expected} kernels, got {count}:\n{schedule}")
