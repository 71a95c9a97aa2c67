"""The layout as the source states it, read with `ast` as a static tool reads it.

The rooms and their one dependency direction (issue 15, STYLE.md): parsers <- sources <-
curate <- correlate <- diagnose <- run; sinks and report depend on the records only; the
dashboard reads the indices and the records; only the drivers import run; pipeline/errors.py,
pipeline/isolation.py and pipeline/spill.py are leaves every room may import. And every `gangscope.x.y` import
names a module or a name that exists in this tree, through the links gangscope/parsers,
gangscope/pipeline and gangscope/templates, so that a reader or a tool can follow it.

Imports inside functions and under `if TYPE_CHECKING:` count: a dependency is a dependency.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Folders of the tree whose modules are the project's code (gangscope/ holds the links to the
# other three, and its own __init__ and __main__).
CODE = ("parsers", "pipeline", "templates")

STAGES = ["parsers", "sources", "curate", "correlate", "diagnose", "run"]
LEAVES = {"errors", "isolation", "spill"}  # pipeline/errors.py, pipeline/isolation.py, pipeline/spill.py
# What "the records" are to the rooms that depend on them only: the record types and the RFC 3339
# times they carry, two modules of parsers that import nothing else of the project.
RECORD_MODEL = {"parsers.records", "parsers.times"}
ROOMS = {*STAGES, "sinks", "report", "dashboard"}

# What each room may import: a room ("parsers"), or one module of it ("parsers.records").
# `gangscope` (the version) and `templates` (data: Jinja2 files, no code) are not rooms of code.
MAY_IMPORT: dict[str, set[str]] = {
    **{stage: {*STAGES[: i + 1], *LEAVES, "gangscope"} for i, stage in enumerate(STAGES)},
    "parsers": {"parsers"},  # pure: text in, records out; nothing of the pipeline
    "run": {*ROOMS, *LEAVES, "gangscope", "templates"},
    "sinks": {"sinks", *RECORD_MODEL, *LEAVES, "gangscope", "templates"},
    "report": {"report", *RECORD_MODEL, *LEAVES, "gangscope", "templates"},
    "dashboard": {"dashboard", "sinks.indices", *RECORD_MODEL, *LEAVES, "gangscope", "templates"},
    "errors": {"parsers"},  # leaves: nothing of the pipeline
    "isolation": {"parsers"},
    "spill": set(),  # objects waiting on disk: nothing of the project
    "main": {"run"},  # gangscope/__main__.py
    "package": set(),  # gangscope/__init__.py, pipeline/__init__.py, templates/__init__.py
}

# Imports against the rules that exist today, each with its reason. This set only shrinks:
# a move that removes one must remove its entry (test_every_allowance_is_still_needed).
# Keyed by (importing file, imported module), not by line, so that edits around it do not matter.
ALLOWED_FOR_NOW: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Edge:
    file: str  # the importing file, relative to ROOT
    line: int
    room: str  # the importing file's room
    target: str  # the imported module, e.g. "parsers.records", "sinks.indices", "errors"

    @property
    def target_room(self) -> str:
        return self.target.split(".")[0]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.room} imports {self.target}"


def code_files() -> list[Path]:
    files = [*ROOT.glob("gangscope/*.py")]
    for folder in CODE:
        files += (ROOT / folder).rglob("*.py")
    return sorted(f for f in files if "__pycache__" not in f.parts)


def dotted_name(path: Path) -> str:
    """gangscope.<...> of a file of the code, as the installed package names it (tests.x of a test)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] in CODE:
        parts.insert(0, "gangscope")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_file(dotted: str) -> Path | None:
    """The file (or namespace folder) that `dotted` names in this tree, following the links."""
    parts = dotted.split(".")
    if parts[0] != "gangscope":
        return None
    path = ROOT.joinpath(*parts)
    if path.with_name(path.name + ".py").is_file():
        return path.with_name(path.name + ".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.is_dir():
        return path  # a namespace package (templates/index)
    return None


def room_of(file: str) -> str:
    parts = Path(file).parts
    if parts[-1] == "__init__.py" and len(parts) <= 2:
        return "package"
    if parts[0] == "gangscope":
        return "main" if parts[-1] == "__main__.py" else "package"
    if parts[0] in ("parsers", "templates"):
        return parts[0]
    if len(parts) == 2:  # a module right under pipeline/
        return Path(parts[1]).stem
    return parts[1]


def target_of(dotted: str) -> str:
    """'gangscope.pipeline.sinks.indices' -> 'sinks.indices'; 'gangscope.parsers.records' -> 'parsers.records'."""
    parts = dotted.split(".")[1:]
    if not parts:
        return "gangscope"
    if parts[0] == "pipeline":
        parts = parts[1:] or ["pipeline"]
    return ".".join(parts)


def imported_modules(node: ast.AST, importer: str) -> list[tuple[str, list[str]]]:
    """(module, names) of one import statement, relative imports made absolute."""
    if isinstance(node, ast.Import):
        return [(alias.name, []) for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if node.level:
            base = importer.split(".")
            base = base[: len(base) - node.level + (1 if importer_is_package(importer) else 0)]
            module = ".".join([*base, module] if module else base)
        return [(module, [alias.name for alias in node.names])]
    return []


def importer_is_package(dotted: str) -> bool:
    f = module_file(dotted)
    return f is not None and f.name == "__init__.py"


def readers_files() -> list[Path]:
    """The code, and the files that import it: tests and benchmarks (which CI does not run)."""
    return [*code_files(), *sorted(ROOT.glob("tests/*.py")), *sorted(ROOT.glob("bench/*.py"))]


@functools.cache
def project_imports(files: tuple[Path, ...] | None = None) -> list[tuple[str, int, str, list[str]]]:
    """(file, line, module, names) of every gangscope import of `files` (the code files by default)."""
    out = []
    for path in files or code_files():
        file = str(path.relative_to(ROOT))
        importer = dotted_name(path)
        for node in ast.walk(ast.parse(path.read_text(), file)):
            for module, names in imported_modules(node, importer):
                if module == "gangscope" or module.startswith("gangscope."):
                    out.append((file, node.lineno, module, names))
    return out


@functools.cache
def edges() -> list[Edge]:
    out = []
    for file, line, module, names in project_imports():
        # `from gangscope.parsers import records` imports the module gangscope.parsers.records
        submodules = [f"{module}.{n}" for n in names if module_file(f"{module}.{n}") is not None]
        for target in submodules or [module]:
            out.append(Edge(file, line, room_of(file), target_of(target)))
    return out


def allowed(edge: Edge) -> bool:
    rules = MAY_IMPORT.get(edge.room, set())
    return edge.target_room in rules or edge.target in rules or any(
        edge.target.startswith(rule + ".") for rule in rules if "." in rule
    )


def violations(rooms: set[str]) -> list[Edge]:
    return [
        e for e in edges()
        if e.room in rooms and not allowed(e) and (e.file, e.target) not in ALLOWED_FOR_NOW
    ]  # fmt: skip


def listed(found: list[Edge]) -> str:
    return "\n".join(str(e) for e in found)


# ----------------------------------------------------------------------------- the rooms


def test_the_layout_is_read_from_the_code():
    # the rules below would pass on an empty list: the walk must see the rooms and their imports
    rooms = {e.room for e in edges()}
    assert {"parsers", "sources", "curate", "correlate", "diagnose", "run", "sinks", "report", "dashboard"} <= rooms
    assert any(e.room == "run" and e.target_room == "diagnose" for e in edges())


def test_every_pipeline_module_is_in_a_room():
    strays = [
        str(f.relative_to(ROOT)) for f in code_files()
        if f.parent == ROOT / "pipeline" and f.stem not in LEAVES | {"__init__"}
    ]  # fmt: skip
    strays += [str(d.relative_to(ROOT)) for d in (ROOT / "pipeline").iterdir()
               if d.is_dir() and d.name != "__pycache__" and d.name not in ROOMS]  # fmt: skip
    assert not strays, f"modules outside the rooms {sorted(ROOMS)}: {strays}"


def test_parsers_import_nothing_from_the_pipeline():
    assert not violations({"parsers"}), listed(violations({"parsers"}))


def test_each_stage_imports_only_the_stages_before_it():
    found = violations({"sources", "curate", "correlate", "diagnose"})
    assert not found, listed(found)


def test_sinks_and_report_import_only_the_records():
    found = violations({"sinks", "report"})
    assert not found, listed(found)


def test_the_dashboard_reads_only_the_indices_and_the_records():
    assert not violations({"dashboard"}), listed(violations({"dashboard"}))


def test_only_the_drivers_import_run():
    found = [e for e in edges() if e.target_room == "run" and e.room not in ("run", "main")]
    assert not found, listed(found)


def test_errors_and_isolation_are_leaves():
    found = violations(LEAVES | {"package"})
    assert not found, listed(found)


def test_the_record_model_imports_nothing_else_of_the_project():
    # what sinks, report and dashboard may import must not bring the parsers in behind it
    found = [e for e in edges() if e.file in {f"{m.replace('.', '/')}.py" for m in RECORD_MODEL}
             and e.target not in RECORD_MODEL]  # fmt: skip
    assert not found, listed(found)


def test_every_allowance_is_still_needed():
    present = {(e.file, e.target) for e in edges() if not allowed(e)}
    stale = [f"{file} -> {target}" for file, target in ALLOWED_FOR_NOW if (file, target) not in present]
    assert not stale, f"no longer imported against the rules: remove from ALLOWED_FOR_NOW: {stale}"


# ----------------------------------------------------------------------------- imports a tool can follow


@functools.cache
def defined_names(path: Path) -> set[str] | None:
    """Names a module defines at its top level; None when it cannot be known (`import *`, `__getattr__`)."""
    names: set[str] = set()
    if path.is_dir():  # a namespace package: its submodules only
        return names

    def walk(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for block in ("body", "orelse", "finalbody"):
                    walk(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)

    walk(ast.parse(path.read_text()).body)
    return None if "*" in names or "__getattr__" in names else names


def test_every_project_import_names_a_module_or_a_name_of_the_tree():
    unresolved = []
    imports = project_imports(tuple(readers_files()))
    for file, line, module, names in imports:
        target = module_file(module)
        if target is None:
            unresolved.append(f"{file}:{line}: no module {module}")
            continue
        defined = defined_names(target)
        for name in names:
            if module_file(f"{module}.{name}") is None and defined is not None and name not in defined:
                unresolved.append(f"{file}:{line}: {module} has no {name}")
    assert len(imports) > 300
    assert not unresolved, "\n".join(unresolved)


def test_no_module_imports_a_top_level_folder_by_its_own_name():
    # `import parsers.x` works only from the root of the tree: the wheel has gangscope.parsers only
    found = []
    for path in readers_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module]
            else:
                continue
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: import {m}" for m in modules if m.split(".")[0] in CODE]
    assert not found, "\n".join(found)
