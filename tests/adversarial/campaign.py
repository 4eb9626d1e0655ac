"""The campaign's command line: runs the kinds, prints the table, saves reproducers.

    python -m tests.adversarial --kinds all --seed S [--scale K] [--jobs J] [--save DIR]
    python -m tests.adversarial --kinds programs --seed S --only I     # one case again

Each kind's cases run in worker processes (`pool.py`), `--jobs` at once, each within its
kind's time limit (times `--timeout-factor`). The table says per kind how many cases ran,
how many passed, and how many failed in each class (a case may fail in several); each
group of failures of one cause is listed with its cases, and its first case's reproducer
(the program, its inputs, the command) is saved under `--save`. Exit status 1 when
anything failed, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import kinds
from .outcome import CLASSES, CRASH, HANG, Case, Failure
from .pool import Pool, Result


def count(kind: str, scale: float) -> int:
    """The cases of `kind` at `scale` (at least one)."""
    return max(1, round(kinds.load(kind).COUNT * scale))


@dataclass
class Group:
    """The failures of one cause: its class, its key, the cases it met."""

    cls: str
    key: str
    cases: list[int] = field(default_factory=list)
    first: Failure | None = None
    saved: Path | None = None


@dataclass
class KindReport:
    kind: str
    cases: int = 0
    passed: int = 0
    classes: Counter = field(default_factory=Counter)  # class -> cases failing in it
    groups: dict[tuple[str, str], Group] = field(default_factory=dict)
    seconds: float = 0.0
    skipped: str | None = None

    def add(self, result: Result) -> None:
        self.cases += 1
        if not result.failures:
            self.passed += 1
        for cls in {f.cls for f in result.failures}:
            self.classes[cls] += 1
        for failure in result.failures:
            group = self.groups.setdefault((failure.cls, failure.key), Group(failure.cls, failure.key))
            if not group.cases or group.cases[-1] != result.case.index:
                group.cases.append(result.case.index)
            if group.first is None:
                group.first = failure


def slug(text: str, length: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:length] or "failure"


def save_group(root: Path, kind: str, number: int, group: Group, seed: int) -> Path:
    """The group's reproducer: its first case's files, and a README with the command."""
    assert group.first is not None
    folder = root / kind / f"{number:02d}-{slug(group.cls)}-{slug(group.key, 50)}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    first = Case(kind, seed, group.cases[0])
    for name, content in group.first.files.items():
        path = folder / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    (folder / "README.txt").write_text(
        f"{group.cls}: {group.key}\n"
        f"cases ({len(group.cases)}): {', '.join(map(str, group.cases[:50]))}{' ...' if len(group.cases) > 50 else ''}\n"
        f"rerun the first: {first.command()}\n"
        f"files: {', '.join(sorted(group.first.files)) or 'none'}\n\n{group.first.detail}\n"
    )
    return folder


def base_environment(scratch: Path) -> dict[str, str]:
    """What every worker runs under: its own kernel cache (never the user's), one compile
    helper per worker (the workers are the parallelism), the cost model's plans."""
    return {
        "FUSEC_CACHE_DIR": str(scratch / "cache"),
        "FUSEC_COMPILE_WORKERS": "1",
        "FUSEC_CALIBRATION": "off",
        "NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS", "2"),
        "PYTHONWARNINGS": "ignore",
        "PYTHONFAULTHANDLER": "1",  # a crash's log shows the Python stack it died in
    }


def run_kind(kind: str, args: argparse.Namespace, scratch: Path, progress) -> KindReport:
    module = kinds.load(kind)
    report = KindReport(kind)
    reason = module.unavailable()
    if reason:
        report.skipped = reason
        return report
    indices = [args.only] if args.only is not None else range(count(kind, args.scale))
    cases = [Case(kind, args.seed, i) for i in indices]
    pool = Pool(
        jobs=min(args.jobs, len(cases)),
        environment={**base_environment(scratch), **module.ENVIRONMENT},
        logs=scratch,
        timeout_s=module.TIMEOUT_S * args.timeout_factor,
    )
    started = time.monotonic()
    last = [started]

    def done(result: Result) -> None:
        if result.failures and result.failures[0].cls in (CRASH, HANG) and hasattr(module, "describe"):
            for failure in result.failures:
                failure.files = {**module.describe(result.case), **failure.files}
        report.add(result)
        if args.only is not None:
            for failure in result.failures:
                print(f"\n{failure.cls}: {failure.key}\n{failure.detail}", file=sys.stderr)
        now = time.monotonic()
        if now - last[0] > 30 or report.cases == len(cases):
            last[0] = now
            progress(f"{kind}: {report.cases}/{len(cases)} cases, {report.cases - report.passed} failed, {now - started:.0f} s")

    pool.run(cases, done)
    report.seconds = time.monotonic() - started
    return report


def table(reports: list[KindReport]) -> str:
    heads = ["kind", "cases", "passed", *CLASSES, "seconds"]
    rows = []
    for r in reports:
        if r.skipped:
            rows.append([r.kind, "-", "-", *["-"] * len(CLASSES), f"skipped: {r.skipped}"])
        else:
            rows.append([r.kind, str(r.cases), str(r.passed), *(str(r.classes[c]) for c in CLASSES), f"{r.seconds:.0f}"])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(heads)]
    widths[-1] = len(heads[-1])
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def groups_text(reports: list[KindReport]) -> str:
    lines = []
    for r in reports:
        for group in r.groups.values():
            shown = ", ".join(map(str, group.cases[:12])) + (" ..." if len(group.cases) > 12 else "")
            lines.append(f"{r.kind} | {group.cls} | {len(group.cases)} case(s) | {group.key}")
            lines.append(f"    cases: {shown}" + (f"; reproducer: {group.saved}" if group.saved else ""))
    return "\n".join(lines)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.adversarial", description=__doc__.split("\n\n")[0])
    p.add_argument("--kinds", default="all", help=f"'all' or some of {','.join(kinds.NAMES)}, comma-separated")
    p.add_argument("--seed", type=int, default=0, help="the campaign's seed: which cases (default 0)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="share of the full counts (1: issue 46's counts or more; 0.05: a smoke run)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: the cores)")
    p.add_argument("--save", type=Path, help="folder for the reproducers (default: a new temporary folder)")
    p.add_argument("--only", type=int, metavar="I", help="run case I of the one kind given, with its details")
    p.add_argument("--timeout-factor", type=float, default=1.0, help="times each kind's time limit per case")
    args = p.parse_args(argv)
    args.kinds = list(kinds.NAMES) if args.kinds == "all" else [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in args.kinds if k not in kinds.NAMES]
    if unknown:
        p.error(f"unknown kind(s) {', '.join(unknown)}: choose from {', '.join(kinds.NAMES)}")
    if args.only is not None and len(args.kinds) != 1:
        p.error("--only runs a case of one kind: give one in --kinds")
    if args.scale <= 0 or args.jobs < 1 or args.timeout_factor <= 0:
        p.error("--scale, --jobs and --timeout-factor must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    save = args.save or Path(tempfile.mkdtemp(prefix="fusec-campaign-"))
    save.mkdir(parents=True, exist_ok=True)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    reports = []
    with tempfile.TemporaryDirectory(prefix="fusec-campaign-scratch-") as scratch:
        for kind in args.kinds:
            report = run_kind(kind, args, Path(scratch), progress)
            for number, group in enumerate(report.groups.values(), 1):
                group.saved = save_group(save, kind, number, group, args.seed)
            reports.append(report)
    text = f"campaign seed {args.seed}, scale {args.scale:g}, jobs {args.jobs}\n\n{table(reports)}\n"
    if any(r.groups for r in reports):
        text += f"\nfailure groups (reproducers under {save}):\n{groups_text(reports)}\n"
    print(text)
    (save / "table.txt").write_text(text)
    (save / "summary.json").write_text(json.dumps([
        {"kind": r.kind, "cases": r.cases, "passed": r.passed, "skipped": r.skipped, "seconds": round(r.seconds, 1),
         "classes": dict(r.classes),
         "groups": [{"class": g.cls, "key": g.key, "cases": g.cases, "saved": str(g.saved)} for g in r.groups.values()]}
        for r in reports
    ], indent=1))  # fmt: skip
    return 1 if any(r.passed < r.cases for r in reports) else 0
