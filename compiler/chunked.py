"""`fusec.dask`: a program run over Dask arrays, split where the compiler says it can be.

    import dask.array as da
    import fusec.dask

    layernorm = fusec.dask.compile("samples/layernorm.tdsl")
    y = layernorm(da.from_zarr("x.zarr"), gamma, beta)   # a dask array, nothing run yet
    y.to_zarr("y.zarr")                                  # or y.compute()

Dask schedules; fusec says how each chunk is computed. `partition-axes` tells, for
each symbolic size, whether the program is parallel along it, a reduction or
unsplittable, and `split-chunks` cuts the program into the functions a chunked run
calls (`passes/split_chunks.py`):

- chunks along parallel sizes: `NAME.chunk` runs on every chunk through
  `dask.array.blockwise`, arguments lacking the size (weights) passed whole;
- chunks along one reduction size: each round of cuts is a blockwise of
  `NAME.partialK` returning a partial per chunk, stacked along a new leading axis, and
  one task per block of the other sizes folds every chunk's partial with a
  fusec-compiled reduction; the next round and `NAME.chunk` read the combined values;
- chunks along an unsplittable size, along two reduction sizes, or along a fixed size
  are refused with an `InputError` naming the size, the op and the rechunk that makes
  the call legal.

Each task compiles its functions once per process (the disk cache makes that a load
on every worker after the first) and runs them as any call does, so a chunk's result
is the single-machine one on that chunk; reassociated reductions (the combine of
partial sums) agree to float tolerance. Every size a reduction divides by stays the
whole size (a `graph.dim_size` of a split size becomes a constant).
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from compiler.api import Program
from compiler.api import compile as compile_program
from compiler.context import make_context
from dialects import graph
from dialects.reductions import BY_FOLD
from dialects.sizes import evaluate_dim, is_derived
from dialects.tensor_types import NUMPY_DTYPES, dtype_of, shape_of, tensor_type
from passes.partition_axes import AxisPartition, SplitKind, partition
from passes.split_chunks import (
    COMBINE_ATTR,
    OPERANDS_ATTR,
    RESULTS_ATTR,
    SplitChunksPass,
    chunk_name,
    listed_names,
    partial_name,
)
from runtime import registry
from runtime.errors import InputError
from runtime.inputs import Param, bind_sizes


def dask_array():
    try:
        import dask.array as da
    except ImportError:
        raise InputError("fusec.dask needs Dask: pip install 'dask[array]' distributed") from None
    return da


def cupy_module(why: str = "chunks on GPUs are CuPy arrays"):
    """CuPy; an `InputError` saying `why` it is needed and how to install it where it
    is missing."""
    try:
        import cupy
    except ImportError:
        raise InputError(f"{why}: pip install cupy-cuda12x (or -cuda13x)") from None
    return cupy


def to_gpu(array):
    """`array` (a Dask array) with each chunk a CuPy array on the GPU of the worker that
    makes it: read from Zarr or received there, a chunk is copied to that card once, and
    every task on that worker reading it (and every result made from it) stays there.
    With a worker per GPU (dask-cuda's `LocalCUDACluster`, `--dask local-cuda`), the
    chunks are spread over the cards as Dask spreads its tasks."""
    cupy = cupy_module()
    return array.map_blocks(cupy.asarray, dtype=array.dtype, meta=cupy.empty((0,) * array.ndim, array.dtype))


def to_host(array):
    """`array` with each chunk copied back to host memory (NumPy), where its worker
    holds it: what a result's chunks need before they are written to Zarr or gathered
    by a process without the GPU."""
    cupy = cupy_module()
    return array.map_blocks(cupy.asnumpy, dtype=array.dtype, meta=np.empty((0,) * array.ndim, array.dtype))


# -- what a task runs -------------------------------------------------------------------


@dataclass(frozen=True)
class ProgramText:
    """A module of graph IR and the options to compile it with: what a task carries to
    a worker (a few kilobytes of text) instead of compiled code."""

    ir: str = field(compare=False)  # the digest stands for it: a task's copy hashes fast
    target: str
    fuse: bool = True
    matmul: str = "auto"
    disabled_rules: tuple[str, ...] = ()
    calibrate: bool = True
    digest: str = ""

    def __post_init__(self):
        if not self.digest:
            object.__setattr__(self, "digest", hashlib.sha256(self.ir.encode()).hexdigest())

    def program(self) -> Program:
        """The program, parsed and checked once per process."""
        with _LOCK:
            program = _PROGRAMS.get(self)
            if program is None:
                from xdsl.parser import Parser

                module = Parser(make_context(), self.ir).parse_module()
                program = _PROGRAMS[self] = Program(
                    module, "<fusec.dask>", self.target, self.fuse, self.matmul, self.disabled_rules, self.calibrate
                )
        return program


_PROGRAMS: dict[ProgramText, Program] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ChunkCall:
    """Runs one function of a program on one chunk of each argument; returns its
    results as a tuple (its one result alone with `single`), each partial with a
    leading axis of 1 to stack the chunks' partials along."""

    program: ProgramText
    function: str
    stacked: bool = False
    single: bool = False

    def __call__(self, *blocks):
        program = self.program.program()
        share_cores(program)
        arrays = [contiguous(one_block(b)) for b in blocks]
        results = [as_chunk(r) for r in program.run(self.function, arrays)]
        if self.stacked:
            results = [r[None] for r in results]
        return results[0] if self.single else tuple(results)


def one_block(block):
    """The block Dask passes for an operand whose dimensions outside the mapped ones
    are one chunk each: a list of one block per such dimension (`concatenate=False`,
    which spares the copy Dask's concatenation makes even of a single block)."""
    while isinstance(block, list):
        (block,) = block
    return block


def contiguous(block):
    """A block as a kernel takes it: C-contiguous, a GPU array (CuPy's) left where it is."""
    if hasattr(block, "__cuda_array_interface__"):
        return block if block.flags.c_contiguous else block.copy(order="C")
    return np.asarray(block, order="C")  # (np.ascontiguousarray makes a rank-0 block rank 1)


def as_chunk(result):
    """A kernel's result as a Dask chunk: a result left on the GPU (from GPU chunks)
    becomes a CuPy array, without a copy."""
    if isinstance(result, np.ndarray):
        return result
    import cupy

    return cupy.asarray(result)


def share_cores(program: Program) -> None:
    """In a Dask worker running N tasks at once, a task's CPU kernels take 1/N of the
    threads Numba has (`NUMBA_NUM_THREADS`, by default every core), so that the
    worker's tasks together use the cores once instead of N times over. Numba keeps
    the count per thread; a task runs on one of the worker's threads. (A GPU program's
    kernels run on its GPU: its worker's cores are left alone.)"""
    if program.backend.takes_device_arrays:
        return
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):  # not in a worker
        return
    import numba

    from runtime.cpu.threads import configure_pool

    configure_pool()  # setting the count starts Numba's pool
    threads = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # numba sets its config through globals()
    numba.set_num_threads(max(1, threads // max(1, worker.state.nthreads)))


@dataclass(frozen=True)
class CombineCall:
    """Folds the partials of every chunk of a reduction size (blocks with a leading axis
    of 1, NumPy's or CuPy's) along that axis with a fusec-compiled reduction (the one
    whose fold combines them: `sum` for `add`). With `pick`, each chunk's block is the
    tuple of all its partials, of which the `pick`th is folded."""

    program: ProgramText
    pick: int | None = None

    def __call__(self, partials: list):
        from dask.array.dispatch import concatenate_lookup

        program = self.program.program()
        share_cores(program)
        if self.pick is not None:
            partials = [p[self.pick] for p in partials]
        stack = concatenate_lookup.dispatch(type(partials[0]))(partials, axis=0)
        return as_chunk(program.run(COMBINE_FUNCTION, [contiguous(stack)])[0])


#: the function of a `combine_program`
COMBINE_FUNCTION = "combine"


def combine_program(combiner: str, dtype: str, rank: int, target: str) -> ProgramText:
    """A module with `@combine`: the reduction that folds by `combiner` (a
    `dialects.reductions.Fold`) over axis 0 of a stack of partials of `rank` dimensions
    after it."""
    body = Block(arg_types=[tensor_type(dtype, ("K", *(f"P{i}" for i in range(rank))))])
    body.args[0].name_hint = "partials"
    reduce = graph.ReduceOp(body.args[0], BY_FOLD[combiner].kind, [0], False)
    body.add_ops([reduce, func.ReturnOp(reduce.result)])
    function = func.FuncOp(COMBINE_FUNCTION, ([body.args[0].type], [reduce.result.type]), Region(body))
    return ProgramText(str(ModuleOp([function])), target)


# -- the plan of a call -----------------------------------------------------------------


def _rechunk_hint(params: Sequence[Param], arrays, size) -> str:
    """The rechunk that puts all of `size` (a size name, or (param index, axis)) in one chunk."""
    calls = []
    for i, (param, array) in enumerate(zip(params, arrays)):
        axes = [
            a
            for a, dim in enumerate(param.shape)
            if (dim == size if isinstance(size, str) else (i, a) == size) and array.numblocks[a] > 1
        ]
        if axes:
            calls.append(f"{param.name}.rechunk({{{', '.join(f'{a}: -1' for a in axes)}}})")
    return ", ".join(calls)


def split_sizes(params: Sequence[Param], arrays, axes: dict[str, AxisPartition]) -> tuple[list[str], str]:
    """(the sizes the arrays are split along, the one reduction size among them or "");
    an `InputError` for a split that the program cannot run on."""
    split: list[str] = []
    for i, (param, array) in enumerate(zip(params, arrays)):
        for axis, dim in enumerate(param.shape):
            if array.numblocks[axis] == 1 or dim in split:
                continue
            if not isinstance(dim, str) or is_derived(dim) or dim not in axes:
                raise InputError(
                    f"argument '{param.name}' is split along axis {axis}, of size {dim}: fusec.dask splits only "
                    f"along the symbolic sizes of the signature; rechunk with {_rechunk_hint(params, arrays, (i, axis))}"
                )
            split.append(dim)
    return split, reduction_size(split, axes, lambda dim: f"rechunk with {_rechunk_hint(params, arrays, dim)}")


def reduction_size(split: Sequence[str], axes: dict[str, AxisPartition], remedy: Callable[[str], str]) -> str:
    """The one reduction size among the sizes `split` ("" for none); an `InputError`
    for a split the program cannot take, ending with `remedy(size)`, what the caller
    can do about that size (the API's rechunk, the command's `--chunks`)."""
    for dim in split:
        if axes[dim].kind is SplitKind.UNSPLITTABLE:
            raise InputError(
                f"the arguments are split along {dim}, but the program cannot be: {axes[dim].reason}; {remedy(dim)}"
            )
    reductions = [d for d in split if axes[d].kind is SplitKind.REDUCTION]
    if len(reductions) > 1:
        raise InputError(
            f"the arguments are split along {' and '.join(reductions)}, each a reduction: fusec.dask splits one "
            f"reduction size at a time; {remedy(reductions[-1])}"
        )
    return reductions[0] if reductions else ""


@dataclass(frozen=True)
class Picked:
    """A result of a call with several: the `index`th of each block of `call` (a Dask
    array of tuples); `blocks` maps each of the result's block keys to the call's block
    it is picked from."""

    call: Any  # a dask.array.Array (Dask is imported where it is used)
    index: int
    blocks: dict


class _Letters:
    """Dask's index names for the dimensions of values: a size's name, shared by every
    value with that size; a fresh name for any other dimension (never split)."""

    def __init__(self, sizes: dict[str, int]):
        self.sizes = sizes
        self.fresh = itertools.count()

    def of(self, shape) -> tuple[str, ...]:
        return tuple(d if isinstance(d, str) and d in self.sizes else f".{next(self.fresh)}" for d in shape)


# -- the API ----------------------------------------------------------------------------


class DaskProgram:
    """A function of a program as a function of Dask arrays (see the module docstring):
    `program(*arrays, **named)` returns a Dask array per result, nothing computed yet.
    `partition` holds, for each symbolic size of the signature, how the function
    splits along it."""

    def __init__(self, program: Program, entry: str | None = None):
        if not program.backend.runs_kernels:
            raise InputError(f"fusec.dask runs compiled kernels: choose target {registry.kernel_choices()}")
        self.program = program
        self.entry = entry or program.default_entry()
        self.params = program.params(self.entry)
        self._opt: ModuleOp = program.compilation(self.entry).module("opt")
        function = next(f for f in self._opt.ops if isinstance(f, func.FuncOp) and f.sym_name.data == self.entry)
        self.partition: dict[str, AxisPartition] = partition(function)
        self._splits: dict[tuple, tuple[ProgramText, ModuleOp]] = {}

    def _text(self, ir: str) -> ProgramText:
        p = self.program
        return ProgramText(ir, p.target, p.fuse, p.matmul, p.disabled_rules, p.calibrate)

    def split(self, reduction: str, whole: dict[str, int]) -> tuple[ProgramText, ModuleOp]:
        """The module `split-chunks` makes for a split along `reduction` and the sizes
        in `whole` (their whole sizes)."""
        key = (reduction, tuple(sorted(whole.items())))
        if key not in self._splits:
            module = self._opt.clone()
            sizes = ",".join(f"{name}={size}" for name, size in sorted(whole.items()))
            SplitChunksPass(self.entry, reduction, sizes).apply(make_context(), module)
            self._splits[key] = (self._text(str(module)), module)
        return self._splits[key]

    def __call__(self, *given, **named):
        da = dask_array()
        arrays = [
            a if isinstance(a, da.Array) else da.from_array(a if hasattr(a, "shape") else np.asarray(a), chunks=-1)
            for a in self.program.arguments(self.entry, given, named)
        ]  # an array not yet Dask's is one chunk: Dask's automatic chunks would split any axis
        for param, array in zip(self.params, arrays):
            if any(np.isnan(c) for chunks in getattr(array, "chunks", ()) for c in chunks):
                raise InputError(
                    f"argument '{param.name}' has chunks of unknown size: call compute_chunk_sizes() first"
                )
        sizes = bind_sizes(self.params, arrays, self.entry)
        split, reduction = split_sizes(self.params, arrays, self.partition)
        text, module = self.split(reduction, {s: sizes[s] for s in split})
        functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        letters = _Letters(sizes)
        values = {p.name: (a, letters.of(p.shape)) for p, a in zip(self.params, arrays)}
        for round_ in itertools.count():
            function = functions.get(partial_name(self.entry, round_))
            if function is None:
                break
            combiners = listed_names(function, COMBINE_ATTR)
            names = listed_names(function, RESULTS_ATTR)
            dtypes = [dtype_of(t) for t in function.function_type.outputs.data]
            stacks = self._run(text, function, values, letters, sizes, stacked=reduction)
            for name, combiner, dtype, (stack, ind, picked) in zip(names, combiners, dtypes, stacks):
                values[name] = (self._combine(stack, picked, combiner, dtype), ind[1:])
        results = self._run(text, functions[chunk_name(self.entry)], values, letters, sizes, stacked="")
        arrays_out = tuple(a for a, _, _ in results)
        return arrays_out[0] if len(arrays_out) == 1 else arrays_out

    def _combine(self, stack, picked: Picked | None, combiner: str, dtype: str):
        """`stack` (axis 0: one block, one partial, per chunk of the reduction size)
        folded along axis 0: one task per block of the other axes, reading the partial
        of every chunk; where `stack` is one result of a call with several (`picked`),
        reading the call's blocks, so that no task picks the result out of each.
        (`dask.array.reduction` adds an identity task per partial and a tree of
        combines; each task costs a distributed scheduler about a millisecond,
        docs/reference.md "On several GPUs".)"""
        from dask.array.core import Array
        from dask.array.utils import meta_from_array
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph
        from dask.typing import Key

        step = CombineCall(
            combine_program(combiner, dtype, stack.ndim - 1, self.program.target),
            None if picked is None else picked.index,
        )
        name = f"{TASK_PREFIX}combine-{tokenize(stack.name, step.program.digest)}"
        read = (lambda key: key) if picked is None else picked.blocks.__getitem__
        layer: dict[Key, tuple] = {
            (name, *index): (step, [read((stack.name, k, *index)) for k in range(stack.numblocks[0])])
            for index in itertools.product(*(range(n) for n in stack.numblocks[1:]))
        }
        graph_ = HighLevelGraph.from_collections(name, layer, dependencies=[stack if picked is None else picked.call])
        return Array(graph_, name, chunks=stack.chunks[1:], meta=meta_from_array(stack._meta, ndim=stack.ndim - 1))

    def _run(
        self,
        text: ProgramText,
        function: func.FuncOp,
        values,
        letters: _Letters,
        sizes,
        stacked: str,
    ):
        """Blockwise calls of `function` over the values it reads: its results as
        (Dask array, index names, `Picked` where the call has several results, else
        None); with `stacked`, each result gains a leading axis along the reduction
        size `stacked`, one element per chunk of it."""
        da = dask_array()
        from dask.array.core import Array
        from dask.array.utils import meta_from_array
        from dask.highlevelgraph import HighLevelGraph
        from dask.typing import Key

        operands = [values[name] for name in listed_names(function, OPERANDS_ATTR)]
        # the call maps over the sizes some operand has in several chunks (and over the
        # reduction size, whose partials it stacks); other dimensions come whole
        out_ind = tuple(
            dict.fromkeys(
                x
                for a, inds in operands
                for x, blocks in zip(inds, a.numblocks)
                if x in sizes and (blocks > 1 or x == stacked)
            )
        )
        like = operands[0][0]  # NumPy or CuPy chunks: the results' are of the same kind
        outputs = []  # (shape, index names, meta) of each result
        for t in function.function_type.outputs.data:
            shape, ind = shape_of(t), letters.of(shape_of(t))
            if stacked:
                shape, ind = (stacked, *shape), (stacked, *ind)
            outputs.append((shape, ind, meta_from_array(like, ndim=len(shape), dtype=NUMPY_DTYPES[dtype_of(t)])))
        name = f"{TASK_PREFIX}{function.sym_name.data}-{_token(text, function.sym_name.data, operands)}"
        arguments = list(itertools.chain.from_iterable(operands))
        if len(outputs) == 1 and set(out_ind) <= set(outputs[0][1]):
            # one result with every mapped size: the blockwise call is the result,
            # its dimensions that no operand has made by the call
            ((shape, ind, meta),) = outputs
            read = {x for _, inds in operands for x in inds}
            array = da.blockwise(
                ChunkCall(text, function.sym_name.data, stacked=bool(stacked), single=True),
                ind,
                *arguments,
                concatenate=False,
                new_axes={x: evaluate_dim(d, sizes) for x, d in zip(ind, shape) if x not in read},
                adjust_chunks={stacked: 1} if stacked else None,
                meta=meta,
                name=name,
            )
            return [(array, ind, None)]
        tmp = da.blockwise(
            ChunkCall(text, function.sym_name.data, stacked=bool(stacked)),
            out_ind,
            *arguments,
            concatenate=False,
            meta=tuple(meta for _, _, meta in outputs),
            name=name,
        )
        chunks = dict(zip(out_ind, tmp.chunks))
        results = []
        for i, (shape, ind, meta) in enumerate(outputs):
            dims = [
                (1,) * len(chunks[x]) if stacked and k == 0 else chunks.get(x, (evaluate_dim(d, sizes),))
                for k, (x, d) in enumerate(zip(ind, shape))
            ]
            leaf = f"{tmp.name}-{i}"
            blocks: dict[Key, Key] = {}
            for index in itertools.product(*(range(len(c)) for c in dims)):
                at = dict(zip(ind, index))
                # a result without one of the mapped sizes is the same in every chunk
                # of it (it reads nothing along it): the first chunk's serves
                key: Key = (leaf, *index)
                blocks[key] = (tmp.name, *(at.get(x, 0) for x in out_ind))
            layer: dict[Key, tuple] = {key: (operator.getitem, block, i) for key, block in blocks.items()}
            graph_ = HighLevelGraph.from_collections(leaf, layer, dependencies=[tmp])
            results.append((Array(graph_, leaf, chunks=tuple(dims), meta=meta), ind, Picked(tmp, i, blocks)))
        return results


#: the start of the name of every task a `DaskProgram` adds to a graph
TASK_PREFIX = "fusec-"


def program_tasks(arrays) -> int:
    """How many of the tasks of Dask arrays `arrays` (results of `DaskProgram` calls)
    run the program (its calls, combines and the picks of a call's several results),
    before Dask's optimisation: what a distributed run of it costs the scheduler, about
    a millisecond each (docs/reference.md "On several GPUs")."""
    from dask.highlevelgraph import HighLevelGraph

    graph = HighLevelGraph.merge(*(a.__dask_graph__() for a in arrays))
    return sum(1 for key in graph if isinstance(key, tuple) and str(key[0]).startswith(TASK_PREFIX))


def _token(text: ProgramText, function: str, operands) -> str:
    from dask.base import tokenize

    return tokenize(text.digest, function, text.target, *[a.name for a, _ in operands])


def compile(
    program_or_path: Program | str | os.PathLike,
    entry: str | None = None,
    target: str = "cpu",
    fuse: bool = True,
    matmul: str = "auto",
    disable_rules: str | Sequence[str] = (),
) -> DaskProgram:
    """A function of `program_or_path` (a `fusec.Program`, or a program's source or
    path, compiled for `target` with the options of `fusec.compile`) as a function of
    Dask arrays. `entry`: the function, by default `main` or the only one."""
    if isinstance(program_or_path, Program):
        return DaskProgram(program_or_path, entry)
    program = compile_program(
        program_or_path,
        target=target,
        fuse=fuse,
        matmul=matmul,
        disable_rules=disable_rules,
    )
    return DaskProgram(program, entry)
