"""A ``gemm`` kernel whose product runs on tensor cores (``gpu.mma``, set by
``passes.cuda.map_gemm`` for a product of two ``f16`` or two ``bf16`` factors) -> Python
source for ``numba.cuda.jit``.

It is ``codegen_gemm``'s tiled product with three pieces replaced:

1. the staging tiles hold the factors in their half type (the factors' values round to
   it there, their storage type: docs/reference.md, Numerics; ``bf16`` as its bits), in
   ``STAGES`` stages of ``TK`` reduction steps: while one stage's products run, the next
   one fills. A factor read along ``k`` is staged with its rows outermost, any other
   ``k`` outermost; each row is padded by 8 halves so that the eight 16-byte rows one
   ``ldmatrix`` reads fall in different shared-memory banks. A factor that is one load of
   an argument along its last axis is copied by 16-byte ``cp.async`` from addresses
   computed once before the loop (``copy_bases``); any other goes through registers as
   in ``codegen_gemm``;
2. the block's 8 warps each compute a 64 x 32 part of the 128 x 128 tile, per 16
   reduction steps 4 x 4 ``mma.m16n8k16`` (``runtime.cuda.tensor_cores``) from fragments
   read by ``ldmatrix.x4`` from a tile holding its rows outermost, ``ldmatrix.x4.trans``
   from one holding ``k`` outermost, at shared addresses computed once (``fragment_bases``);
3. each thread's accumulators are those its fragments give it: rows ``g`` and ``g + 8``
   of each 16-row part, columns ``2q`` and ``2q + 1`` of each 8-column part
   (``g = lane // 4``, ``q = lane % 4``), which is the register tile the epilogue then
   treats as ``codegen_gemm``'s (bias, activation, casts, the output's index map).

The tensor cores add the 16 products of an ``mma`` in their own order, in float32: the
same bits on every run, not a serial sum's (docs/reference.md, Numerics).

Numba's CUDA simulator runs no tensor-core instruction, so its twin (``aligned`` False,
as the simulator's sources are) keeps pieces 1 (staged through registers) and 3 and
replaces 2 with the outer products of ``codegen_gemm`` over the same half tiles: the
staging, the fragment ownership and the epilogue are what the simulator tests; the
instructions' own fragment layouts are tested on a GPU (tests/cuda/test_tensor_cores.py).
"""

from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block

from dialects import loop
from dialects.gpu.mapping import A_ALONG, B_ALONG, MMA
from runtime.codegen_scalar import ScalarSource
from runtime.cuda.codegen_gemm import GemmSource, Side

#: halves added to each staging row (see the module's docstring)
PAD = 8
#: staging tiles in flight: one read by this step's products, one filled for the next
STAGES = 2
#: halves one ``cp.async`` copies (16 bytes)
CHUNK = 8
#: the intrinsics of runtime/cuda/tensor_cores.py a kernel on a GPU imports, beside its
#: ``load_`` and ``mma_`` ones
INTRINSICS = (
    "cp_async_16_at",
    "cp_async_commit",
    "cp_async_wait",
    "global_address",
    "ldmatrix_x4_at",
    "ldmatrix_x4_trans_at",
    "shared_address",
)
#: bytes of a staged element
HALF_BYTES = 2
#: warps side by side along the tile's columns; the others stack along its rows
WARPS_N = 4
#: the shape of one ``mma``: rows, columns, reduction steps
MMA_M, MMA_N, MMA_K = 16, 8, 16
#: a shared tile's elements by ``gpu.mma`` (here and in ``codegen_flash_mma``): ``bf16`` as
#: its two bytes, as its buffers hold it (``runtime/half_floats.py``)
TILE_STORAGE = {"f16": "np.float16", "bf16": "np.uint16"}


def to_tile(source: ScalarSource, half: str, value: str) -> str:
    """A float32 ``value`` as a shared tile of ``gpu.mma`` type ``half`` holds it, rounded
    to nearest even (``TILE_STORAGE``: ``bf16`` as its bits)."""
    if half == "bf16":
        return source.half_call("bf16_bits", value)
    return f"np.float16({value})"


def from_tile(source: ScalarSource, half: str, element: str) -> str:
    """An ``element`` of a shared tile of ``gpu.mma`` type ``half`` as float32 (exact)."""
    if half == "bf16":
        return source.half_call("bf16_value", element)
    return f"np.float32({element})"


class Copy(NamedTuple):
    """The names of one copied slot's values, computed before the reduction."""

    first: str  # the source address of its first step
    step: str  # the bytes a step moves it
    aligned: str  # whether both keep its copies 16-byte aligned
    place: str  # its index in stage 0 of the staging tile
    target: str  # that place's shared address


class MmaGemmSource(GemmSource):
    """The generator of a tensor-core gemm kernel's source, in one variant."""

    schedule_name = "gemm on tensor cores"

    def __init__(self, kernel: loop.KernelOp, variant: str, aligned: bool):
        super().__init__(kernel, variant, aligned)
        half = kernel.attributes[MMA]
        assert isinstance(half, StringAttr)  # as map-gemm writes it
        self.half = half.data
        warps = (self.tm // self.rm) * (self.tn // self.rn) // 32
        self.warp_m, self.warp_n = self.tm // (warps // WARPS_N), self.tn // WARPS_N
        # the thread's register tile is its fragments': 2 rows per 16, 2 columns per 8
        assert (self.rm, self.rn) == (2 * self.warp_m // MMA_M, 2 * self.warp_n // MMA_N), "map-gemm's MMA_TILES"
        #: which staging tiles hold their rows (not ``k``) outermost: a factor read along
        #: ``k`` is staged as it is read, its rows ``TK`` halves long
        self.row_major = {
            name: self.kernel.attributes[along] == StringAttr("k") for name, along in (("a", A_ALONG), ("b", B_ALONG))
        }
        self.stage_name = "0"  # the staging stage the code being written reads or writes
        self.copies: dict[str, list[Copy]] = {}  # per copied side's name (``copy_bases``)
        #: per fragment load (tile, part): its ``ldmatrix`` and base address (``fragment_bases``)
        self.bases: dict[tuple[str, int], tuple[str, str]] = {}

    def imports(self) -> list[str]:
        if not self.aligned:
            return []
        names = [*INTRINSICS, f"load_{self.half}", f"mma_{self.half}"]
        return [f"from runtime.cuda.tensor_cores import {', '.join(names)}"]

    # -- the staging tiles -------------------------------------------------------------

    def tile_size(self, shared: str) -> int:
        """The elements of one stage of a staging tile, padding included."""
        rows = self.tm if shared == "a" else self.tn
        return rows * (self.tk + PAD) if self.row_major[shared] else self.tk * (rows + PAD)

    def declare_tiles(self, dtype: str) -> None:
        aligned = ", alignment=16" if self.aligned else ""  # ldmatrix and cp.async move 16-byte rows
        storage = TILE_STORAGE[self.half]
        for shared in ("a", "b"):
            self.emit(1, f"{shared}_s = cuda.shared.array({STAGES * self.tile_size(shared)}, {storage}{aligned})")

    def shared_at(self, shared: str, k: str | int, offset: str) -> str:
        return f"{shared}_s[{self.tile_index(shared, k, offset)}]"

    def tile_index(self, shared: str, k: str | int, offset: str) -> str:
        """The index of element ``[k, offset]`` (``offset`` a row of the tile) in the
        stage ``stage_name`` of a (flat) staging tile."""
        base = f"{self.stage_name} * {self.tile_size(shared)} + "
        if self.row_major[shared]:
            return f"{base}({offset}) * {self.tk + PAD} + {k}"
        return f"{base}({k}) * {(self.tm if shared == 'a' else self.tn) + PAD} + {offset}"

    def to_shared(self, register: str) -> str:
        return to_tile(self, self.half, register)

    def from_shared(self, element: str) -> str:
        return from_tile(self, self.half, element)

    # -- staging by copies ---------------------------------------------------------------

    def slots(self, side: Side, threads: int) -> None:
        """A factor that is one load of a kernel argument along its last axis, in the
        ``exact`` variant on a GPU, is staged by 16-byte ``cp.async`` copies of
        ``CHUNK`` consecutive halves, each slot a copy; any other factor element by
        element through registers (``codegen_gemm``)."""
        if not (self.aligned and not self.guarded and self.copyable(side)):
            super().slots(side, threads)
            return
        side.copied = True
        across = (self.tk if side.along == "k" else side.tile) // CHUNK  # copies along a tile row
        for u in range(side.tile * self.tk // CHUNK // threads):
            c = f"(tid + {u * threads})"
            along, other = f"({c} % {across}) * {CHUNK}", f"{c} // {across}"
            side.slots.append((along, other) if side.along == "k" else (other, along))

    def copyable(self, side: Side) -> bool:
        """Whether ``side``'s factor is one load of a kernel argument whose last index is
        the variable its tile is read along (``k``, or the one loop of its rows), which
        no other index moves with, and whose other indices hold ``k`` itself at most
        once: ``CHUNK`` elements along the last axis are then consecutive, and a step's
        addresses are the first step's moved by a fixed number of bytes."""
        load = side.factor.owner
        if not (isinstance(load, loop.LoadOp) and isinstance(load.buffer.owner, Block) and load.indices):
            return False
        reduction = self.nest.reduce.iv
        if side.along == "k":
            iv = reduction
        else:
            loops = self.nest.loops(side.role)
            if len(loops) != 1:
                return False
            iv = loops[0].iv
        moving = [i for i in load.indices if reduction in self.deps.of(i)]
        return (
            load.indices[-1] is iv
            and not any(iv in self.deps.of(i) for i in load.indices[:-1])
            and len(moving) == 1
            and moving[0] is reduction
        )

    def copy_bases(self, side: Side, indent: int) -> None:
        """Per slot of a copied side, before the reduction: its ``Copy`` (an argument
        handed in as a device view may start anywhere, hence the alignment test)."""
        load = side.factor.owner
        assert isinstance(load, loop.LoadOp)  # copyable
        reduction = self.nest.reduce.iv
        axis = next(n for n, i in enumerate(load.indices) if i is reduction)
        varying = [o for o in side.ops if o is not load and reduction in self.deps.of_op(o)]
        buffer = self.name(load.buffer)
        self.stage_name = "0"
        copies = self.copies[side.name] = []
        for u, (k_offset, row) in enumerate(side.slots):
            self.names = dict(side.names[u])
            k = self.fresh("k")
            self.emit(indent, f"{k} = {k_offset}")
            self.names[reduction] = k
            for op in varying:
                self.op(op, indent)
            indices = ", ".join(f"np.uint64({self.name(i)})" for i in load.indices)
            address, step, ok, to, target = (self.fresh(p) for p in ("ad", "st", "ok", "at", "ct"))
            self.emit(indent, f"{address} = global_address({buffer}, ({indices},))")
            self.emit(indent, f"{step} = {self.tk} * {buffer}.strides[{axis}]")
            self.emit(indent, f"{ok} = {address} % 16 == 0 and {step} % 16 == 0")
            self.emit(indent, f"{to} = {self.tile_index(side.name, k_offset, row)}")
            self.emit(indent, f"{target} = shared_address({side.name}_s, {to})")
            copies.append(Copy(address, step, ok, to, target))

    def copy(self, side: Side, step: str, indent: int) -> None:
        """The copies of staging step number ``step`` into stage ``stage_name``: one
        ``cp.async`` a slot where aligned, else element by element from the same address
        (C-contiguous: the runtime takes no other), a loop (that rare case, written out,
        would cost Numba's compile as much as the common one)."""
        tile, size = f"{side.name}_s", self.tile_size(side.name)
        for c in self.copies[side.name]:
            address, to = self.fresh("ad"), self.fresh("at")
            self.emit(indent, f"{address} = {c.first} + {step} * {c.step}")
            self.emit(indent, f"if {c.aligned}:")
            self.emit(
                indent + 1, f"cp_async_16_at({c.target} + {self.stage_name} * {size * HALF_BYTES}, {address}, 16)"
            )
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{to} = {c.place} + {self.stage_name} * {size}")
            j = self.fresh("j")
            self.emit(indent + 1, f"for {j} in range({CHUNK}):")
            self.emit(indent + 2, f"{tile}[{to} + {j}] = load_{self.half}({address} + {HALF_BYTES} * {j})")

    def fill(self, sides, step: str, indent: int) -> None:
        """Staging step number ``step``: its copies issued, then its registers loaded."""
        for side in sides:
            if side.copied:
                self.copy(side, step, indent)
        for side in sides:
            if not side.copied:
                self.stage(side, f"{step} * {self.tk}", indent)

    def reduction(self, sides, accs: list[list[str]], rows: list[str], cols: list[str]) -> None:
        """The staging steps in ``STAGES`` stages: while one step's products run, the
        next one's copies fly and its registers load (stored to their stage at the top
        of the next iteration); one barrier makes a stage whole before its products,
        one more keeps it until every warp has read it."""
        e = self.emit
        copies = any(side.copied for side in sides)
        for side in sides:
            if side.copied:
                self.copy_bases(side, 2)
        if self.aligned:
            self.fragment_bases(2)
        self.stage_name = "0"
        e(2, "if k_n > 0:")
        self.fill(sides, "0", 3)
        if copies:
            e(3, "cp_async_commit()")
        e(2, "for k_t in range(k_n):")
        e(3, f"s_t = k_t % {STAGES}")
        e(3, f"s_n = (k_t + 1) % {STAGES}")
        self.stage_name = "s_t"
        self.store_staged(sides, 3)
        e(3, "if k_t + 1 < k_n:")
        self.stage_name = "s_n"
        self.fill(sides, "(k_t + 1)", 4)
        if copies:
            e(3, "cp_async_commit()")  # (empty after the last step)
            e(3, "cp_async_wait(1)")  # all but the latest group: this step's
        e(3, "cuda.syncthreads()")
        self.stage_name = "s_t"
        self.products(accs, rows, cols, 3)
        e(3, "cuda.syncthreads()")

    # -- the products --------------------------------------------------------------------

    def thread_offsets(self) -> tuple[list[str], list[str]]:
        e = self.emit
        e(1, "lane = tid % 32")
        e(1, f"w_m = (tid // 32 // {WARPS_N}) * {self.warp_m}")
        e(1, f"w_n = (tid // 32 % {WARPS_N}) * {self.warp_n}")
        rows, cols = [], []
        for part in range(self.warp_m // MMA_M):
            for half_row in (0, 8):
                rows.append(self.fresh("o"))
                e(1, f"{rows[-1]} = w_m + {part * MMA_M + half_row} + lane // 4")
        for part in range(self.warp_n // MMA_N):
            for column in (0, 1):
                cols.append(self.fresh("o"))
                e(1, f"{cols[-1]} = w_n + {part * MMA_N + column} + (lane % 4) * 2")
        return rows, cols

    def fragments(self, shared: str, first: str) -> tuple[str, str]:
        """The ``ldmatrix`` and the index lane ``l`` gives, in stage 0 at reduction step
        0, for four 8 x 8 matrices of a staging tile from tile row ``first``: for ``a``,
        in the order a0..a3 (rows +0/+8, then ``k`` +0/+8); for ``b``, b0 and b1 of two
        8-column parts (``k`` +0/+8, then columns +0/+8). Lane ``l`` gives row ``l % 8``
        of matrix ``l // 8``: a tile holding its rows outermost is read as it is, one
        holding ``k`` outermost transposed (``.trans``)."""
        if shared == "a":
            row, k = f"{first} + ((lane // 8) % 2) * 8", "(lane // 16) * 8"
        else:
            row, k = f"{first} + (lane // 16) * 8", "((lane // 8) % 2) * 8"
        if self.row_major[shared]:
            return "ldmatrix_x4_at", self.tile_index(shared, k, f"{row} + lane % 8")
        return "ldmatrix_x4_trans_at", self.tile_index(shared, f"{k} + lane % 8", row)

    def fragment_bases(self, indent: int) -> None:
        """Before the reduction, each fragment load's index in stage 0 at step 0 (the
        loop adds the stage's and the step's offsets): index arithmetic in the loop
        cost more issue slots than its ``mma`` (Nsight Compute: 10 instructions an
        ``mma``, the integer pipe the busiest)."""
        self.stage_name = "0"
        parts = {"a": (self.warp_m // MMA_M, MMA_M, "w_m"), "b": (self.warp_n // (2 * MMA_N), 2 * MMA_N, "w_n")}
        for shared, (count, rows, origin) in parts.items():
            for part in range(count):
                instruction, at = self.fragments(shared, f"{origin} + {part * rows}")
                base = self.fresh("lm")
                self.emit(indent, f"{base} = shared_address({shared}_s, {at})")
                self.bases[shared, part] = (instruction, base)

    def step_offset(self, shared: str, kk: int) -> int:
        """The bytes from step 0 of a stage to its reduction step ``kk`` in a staging tile."""
        elements = kk if self.row_major[shared] else kk * ((self.tm if shared == "a" else self.tn) + PAD)
        return elements * HALF_BYTES

    def products(self, accs: list[list[str]], rows: list[str], cols: list[str], indent: int) -> None:
        if not self.aligned:
            self.outer_products(accs, rows, cols, indent)
            return
        e = self.emit
        stage = {shared: self.fresh("so") for shared in ("a", "b")}
        for shared, name in stage.items():
            e(indent, f"{name} = {self.stage_name} * {self.tile_size(shared) * HALF_BYTES}")
        for kk in range(0, self.tk, MMA_K):
            frags: dict[str, list[list[str]]] = {"a": [], "b": []}
            for (shared, _), (instruction, base) in self.bases.items():
                names = [self.fresh("f") for _ in range(4)]
                # a: one 16 x 16 fragment; b: two 16 x 8 ones (b0, b1 of each 8 columns)
                frags[shared] += [names] if shared == "a" else [names[:2], names[2:]]
                e(
                    indent,
                    f"{', '.join(names)} = {instruction}({base} + {stage[shared]}, {self.step_offset(shared, kk)})",
                )
            for mi, a in enumerate(frags["a"]):
                for ni, b in enumerate(frags["b"]):
                    acc = [
                        accs[2 * mi][2 * ni],
                        accs[2 * mi][2 * ni + 1],
                        accs[2 * mi + 1][2 * ni],
                        accs[2 * mi + 1][2 * ni + 1],
                    ]
                    e(indent, f"{', '.join(acc)} = mma_{self.half}({', '.join(a)}, {', '.join(b)}, {', '.join(acc)})")


def mma_gemm_source(kernel: loop.KernelOp, variant: str, aligned: bool = True) -> str:
    """The Python source of a tensor-core gemm kernel in one variant (``gemm_source``'s
    arguments)."""
    return MmaGemmSource(kernel, variant, aligned).source()
