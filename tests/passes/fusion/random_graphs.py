"""Random well-typed graph programs (textual IR) for property tests of fusion.

Values live in a few types, ops are drawn at random among those whose operand
types are available: elementwise (unary, binary), broadcasts back over reduced
axes, reductions over rows and columns, matmuls, transposes and reshapes (with
and without ``index_map``), an opaque softmax. Every value without a user is a
result, so every op is live.
"""

from __future__ import annotations

import random

N, D = 4, 6
TYPES = {
    "A": f"tensor<{N}x{D}xf32>",
    "T": f"tensor<{D}x{N}xf32>",
    "R": f"tensor<{N}x1xf32>",
    "C": f"tensor<{D}xf32>",
    "V": f"tensor<{N}xf32>",
    "W": f"tensor<{D}x{D}xf32>",
}
ARGS = [("x0", "A"), ("x1", "A"), ("b", "C"), ("w", "W")]
UNARY = ["graph.sin", "graph.tanh", "graph.neg", "graph.abs", "graph.relu", "graph.cos"]
BINARY = ["graph.add", "graph.sub", "graph.mul", "graph.maximum"]


def random_program(seed: int, max_ops: int = 24) -> str:
    rng = random.Random(seed)
    pool: dict[str, list[str]] = {k: [] for k in TYPES}
    for name, kind in ARGS:
        pool[kind].append(f"%{name}")
    lines: list[str] = []
    used: set[str] = set()
    defined: list[tuple[str, str]] = []
    counter = 0

    def fresh(kind: str) -> str:
        nonlocal counter
        counter += 1
        name = f"%v{counter}"
        pool[kind].append(name)
        defined.append((name, kind))
        return name

    def pick(kind: str) -> str:
        value = rng.choice(pool[kind])
        used.add(value)
        return value

    def index_map() -> str:
        return " {index_map}" if rng.random() < 0.5 else ""

    for _ in range(rng.randint(3, max_ops)):
        choices = ["unary", "binary", "binary", "bcast_row", "bcast_col", "reduce_row", "reduce_col"]
        choices += ["reduce_rowvec", "matmul", "transpose", "reshape", "const", "softmax"]
        what = rng.choice(choices)
        if what == "unary":
            kind = rng.choice([k for k in ("A", "T", "R", "C", "V") if pool[k]])
            x = pick(kind)
            lines.append(f"  {fresh(kind)} = {rng.choice(UNARY)} {x} : {TYPES[kind]}")
        elif what == "binary":
            kind = rng.choice([k for k in ("A", "A", "T", "R", "C", "V") if pool[k]])
            x, y = pick(kind), pick(kind)
            lines.append(f"  {fresh(kind)} = {rng.choice(BINARY)} {x}, {y} : {TYPES[kind]}")
        elif what == "bcast_row" and pool["R"]:
            x = pick("R")
            lines.append(f"  {fresh('A')} = graph.broadcast {x} : {TYPES['R']} -> {TYPES['A']}")
        elif what == "bcast_col" and pool["C"]:
            x = pick("C")
            lines.append(f"  {fresh('A')} = graph.broadcast {x} : {TYPES['C']} -> {TYPES['A']}")
        elif what == "reduce_row":
            x = pick("A")
            k = rng.choice(["sum", "max", "mean"])
            lines.append(f"  {fresh('R')} = graph.reduce {k} {x} axes = [1] keepdims : {TYPES['A']} -> {TYPES['R']}")
        elif what == "reduce_rowvec":
            x = pick("A")
            lines.append(f"  {fresh('V')} = graph.reduce sum {x} axes = [1] : {TYPES['A']} -> {TYPES['V']}")
        elif what == "reduce_col":
            if pool["T"] and rng.random() < 0.3:
                x = pick("T")
                lines.append(f"  {fresh('C')} = graph.reduce max {x} axes = [1] : {TYPES['T']} -> {TYPES['C']}")
            else:
                x = pick("A")
                lines.append(f"  {fresh('C')} = graph.reduce sum {x} axes = [0] : {TYPES['A']} -> {TYPES['C']}")
        elif what == "matmul":
            x, w = pick("A"), pick("W")
            lines.append(f"  {fresh('A')} = graph.matmul {x}, {w} : {TYPES['A']}, {TYPES['W']} -> {TYPES['A']}")
        elif what == "transpose":
            src, dst = rng.choice([("A", "T"), ("T", "A")]) if pool["T"] else ("A", "T")
            x = pick(src)
            lines.append(
                f"  {fresh(dst)} = graph.transpose {x} perm = [1, 0]{index_map()} : {TYPES[src]} -> {TYPES[dst]}"
            )
        elif what == "reshape":
            x = pick("A")
            lines.append(f"  {fresh('T')} = graph.reshape {x}{index_map()} : {TYPES['A']} -> {TYPES['T']}")
        elif what == "const":
            c = f"%c{counter}"
            lines.append(f"  {c} = graph.constant dense<{rng.choice([0.5, 2.0, -1.0])}> : tensor<f32>")
            lines.append(f"  {fresh('A')} = graph.broadcast {c} : tensor<f32> -> {TYPES['A']}")
        elif what == "softmax":
            x = pick("A")
            lines.append(f"  {fresh('A')} = graph.softmax {x} axis = 1 : {TYPES['A']}")
    results = [(name, kind) for name, kind in defined if name not in used]
    if not results:
        x = pick("A")
        lines.append(f"  {fresh('A')} = graph.neg {x} : {TYPES['A']}")
        results = [defined[-1]]
    args = ", ".join(f"%{name}: {TYPES[kind]}" for name, kind in ARGS)
    result_types = ", ".join(TYPES[kind] for _, kind in results)
    ret_values = ", ".join(name for name, _ in results)
    return (
        f"func.func @main({args}) -> ({result_types}) {{\n"
        + "\n".join(lines)
        + f"\n  func.return {ret_values} : {result_types}\n}}\n"
    )


def random_args(rng) -> list:
    import numpy as np

    shapes = {"A": (N, D), "C": (D,), "W": (D, D)}
    return [rng.standard_normal(shapes[kind]).astype(np.float32) for _, kind in ARGS]
