"""The fusion cost model: bytes, FLOPs and a roofline time per kernel.

A kernel's time is predicted as

    t = max(bytes / bandwidth, flops / rate) + launch

where ``bytes`` is the global-memory traffic of the kernel's inputs and outputs only
(each read once, each written once: what fusion saves is the round trip of every
intermediate) and ``flops`` counts the work of every op, times the number of times
the fused loop nest recomputes it (an op upstream of a broadcast inside an
elementwise kernel runs once per element of the broadcast's result).

Merging two groups saves ``t(A) + t(B) - t(A u B)``: the launch, the intermediate's
write and read, a shared input read once, minus any recomputation. The planner
greedily merges the candidate with the largest saving, as XLA's priority fusion and
Inductor's scheduler do; a merge that saves nothing is refused with the score.

Symbolic sizes become numbers through a ``dims`` binding (``DEFAULT_DIM`` each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from math import prod

from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from dialects import graph
from dialects.elementwise import OPS as ELEMENTWISE_OPS
from dialects.sizes import Size
from dialects.tensor_types import NUMPY_DTYPES, Shape, dtype_of, shape_of
from passes.fusion.classify import has_flag

DEFAULT_DIM = 256


@dataclass(frozen=True)
class HalfRates:
    """FLOP/s of matmuls whose factors are ``f16`` or ``bf16``, where a device runs them
    apart (on tensor cores): the library's, fusec's generated GEMM's and its attention
    kernel's, as ``DeviceModel``'s own fields are for ``f32``."""

    gemm_library: float
    gemm_generated: float
    attention_generated: float


@dataclass(frozen=True)
class DeviceModel:
    """What the cost model knows of a machine."""

    name: str
    bandwidth: float  # bytes/s, read + written, of global memory
    flops: float  # FLOP/s
    launch_overhead: float  # s per kernel launch (host side included)
    #: FLOP/s of a matmul: through the target's GEMM library (0: none), in fusec's
    #: generated GEMM kernel, in its fused attention kernel (0: none worth choosing);
    #: ``strategy.py`` weighs them
    gemm_library: float = 0.0
    gemm_generated: float = 0.0
    attention_generated: float = 0.0
    #: FLOP/s of a generated kernel holding sibling matmuls (Q‖K‖V): no tiled GEMM there
    gemm_generated_siblings: float = 0.0
    #: bytes of memory one buffer may take (0: unbounded as far as the model knows)
    memory: float = 0.0
    #: the matmul rates of ``f16`` and ``bf16`` factors, where they differ (None: as ``f32``'s)
    half: HalfRates | None = None
    #: s a kernel or a library call adds to a call replayed as one CUDA graph (the GPU's
    #: way: the host launches the whole call once); 0 where each kernel is launched by the
    #: host (``launch_overhead``). The choice of a group's strategy counts it per step
    #: (``step_overhead``); the fusion planner keeps ``launch_overhead``, on which its
    #: merges were judged
    replayed_launch: float = 0.0

    def without_library(self) -> DeviceModel:
        """The model of the same device where no GEMM library is installed."""
        half = replace(self.half, gemm_library=0.0) if self.half else None
        return replace(self, gemm_library=0.0, half=half)

    @property
    def siblings_pay(self) -> bool:
        """Whether one kernel of sibling matmuls (Q‖K‖V) can be as fast as their
        separate kernels: through the GEMM library (one call each), or where the
        generated kernel of siblings is as fast as the tiled GEMM of one matmul (the CPU's
        row-times-row loops are the same either way; a GPU's siblings get no tiled GEMM)."""
        return self.gemm_library > 0 or self.gemm_generated_siblings >= self.gemm_generated

    def for_factors(self, element: Attribute | None) -> DeviceModel:
        """The model of matmuls whose factors are of type ``element``: the half rates
        for ``f16`` and ``bf16`` where the device has them (tensor cores take both, in
        the generated GEMM and attention kernels alike, and cuBLAS has a bfloat16 GEMM:
        runtime/cuda/gemm.py; on the CPU NumPy has no bfloat16 GEMM, fusec widens the
        factors, and its register tile takes no half floats). A device without half
        rates keeps ``f32``'s."""
        if self.half is None or not isinstance(element, Float16Type | BFloat16Type):
            return self
        rates = self.half
        return replace(
            self,
            gemm_library=rates.gemm_library,
            gemm_generated=rates.gemm_generated,
            attention_generated=rates.attention_generated,
            half=None,
        )

    @property
    def step_overhead(self) -> float:
        """What one more kernel or library call adds to a call, replayed or launched."""
        return self.replayed_launch or self.launch_overhead

    def roofline(self, bytes_: float, flops: float) -> float:
        """Seconds of moving ``bytes_`` and doing ``flops``, the slower of the two."""
        return max(bytes_ / self.bandwidth, flops / self.flops)

    def time(self, bytes_: float, flops: float) -> float:
        """Predicted seconds of one kernel moving ``bytes_`` and doing ``flops``."""
        return self.roofline(bytes_, flops) + self.launch_overhead


#: Measured (docs/pipeline.md, "The cost model's devices"): device-to-device copy 4.22
#: TB/s (bytes read + written), cuBLAS fp32 matmul 51 TFLOP/s; a numba-cuda launch costs
#: 20-23 us on the host. fusec's generated GEMM (``gemm`` strategy) reached 0.79 of cuBLAS
#: at 4096^3 on an H100, its flash attention kernel 28 TFLOP/s (B8 H16 S2048 Dh64: 4.82 ms).
#: In f16 (docs/gpu.md, "Tensor cores"): cuBLAS 762 TFLOP/s at 4096^3, fusec's tensor-core
#: GEMM with its epilogue 193 (0.71 ms), its flash attention on tensor cores 105 (B8 H16
#: S2048 Dh64: 1.31 ms; bf16 is taken to run as f16, the same instructions, not measured
#: yet). A library GEMM is packed beside the kernel launches (one cuBLAS call on the
#: operands' addresses): the GPT-2 block sample in f16 (B4 S1024) took 0.53 ms with its
#: GEMMs in cuBLAS and 0.74 with them generated (H100).
GPU_H200 = DeviceModel(
    "gpu-h200",
    bandwidth=4.22e12,
    flops=51e12,
    launch_overhead=20e-6,
    gemm_library=51e12,
    gemm_generated=40e12,
    attention_generated=28e12,
    gemm_generated_siblings=1.8e12,  # one thread per output element (`threads`), measured
    memory=80e9,  # an H100's; an H200 has 141 GB
    replayed_launch=3e-6,
    half=HalfRates(gemm_library=762e12, gemm_generated=193e12, attention_generated=105e12),
)

#: Measured on the 2-core CI machine (docs/pipeline.md, "The cost model's devices"): a
#: 64 MiB copy takes about 11 ms, i.e. 128 MiB moved / 11 ms = 12.2 GB/s; about 20 GFLOP/s
#: of fp32 over two AVX2 cores (transcendentals run far below that without a vector math
#: library, docs/pipeline.md, "Kernels on the CPU"); a serial kernel's launch costs some
#: microseconds (a parallel one, which wakes the thread pool in tens, runs only where its
#: work pays for that, runtime/cpu/threads.py).
#: NumPy's OpenBLAS reaches about 250 GFLOP/s of fp32 matmul on the 2-core AVX-512 VM
#: (1024^3), fusec's generated cache-blocked product (runtime/cpu/codegen_gemm.py) 160-200
#: there (0.7-0.8 of it) and a convolution's about 130. The model takes 130: at 190 the
#: decoder samples' projections went generated and ran 3-8% slower (their epilogues are
#: light, the BLAS the faster product); sibling matmuls get no register tile (row-times-row
#: loops, about 25); its flash attention kernel (runtime/cpu/codegen_flash.py) about 130
#: unmasked and 170 under a causal mask, the skipped half counted as the model counts it.
CPU_2CORE = DeviceModel(
    "cpu-2core",
    bandwidth=128 * 2**20 / 11e-3,
    flops=20e9,
    launch_overhead=10e-6,
    gemm_library=250e9,
    gemm_generated=130e9,
    gemm_generated_siblings=25e9,  # row-times-row loops, one per matmul: no register tile
    attention_generated=160e9,
    # half factors: the BLAS on factors widened to f32; the register tile and the flash
    # kernel take f32 and f64 only, so a generated product is the loop nest and no fused
    # attention kernel is offered
    half=HalfRates(gemm_library=250e9, gemm_generated=25e9, attention_generated=0.0),
)

#: the device models by name, as the ``device=`` option of ``fuse`` and
#: ``select-strategy`` takes them and each target names its own (``runtime/target.py``)
DEVICES: dict[str, DeviceModel] = {model.name: model for model in (GPU_H200, CPU_2CORE)}


def device_by_name(name: str) -> DeviceModel:
    try:
        return DEVICES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown device {name!r}: expected one of {', '.join(DEVICES)}") from None


def parse_dims(spec: str | Mapping[str, int] | None) -> dict[str, int]:
    """``"N=1024,D=768"`` (or a mapping) -> ``{"N": 1024, "D": 768}``."""
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        return {str(k): int(v) for k, v in spec.items()}
    dims: dict[str, int] = {}
    for item in spec.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"bad size binding {item!r}: expected NAME=INT")
        dims[name.strip()] = int(value)
    return dims


# ---------------------------------------------------------------------------
# sizes

DTYPE_BYTES = {name: dtype.itemsize for name, dtype in NUMPY_DTYPES.items()}


def dim_value(dim: int | str, dims: Mapping[str, int]) -> int:
    """A dim's size for the cost model: unbound names count as ``DEFAULT_DIM``."""
    if isinstance(dim, int):
        return dim
    size = Size.of(dim)
    return max(1, int(size.factor * prod(int(dims.get(n, DEFAULT_DIM)) for n in size.names)))


def element_count(shape: Shape, dims: Mapping[str, int]) -> int:
    count = 1
    for d in shape:
        count *= dim_value(d, dims)
    return count


def type_elements(type_: Attribute, dims: Mapping[str, int]) -> int:
    return element_count(shape_of(type_), dims) if isinstance(type_, TensorType) else 1


def type_bytes(type_: Attribute, dims: Mapping[str, int]) -> int:
    if not isinstance(type_, TensorType):
        return 0
    return type_elements(type_, dims) * DTYPE_BYTES[dtype_of(type_)]


def value_bytes(value: SSAValue, dims: Mapping[str, int]) -> int:
    return type_bytes(value.type, dims)


# ---------------------------------------------------------------------------
# FLOPs

#: rough FLOPs per result element: each elementwise op's from its entry in
#: `dialects.elementwise` (an add is one, a transcendental about eight)
FLOPS_PER_ELEMENT: dict[str, float] = {
    **{op.op_name: op.flops for op in ELEMENTWISE_OPS},
    "graph.cmp": 1, "graph.select": 1, "graph.cast": 1,
    "graph.broadcast": 0, "graph.transpose": 0, "graph.reshape": 0,
    "graph.concat": 1, "graph.pad": 1,  # a compare and a select per element
    "graph.constant": 0, "graph.dim_size": 0, "graph.iota": 0, "graph.gather": 0,
    "graph.softmax": 14, "graph.layernorm": 12, "graph.rmsnorm": 8,
}  # fmt: skip


def matmul_dims(op: graph.MatmulOp, dims: Mapping[str, int]) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of a matmul, honouring ``transpose_lhs`` / ``transpose_rhs``."""
    lhs = shape_of(op.lhs.type)
    out = shape_of(op.result.type)
    k = lhs[-2] if has_flag(op, "transpose_lhs") else lhs[-1]
    batch = element_count(out[:-2], dims)
    return batch, dim_value(out[-2], dims), dim_value(out[-1], dims), dim_value(k, dims)


def op_flops(op: Operation, dims: Mapping[str, int]) -> float:
    """FLOPs of one execution of ``op`` over its whole result."""
    if isinstance(op, graph.MatmulOp):
        batch, m, n, k = matmul_dims(op, dims)
        return 2.0 * batch * m * n * k
    if isinstance(op, graph.ReduceOp):
        reduction = op.reduction
        flops = reduction.flops * type_elements(op.input.type, dims)
        if reduction.averages:  # a division per result
            flops += type_elements(op.result.type, dims)
        return flops
    per = FLOPS_PER_ELEMENT.get(op.name, 1.0)
    return per * sum(type_elements(r.type, dims) for r in op.results)


def recompute_factors(
    ops: Sequence[Operation],
    is_output: Callable[[SSAValue], bool],
    hoists_broadcasts: bool,
    dims: Mapping[str, int],
) -> dict[Operation, float]:
    """How many times the fused kernel computes each element of each op.

    ``ops`` are a group's ops in program order. In an elementwise (or matmul
    epilogue) loop nest an op upstream of a ``graph.broadcast`` is evaluated once per
    element of the broadcast's result; a reduction-shaped kernel (one row at a time)
    hoists the per-row value instead (``hoists_broadcasts``), so there it is 1.
    """
    inside = set(ops)
    factor: dict[Operation, float] = {}
    for op in reversed(ops):
        f = 0.0
        for result in op.results:
            if is_output(result):
                f = max(f, 1.0)
            for use in result.uses:
                user = use.operation
                if user not in inside or user not in factor:
                    continue
                g = factor[user]
                if isinstance(user, graph.BroadcastOp) and not hoists_broadcasts:
                    g *= type_elements(user.result.type, dims) / max(1, type_elements(result.type, dims))
                f = max(f, g)
        factor[op] = f if f > 0 else 1.0
    return factor


def group_flops(
    ops: Sequence[Operation],
    is_output: Callable[[SSAValue], bool],
    hoists_broadcasts: bool,
    dims: Mapping[str, int],
) -> tuple[float, float]:
    """(FLOPs of the fused kernel, FLOPs of the same ops run once each)."""
    factors = recompute_factors(ops, is_output, hoists_broadcasts, dims)
    once = sum(op_flops(op, dims) for op in ops)
    fused = sum(op_flops(op, dims) * factors[op] for op in ops)
    return fused, once


@dataclass(frozen=True)
class KernelCost:
    bytes: int
    flops: float
    flops_once: float  # without recomputation
    seconds: float

    @property
    def recompute_flops(self) -> float:
        return self.flops - self.flops_once


def kernel_cost(
    input_values: Iterable[SSAValue],
    output_values: Iterable[SSAValue],
    flops: float,
    flops_once: float,
    device: DeviceModel,
    dims: Mapping[str, int],
) -> KernelCost:
    moved = sum(value_bytes(v, dims) for v in input_values) + sum(value_bytes(v, dims) for v in output_values)
    return KernelCost(moved, flops, flops_once, device.time(moved, flops))


@dataclass(frozen=True)
class FusionScore:
    """The benefit/cost of merging two kernels A and B into one.

    ``benefit``: time saved by the merge ignoring extra work (a launch, the bytes no
    longer moved); ``cost``: time the recomputation adds; ``saving`` the roofline
    difference ``t(A) + t(B) - t(A u B)``, which orders the candidates.
    """

    saving: float
    benefit: float
    cost: float
    bytes_saved: int
    recompute_flops: float

    @property
    def saving_us(self) -> float:
        return self.saving * 1e6


def fusion_score(a: KernelCost, b: KernelCost, merged: KernelCost, device: DeviceModel) -> FusionScore:
    bytes_saved = a.bytes + b.bytes - merged.bytes
    extra = merged.flops - a.flops - b.flops
    benefit = device.launch_overhead + bytes_saved / device.bandwidth
    cost = max(0.0, extra) / device.flops
    return FusionScore(
        saving=a.seconds + b.seconds - merged.seconds,
        benefit=benefit,
        cost=cost,
        bytes_saved=bytes_saved,
        recompute_flops=max(0.0, extra),
    )


