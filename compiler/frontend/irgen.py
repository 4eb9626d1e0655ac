"""IR generation: the checked syntax tree becomes `func.func`s of `graph` ops.

Everything was resolved by the checker (types, axes, shapes, the callee); this
module only spells it in IR. NumPy broadcasting becomes explicit `graph.broadcast`
ops, literals become rank-0 `graph.constant`s, and NumPy's vector cases of `@`
become reshapes around a matrix product.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from compiler.frontend import ast, load
from compiler.frontend.check import (
    NCHW_TO_NHWC,
    NHWC_TO_NCHW,
    OIHW_TO_HWIO,
    BatchNormInfo,
    BroadcastToInfo,
    CallInfo,
    CastInfo,
    CheckedFunction,
    CheckedModule,
    ConcatInfo,
    ElementwiseInfo,
    GatherInfo,
    IotaInfo,
    MatmulInfo,
    NormInfo,
    PadInfo,
    PowInfo,
    ReduceInfo,
    ReshapeInfo,
    SliceInfo,
    SoftmaxInfo,
    SplitInfo,
    TransposeInfo,
    WindowInfo,
)
from compiler.frontend.diagnostics import Diagnostic, SourceError, SourceFile, Span
from compiler.frontend.types import Shape, TensorTy
from dialects import graph, reductions
from dialects.elementwise import Accepts
from dialects.sizes import Linear, is_derived, substitute
from dialects.tensor_types import Dim, tensor_type

COMPARE = {p.value: p for p in graph.ComparePredicate}
#: the composites with a reduction's signature: (x, axes, keepdims, ddof) -> op
STATISTICS: dict[str, Callable[..., Operation]] = {
    "logsumexp": lambda x, axes, keepdims, ddof: graph.LogSumExpOp(x, axes, keepdims),
    "var": graph.VarOp,
    "std": graph.StdOp,
}


Substitution = dict[str, Dim]
#: a function and the renaming of its sizes that one specialisation of it applies
_Key = tuple[str, tuple[tuple[str, Dim], ...]]


def ir_type(ty: TensorTy, subst: Substitution | None = None) -> TensorType:
    """The IR type of a checked type, size names renamed through `subst`."""
    return tensor_type(ty.dtype, _renamed(ty.shape, subst or {}))


def _renamed(shape: Shape, subst: Substitution) -> Shape:
    return tuple(substitute(d, subst) for d in shape)


def _key(name: str, subst: Substitution) -> _Key:
    return name, tuple(sorted((k, v) for k, v in subst.items() if k != v))


def _values(stmt: ast.Stmt) -> list[ast.Expr]:
    return list(stmt.values) if isinstance(stmt, ast.Return) else [stmt.value]


@dataclass(frozen=True)
class GeneratedModule:
    """A program's verified graph-level module, with what a later stage needs to
    report a problem against the source: each function's name by its symbol (a
    specialisation's symbol names the function it specialises), and where the source
    makes each call."""

    module: ModuleOp
    source: SourceFile
    function_names: dict[str, str]
    call_spans: dict[func.CallOp, Span]

    def error_at(self, call: func.CallOp, message: str) -> SourceError:
        """An error of the program at the place where it makes ``call``."""
        return SourceError([Diagnostic(self.call_spans[call], message)], self.source)


def generate(text: str, path: str) -> GeneratedModule:
    """Source text to a verified graph-level module; raises SourceError on a bad program."""
    builder = _ModuleBuilder(load(text, path))
    module = builder.build()
    names = {symbol: name for (name, _), symbol in builder.symbols.items()}
    return GeneratedModule(module, SourceFile(path, text), names, builder.call_spans)


class _ModuleBuilder:
    """Builds one `func.func` per function, plus one specialisation per distinct way a
    function is called with other sizes than its own names: `fn f(x: f32[N])` called on
    an `f32[M]` becomes `@f_N_M(%x: tensor<?xf32, ["M"]>)`, since a `func.call`'s operand
    types must equal its callee's parameter types."""

    def __init__(self, checked: CheckedModule):
        self.checked = checked
        self.module = ModuleOp([])
        self.builder = Builder(InsertPoint.at_end(self.module.body.block))
        self.symbols: dict[_Key, str] = {}
        self.taken: set[str] = set(checked.functions)
        self.call_spans: dict[func.CallOp, Span] = {}  # where the source makes each call

    def build(self) -> ModuleOp:
        for name in self.checked.functions:  # source order; a specialisation comes before its first caller
            self.function(name, {})
        self.module.verify()
        return self.module

    def function(self, name: str, subst: Substitution) -> str:
        """The symbol of function `name` with its sizes renamed by `subst`, built once
        together with the specialisations it calls, each inserted before its first caller.
        Iterative (a depth-first walk with its own stack) so that a long chain of calls
        cannot exhaust Python's stack."""
        root = _key(name, subst)
        if root not in self.symbols:
            self._name(root)
            pending = [(root, iter(self._callees(root)))]
            while pending:
                key, callees = pending[-1]
                for callee in callees:
                    if callee not in self.symbols:
                        self._name(callee)
                        pending.append((callee, iter(self._callees(callee))))
                        break
                else:
                    pending.pop()
                    function = _FunctionBuilder(self, self.checked.functions[key[0]], self.symbols[key], dict(key[1]))
                    self.builder.insert(function.build())
        return self.symbols[root]

    def _name(self, key: _Key) -> None:
        """Gives a specialisation its symbol: the function's own name, or a fresh one
        clear of the user's functions."""
        name, renaming = key
        symbol = name
        if renaming:
            symbol += "".join(f"_{k}_{v}" for k, v in renaming).replace("/", "_").replace("*", "_")
            while symbol in self.taken:
                symbol += "_"
            self.taken.add(symbol)
        self.symbols[key] = symbol

    def _callees(self, key: _Key) -> list[_Key]:
        """The specialisations function `key` calls, in the order its IR is built:
        statement by statement, each call after the calls in its arguments."""
        subst = dict(key[1])
        order: list[_Key] = []
        roots = [v for stmt in self.checked.functions[key[0]].node.body for v in _values(stmt)]
        stack: list[tuple[ast.Expr, bool]] = [(e, False) for e in reversed(roots)]
        while stack:
            e, operands_done = stack.pop()
            info = getattr(e, "info", None)
            if info is None:
                continue
            if operands_done:
                order.append(self.callee_key(info, subst))
            else:
                if isinstance(info, CallInfo):
                    stack.append((e, True))
                stack.extend((o, False) for o in reversed(info.operands))
        return order

    def callee_key(self, info: CallInfo, subst: Substitution) -> _Key:
        """The specialisation a call needs: the callee with its sizes bound to the shapes
        of the arguments, as the caller (renamed by `subst`) sees them."""
        callee = self.checked.functions[info.callee]
        binding: Substitution = {}
        for param_ty, arg in zip(callee.param_types, info.operands):
            for dim, actual in zip(param_ty.shape, _renamed(arg.checked_ty.shape, subst)):
                if isinstance(dim, str) and not is_derived(dim):  # derived ones follow from these
                    binding[dim] = actual
        return _key(info.callee, binding)


class _FunctionBuilder:
    def __init__(self, parent: _ModuleBuilder, function: CheckedFunction, symbol: str, subst: Substitution):
        self.parent = parent
        self.function = function
        self.symbol = symbol
        self.subst = subst
        self.block = Block(arg_types=[self.type(t) for t in function.param_types])
        self.builder = Builder(InsertPoint.at_end(self.block))
        self.env: dict[str, SSAValue] = {}
        #: the values of the left operands of a chain built before their users (`expr`)
        self.chained: dict[ast.Expr, SSAValue] = {}
        for param, arg in zip(function.node.params, self.block.args):
            arg.name_hint = _hint(param.name)
            self.env[param.name] = arg

    def build(self) -> func.FuncOp:
        for stmt in self.function.node.body:
            if isinstance(stmt, ast.Assign):
                value = self.expr(stmt.value)
                if value.name_hint is None and not isinstance(value.owner, Block):
                    value.name_hint = _hint(stmt.name)
                self.env[stmt.name] = value
            elif isinstance(stmt, ast.Unpack):
                for name, value in zip(stmt.names, self.several(stmt.value)):
                    if value.name_hint is None and not isinstance(value.owner, Block):
                        value.name_hint = _hint(name)
                    self.env[name] = value
            else:
                values = [self.expr(v) for v in stmt.values]
                self.builder.insert(func.ReturnOp(*values))
        result_types = [self.type(t) for t in self.function.result_types]
        return func.FuncOp(
            self.symbol,
            ([a.type for a in self.block.args], result_types),
            Region(self.block),
        )

    def type(self, ty: TensorTy) -> TensorType:
        return ir_type(ty, self.subst)

    def emit(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def widen(self, value: SSAValue, ty: TensorTy) -> SSAValue:
        """`value` broadcast to the shape of `ty` (its dtype is already right)."""
        target = self.type(ty)
        if value.type == target:
            return value
        return self.emit(graph.BroadcastOp(value, target))

    def expr(self, e: ast.Expr) -> SSAValue:
        """The value of `e`, its ops inserted. The binary operations down its left operands
        are built first, deepest first (`ast.left_chain`), each leaving its value for the
        next: the ops come in the order a recursive walk gives, and a flat chain of any
        length costs no depth of Python's stack."""
        if e in self.chained:
            return self.chained.pop(e)
        for below in reversed(ast.left_chain(e)[1:]):
            self.chained[below] = self.operation(below)
        return self.operation(e)

    def operation(self, e: ast.Expr) -> SSAValue:
        if isinstance(e, ast.Name):
            return self.env[e.name]
        if isinstance(e, ast.IntLit | ast.FloatLit | ast.BoolLit):
            return self.emit(graph.ConstantOp.scalar(e.value, e.checked_ty.dtype))
        handler = _INFO_HANDLERS[type(e.info)]
        return handler(self, e)

    # -- one method per kind of checker info --

    def elementwise(self, e: ast.Expr) -> SSAValue:
        info: ElementwiseInfo = e.info
        if info.op == "where":
            cond, a, b = info.operands
            shape = e.checked_ty.shape
            return self.emit(
                graph.SelectOp(
                    self.widen(self.expr(cond), TensorTy("bool", shape)),
                    self.widen(self.expr(a), e.checked_ty),
                    self.widen(self.expr(b), e.checked_ty),
                )
            )
        if info.op in COMPARE:
            lhs, rhs = info.operands
            shape = e.checked_ty.shape
            dtype = lhs.checked_ty.dtype
            return self.emit(
                graph.CompareOp(
                    COMPARE[info.op],
                    self.widen(self.expr(lhs), TensorTy(dtype, shape)),
                    self.widen(self.expr(rhs), TensorTy(dtype, shape)),
                )
            )
        operands = [self.widen(self.expr(o), TensorTy(o.checked_ty.dtype, e.checked_ty.shape)) for o in info.operands]
        return self.emit(graph.ELEMENTWISE[info.op](*operands))

    def power(self, e: ast.Expr) -> SSAValue:
        base, exponent = (self.widen(self.expr(o), e.checked_ty) for o in e.info.operands)
        return self.emit(graph.PowOp(base, exponent))

    def cast(self, e: ast.Expr) -> SSAValue:
        (x,) = e.info.operands
        return self.emit(graph.CastOp(self.expr(x), self.type(e.checked_ty)))

    def reduce(self, e: ast.Expr) -> SSAValue:
        info: ReduceInfo = e.info
        (x,) = info.operands
        value = self.expr(x)
        if info.op in STATISTICS:
            return self.emit(STATISTICS[info.op](value, info.axes, info.keepdims, info.ddof))
        reduction = reductions.BY_KIND[info.op]
        if reduction.accepts is Accepts.BOOL and x.checked_ty.dtype != "bool":  # NumPy: nonzero is true
            zero = self.emit(graph.ConstantOp.scalar(0, x.checked_ty.dtype))
            value = self.emit(graph.CompareOp(graph.ComparePredicate.NE, value, self.widen(zero, x.checked_ty)))
        return self.emit(graph.ReduceOp(value, reduction.kind, info.axes, info.keepdims))

    def softmax(self, e: ast.Expr) -> SSAValue:
        (x,) = e.info.operands
        return self.emit(graph.SoftmaxOp(self.expr(x), e.info.axis))

    def norm(self, e: ast.Expr) -> SSAValue:
        info: NormInfo = e.info
        if info.op == "layernorm":
            x, gamma, beta = (self.expr(o) for o in info.operands)
            return self.emit(graph.LayerNormOp(x, gamma, beta, info.eps))
        x, gamma = (self.expr(o) for o in info.operands)
        return self.emit(graph.RmsNormOp(x, gamma, info.eps))

    def batchnorm(self, e: ast.Expr) -> SSAValue:
        info: BatchNormInfo = e.info
        x, mean, var, gamma, beta = (self.expr(o) for o in info.operands)
        return self.emit(graph.BatchNormOp(x, mean, var, gamma, beta, info.eps, info.axis))

    def window(self, e: ast.Expr) -> SSAValue:
        """conv2d and the pools, on NHWC values: NCHW operands are transposed to NHWC
        (and an OIHW kernel to HWIO) and the result back, index maps that fold away."""
        info: WindowInfo = e.info
        operands = [self.expr(o) for o in info.operands]
        if info.layout == "NCHW":
            perms = (NCHW_TO_NHWC, OIHW_TO_HWIO)
            operands = [self.emit(graph.TransposeOp(v, perm)) for v, perm in zip(operands, perms)]
        op: Operation
        if info.op == "conv2d":
            x, w = operands
            op = graph.Conv2DOp(x, w, info.strides, info.dilations, info.low, info.high, info.groups)
        else:
            (x,) = operands
            op = graph.PoolOp(x, info.op, info.window, info.strides, info.low, info.high)
        value = self.emit(op)
        if info.layout == "NCHW":
            value = self.emit(graph.TransposeOp(value, NHWC_TO_NCHW))
        return value

    def transpose(self, e: ast.Expr) -> SSAValue:
        (x,) = e.info.operands
        return self.emit(graph.TransposeOp(self.expr(x), e.info.perm))

    def reshape(self, e: ast.Expr) -> SSAValue:
        (x,) = e.info.operands
        return self.emit(graph.ReshapeOp(self.expr(x), self.type(e.checked_ty)))

    def broadcast_to(self, e: ast.Expr) -> SSAValue:
        (x,) = e.info.operands
        return self.widen(self.expr(x), e.checked_ty)

    def iota(self, e: ast.Expr) -> SSAValue:
        return self.emit(graph.IotaOp(self.type(e.checked_ty), e.info.axis))

    def gather(self, e: ast.Expr) -> SSAValue:
        info: GatherInfo = e.info
        x, indices = (self.expr(o) for o in info.operands)
        return self.emit(graph.GatherOp(x, indices, info.axis, info.wraparound))

    def concat(self, e: ast.Expr) -> SSAValue:
        """concat, and stack as a concat of each operand with the new axis inserted."""
        info: ConcatInfo = e.info
        operands = [self.expr(o) for o in info.operands]
        if info.op == "stack":
            operands = [
                self.emit(graph.ReshapeOp(v, self.type(TensorTy(o.checked_ty.dtype, o.checked_ty.shape[: info.axis] + (1,) + o.checked_ty.shape[info.axis :]))))
                for v, o in zip(operands, info.operands)
            ]
        return self.emit(graph.ConcatOp(operands, info.axis))

    def pad(self, e: ast.Expr) -> SSAValue:
        info: PadInfo = e.info
        (x,) = info.operands
        low, high = zip(*info.widths)
        return self.emit(graph.PadOp(self.expr(x), low, high, float(info.value)))

    def slice(self, e: ast.Expr) -> SSAValue:
        info: SliceInfo = e.info
        (x,) = info.operands
        window = TensorTy(e.checked_ty.dtype, info.window)
        starts = [start.substituted(self.subst) for start in info.starts]
        value = self.emit(graph.SliceOp(self.expr(x), starts, info.steps, self.type(window)))
        if info.window != e.checked_ty.shape:  # integer subscripts drop their axes
            value = self.emit(graph.ReshapeOp(value, self.type(e.checked_ty)))
        return value

    def several(self, e: ast.Expr) -> list[SSAValue]:
        """The values of `split(...)` or of a call of a function with several results."""
        info = e.info
        if isinstance(info, CallInfo):
            return list(self.emit_call(e).results)
        assert isinstance(info, SplitInfo)
        (x,) = info.operands
        value = self.expr(x)
        part = Linear.of(info.part[info.axis]).substituted(self.subst)
        part_type = self.type(TensorTy(info.operands[0].checked_ty.dtype, info.part))
        values = []
        for k in range(info.parts):
            starts = [part.scaled(k) if a == info.axis else 0 for a in range(len(info.part))]
            values.append(self.emit(graph.SliceOp(value, starts, [1] * len(info.part), part_type)))
        return values

    def matmul(self, e: ast.Expr) -> SSAValue:
        info: MatmulInfo = e.info
        lhs_node, rhs_node = info.operands
        lhs, rhs = self.expr(lhs_node), self.expr(rhs_node)
        dtype = e.checked_ty.dtype
        if info.lhs_1d:  # [K] -> [1, K]
            lhs = self.emit(graph.ReshapeOp(lhs, self.type(TensorTy(dtype, (1, *lhs_node.checked_ty.shape)))))
        if info.rhs_1d:  # [K] -> [K, 1]
            rhs = self.emit(graph.ReshapeOp(rhs, self.type(TensorTy(dtype, (*rhs_node.checked_ty.shape, 1)))))
        product = self.emit(graph.MatmulOp(lhs, rhs))
        if info.lhs_1d or info.rhs_1d:
            product = self.emit(graph.ReshapeOp(product, self.type(e.checked_ty)))
        return product

    def call(self, e: ast.Expr) -> SSAValue:
        return self.emit_call(e).results[0]

    def emit_call(self, e: ast.Expr) -> func.CallOp:
        """The call of a user function, inserted: its results are the function's."""
        info: CallInfo = e.info
        args = [self.expr(a) for a in info.operands]
        symbol = self.parent.symbols[self.parent.callee_key(info, self.subst)]  # built before this caller
        call = func.CallOp(symbol, args, [self.type(t) for t in info.results or (e.checked_ty,)])
        self.parent.call_spans[call] = e.span
        self.builder.insert(call)
        return call


_INFO_HANDLERS: dict[type, Callable[[_FunctionBuilder, ast.Expr], SSAValue]] = {
    ElementwiseInfo: _FunctionBuilder.elementwise,
    PowInfo: _FunctionBuilder.power,
    CastInfo: _FunctionBuilder.cast,
    ReduceInfo: _FunctionBuilder.reduce,
    SoftmaxInfo: _FunctionBuilder.softmax,
    NormInfo: _FunctionBuilder.norm,
    BatchNormInfo: _FunctionBuilder.batchnorm,
    WindowInfo: _FunctionBuilder.window,
    TransposeInfo: _FunctionBuilder.transpose,
    ReshapeInfo: _FunctionBuilder.reshape,
    BroadcastToInfo: _FunctionBuilder.broadcast_to,
    MatmulInfo: _FunctionBuilder.matmul,
    IotaInfo: _FunctionBuilder.iota,
    GatherInfo: _FunctionBuilder.gather,

    ConcatInfo: _FunctionBuilder.concat,
    PadInfo: _FunctionBuilder.pad,
    CallInfo: _FunctionBuilder.call,
    SliceInfo: _FunctionBuilder.slice,
}


def _hint(name: str) -> str | None:
    """An SSA name hint for a DSL name, when it is one xDSL can print."""
    return name if name.isascii() and name.replace("_", "a").isalnum() and not name[0].isdigit() else None
