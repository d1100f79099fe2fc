"""The engine's imports point one way: no module of `hudi_core` reaches itself through its imports.

Every import counts, including those inside functions (a lazy import must not hide a cycle); only
imports under ``if TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "hudi_core"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class _Imports(ast.NodeVisitor):
    """Collects the module names one file imports at run time (not under TYPE_CHECKING, unless `typing`)."""

    def __init__(self, package: str, typing: bool = False) -> None:
        self.package = package
        self.typing = typing
        self.names: list[str] = []

    def visit_If(self, node: ast.If) -> None:
        if "TYPE_CHECKING" in ast.unparse(node.test) and not self.typing:
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")
            anchor = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        self.names.extend(f"{base}.{alias.name}" for alias in node.names)

    def visit_Import(self, node: ast.Import) -> None:
        self.names.extend(alias.name for alias in node.names)


@functools.cache  # parsed once per run: every test here reads the same graph (and never changes it)
def import_graph(typing: bool = False) -> dict[str, set[str]]:
    """Module → the `hudi_core` modules it imports at run time (with `typing`: for type checking too)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        visitor = _Imports(module if path.name == "__init__.py" else module.rpartition(".")[0], typing)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        # `from pkg import name` resolves to `pkg.name` when that is a module, else to `pkg`.
        targets = {resolve(n) for n in visitor.names if n.startswith("hudi_core")}
        graph[module] = {t for t in targets if t and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_sees_lazy_imports() -> None:
    graph = import_graph()
    # `get_executor` imports the Spark executor inside the function: it must still count.
    assert "hudi_core.engines.spark" in graph["hudi_core.engines.engine"]
    assert "hudi_core.io.storage" in graph["hudi_core.table"]


def test_no_import_cycle_in_hudi_core() -> None:
    assert cycles(import_graph()) == []


def test_typing_imports_point_one_way_where_made_so() -> None:
    # The file-system view is built from storage, timeline and properties: it never names the table;
    # the safety check takes any plan with `to_archive`: it never names the archiver.
    graph = import_graph(typing=True)
    assert "hudi_core.table" not in graph["hudi_core.table.fsview"]
    assert "hudi_core.services.archive" not in graph["hudi_core.services.safety"]
    assert "hudi_core.services.safety" in graph["hudi_core.services.archive"]
    # The dashboard reaches the engine through its API only: no adapter module is left.
    assert not any(m == "hudi_core.dashboard.engine" for m in graph)


#: The layers, bottom to top (docs "Architecture"), as folders of the package: a module imports only from its own
#: layer or below. The engines (executors) sit just above the bytes; the Arrow/SQL API (`inspect`), the CLI and
#: the dashboard are the faces; the scenario writers stand beside the engine (they import it; only faces import
#: them), `scenarios.scratch`, the one storage that writes, included: no format or table module reaches up into
#: the writers.
_BYTES, _ENGINES, _FORMATS, _TABLE, _ANALYSIS, _FACES, _BESIDE = 0, 1, 2, 3, 4, 5, 6

#: Folder (or shared module) → layer. Every module of the package falls under exactly one entry.
LAYER_PREFIXES: dict[str, int] = {
    "hudi_core.errors": _BYTES,
    "hudi_core.lazy": _BYTES,
    "hudi_core.io": _BYTES,
    "hudi_core.engines": _ENGINES,
    "hudi_core.formats": _FORMATS,
    "hudi_core.table": _TABLE,
    "hudi_core.services": _ANALYSIS,
    "hudi_core.inspect": _FACES,
    "hudi_core.cli": _FACES,
    "hudi_core.dashboard": _FACES,
    "hudi_core.__main__": _FACES,
    "hudi_core.scenarios": _BESIDE,
}


def layer_of(module: str) -> int:
    if module == "hudi_core":  # the package's public names (lazily imported faces and table)
        return _FACES
    for prefix, layer in LAYER_PREFIXES.items():
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{module} is in no layer folder: add it to LAYER_PREFIXES")


def test_every_module_lives_in_a_layer_folder() -> None:
    """The package's top level reads as its architecture: every module sits in one of the layers' folders."""
    unplaced = []
    for module in import_graph():
        try:
            layer_of(module)
        except AssertionError:
            unplaced.append(module)
    assert unplaced == []
    top = sorted(p.name for p in PACKAGE.iterdir() if not p.name.startswith((".", "__pycache__")))
    assert top == ["__init__.py", "__main__.py", "cli", "dashboard", "engines", "errors.py", "formats", "inspect",
                   "io", "lazy.py", "scenarios", "services", "table"]


def test_imports_point_down_the_layers() -> None:
    """Every run-time import, lazy ones included, goes to the same layer or below (faces may use the
    scenario writers beside the engine). No upward import hides behind a function."""
    upward = []
    for module, targets in sorted(import_graph().items()):
        for target in sorted(targets):
            mine, theirs = layer_of(module), layer_of(target)
            allowed = theirs <= mine or (mine == _FACES and theirs == _BESIDE)
            if not allowed:
                upward.append(f"{module} -> {target}")
    assert upward == []
    assert layer_of("hudi_core.table") < layer_of("hudi_core.inspect")  # the table never builds its Arrow face


#: The readers' side: bytes-level names and storage, the format packages and the table layer.
_READER_PACKAGES = ("hudi_core.formats.timeline", "hudi_core.formats.logfile", "hudi_core.formats.hfile",
                    "hudi_core.formats.mdt", "hudi_core.table.listing")
_READER_MODULES = ("hudi_core.io.storage", "hudi_core.io.properties", "hudi_core.io.filenames", "hudi_core.table",
                   "hudi_core.table.fsview")


def test_no_format_or_table_module_imports_a_scenario_writer() -> None:
    """What writes tables lives in `hudi_core.scenarios`; codecs (encode beside decode) stay with
    the formats. No format, bytes-level or table module imports a writer at run time, lazy imports included."""
    graph = import_graph()
    readers = sorted(m for m in graph if m in _READER_MODULES or m in _READER_PACKAGES
                     or m.startswith(tuple(f"{p}." for p in _READER_PACKAGES)))
    assert {"hudi_core.formats.timeline.archive_encode", "hudi_core.formats.logfile.writer", "hudi_core.table",
            "hudi_core.io.storage", "hudi_core.table.listing", "hudi_core.formats.mdt"} <= set(readers)
    reaching = [f"{m} -> {t}" for m in readers for t in sorted(graph[m]) if t.startswith("hudi_core.scenarios")]
    assert reaching == []
    # The table writers moved out of the format packages; the writers import the codecs, not the reverse.
    assert "hudi_core.formats.timeline.archive_writer" not in graph
    assert "hudi_core.formats.logfile.scenarios" not in graph
    assert "hudi_core.formats.timeline.archive_encode" in graph["hudi_core.scenarios.archive_writer"]
    assert "hudi_core.formats.logfile.writer" in graph["hudi_core.scenarios.log_tables"]


def test_the_writer_check_sees_a_lazy_import() -> None:
    """The visitor counts an import inside a function body, where a lazy upward import would hide."""
    visitor = _Imports("hudi_core.formats.timeline")
    source = "def f():\n    from hudi_core.scenarios.scratch import ScratchDir\n    return ScratchDir\n"
    visitor.visit(ast.parse(source))
    assert visitor.names == ["hudi_core.scenarios.scratch.ScratchDir"]


def test_the_cli_is_one_package_and_no_lower_layer_speaks_argparse() -> None:
    """Every subcommand lives in `hudi_core.cli`; no format, table, analysis, pipeline or
    scenario module imports the CLI, its renderers or argparse."""
    graph = import_graph()
    commands = sorted(m for m in graph if m.rpartition(".")[2] in ("commands", "scan_command"))
    assert commands == []
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        if layer_of(module) == _FACES:
            continue
        assert not any(t.startswith("hudi_core.cli") for t in graph[module]), module
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "argparse" not in imported, module


def test_every_layer_package_says_what_it_holds_and_may_import() -> None:
    """Each layer folder's `__init__` docstring is its map for the next engineer: what it holds, what it imports."""
    import importlib

    silent = []
    for prefix in LAYER_PREFIXES:
        path = PACKAGE.parent / (prefix.replace(".", "/") + "/__init__.py")
        if not path.is_file():
            continue  # a shared module (errors, lazy, __main__), not a folder
        doc = importlib.import_module(prefix).__doc__ or ""
        if "import" not in doc.lower():
            silent.append(prefix)
    assert silent == []
