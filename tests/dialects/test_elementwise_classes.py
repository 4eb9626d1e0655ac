"""The elementwise op classes of `dialects/graph.py` are written out, one class statement
per entry of `dialects.elementwise` (so that mypy, grep and editors see them), between
the two marker lines below. This test renders them from the entries and compares; after
adding, removing or changing an entry, rewrite the block with

    python -m tests.dialects.test_elementwise_classes
"""

from __future__ import annotations

from pathlib import Path

from dialects.elementwise import OPS, Elementwise

GRAPH = Path(__file__).parents[2] / "dialects" / "graph.py"
BEGIN = "# -- begin generated elementwise ops (python -m tests.dialects.test_elementwise_classes) --\n"
END = "# -- end generated elementwise ops --\n"


def docstring(entry: Elementwise) -> str:
    """The op's docstring: the entry's doc, whether it is a composite and what it
    accepts, and the op as it prints."""
    operands = ", ".join(f"%{p}" for p in entry.params)
    composite = "a composite, " if entry.composite else ""
    result_type = "tensor<4xf32> -> tensor<4xi1>" if entry.predicate else "tensor<4xf32>"
    return f"{entry.doc} ({composite}{entry.accepts.value}): ``%r = {entry.op_name} {operands} : {result_type}``."


def base_class(entry: Elementwise) -> str:
    return "PredicateOp" if entry.predicate else {1: "UnaryOp", 2: "BinaryOp", 3: "TernaryOp"}[entry.arity]


def render() -> str:
    """The block between the markers, from the entries."""
    parts = [BEGIN]
    for entry in OPS:
        doc = docstring(entry)
        assert '"""' not in doc and "\\" not in doc, entry.name
        parts.append(
            "\n\n@irdl_op_definition\n"
            f"class {entry.class_name}({base_class(entry)}):\n"
            f'    """{doc}"""\n'
            "\n"
            f'    name = "{entry.op_name}"\n'
            f'    ENTRY: ClassVar[Elementwise] = BY_NAME["{entry.name}"]\n'
        )
    names = "".join(f"        {entry.class_name},\n" for entry in OPS)
    parts.append(
        "\n\n#: the op class of every elementwise entry, by the entry's name\n"
        "ELEMENTWISE: dict[str, type[ElementwiseOp]] = {\n"
        "    cls.ENTRY.name: cls\n"
        "    for cls in (\n"
        f"{names}"
        "    )\n"
        "}\n"
    )
    parts.append(END)
    return "".join(parts)


def split(source: str) -> tuple[str, str, str]:
    """The text of graph.py before the block, the block, and after it."""
    start = source.index(BEGIN)
    end = source.index(END) + len(END)
    return source[:start], source[start:end], source[end:]


def test_the_classes_are_rendered_from_the_entries():
    _, block, _ = split(GRAPH.read_text())
    assert block == render(), "rewrite them: python -m tests.dialects.test_elementwise_classes"


def test_each_class_is_its_entry():
    from dialects import graph  # not above: a stale block must not keep the rewrite from running

    for entry in OPS:
        cls = getattr(graph, entry.class_name)
        assert cls.ENTRY is entry and cls.name == entry.op_name
        assert cls.__doc__ == docstring(entry)
        assert cls.__module__ == graph.__name__


if __name__ == "__main__":
    before, _, after = split(GRAPH.read_text())
    GRAPH.write_text(before + render() + after)
