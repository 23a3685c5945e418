"""The import layering of services/: no cycles, and no service importing another.

Every import counts, wherever it stands: at the top of a module, inside a function (imported on
first use) or under `if TYPE_CHECKING:`. A lazy import only postpones a cycle; it does not break it.

The layers (README, "Architecture"):
- services.model_export writes the local model's ONNX graphs (a build step): it imports nothing of
  services, so that common's model files may run it when an export is missing.
- services.common is the floor above it: it imports only itself, services.model_export, the
  contracts and third-party packages.
- a service (agent, retrieval, validation, edge) imports only services.common, the contracts,
  third-party packages and itself: each can change and ship alone.
- services.commands, services.cli and services.suite are the top: they may import everything.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
SERVICE_PACKAGES = ("agent", "retrieval", "validation", "edge")
# What each layer may import from services/, besides itself.
ALLOWED = {
    "common": ("services.common", "services.model_export"),
    "model_export": ("services.model_export",),
    **{name: ("services.common",) for name in SERVICE_PACKAGES},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in sorted(SERVICES.rglob("*.py"))
        if not path.name.endswith("_pb2.py")
    }


MODULES = _modules()


def _imported(module: str, path: Path) -> dict[str, int]:
    """The modules of services/ that `module` imports, each with the line of its first import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                base = ".".join(anchor[: len(anchor) - node.level + 1] + ([base] if base else []))
            # `from package import module` imports the module; `from module import name` the module.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in MODULES:  # `import services.common.x.y`: the deepest module
                name = name.rpartition(".")[0]
            if name and name != module:
                found.setdefault(name, node.lineno)
    return found


GRAPH = {module: _imported(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the module count (~200)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return components


def _layer(module: str) -> str | None:
    """The layer a module belongs to, or None for the top (commands, cli, suite, the package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layering_violations(graph: dict[str, dict[str, int]]) -> list[str]:
    violations = []
    for module, imported in graph.items():
        layer = _layer(module)
        if layer is None:
            continue
        allowed = (f"services.{layer}", *ALLOWED[layer])
        for target, line in imported.items():
            if not any(_within(target, prefix) for prefix in allowed):
                violations.append(f"{MODULES[module].relative_to(ROOT)}:{line}: {module} imports {target}")
    return sorted(violations)


def test_the_graph_sees_every_kind_of_import():
    """Top-level, function-level and TYPE_CHECKING imports all count (a guard on the walker)."""
    assert "services.common.errors" in GRAPH["services.common.interceptors"]  # top level
    assert "services.common.logging" in GRAPH["services.cli"]  # inside a function
    assert "services.suite" in GRAPH["services.commands.connect"]  # inside a function
    assert "services.validation.lexical" in GRAPH["services.validation.claim_model"]  # TYPE_CHECKING
    assert len(GRAPH) > 100


def test_the_cycle_finder_finds_a_cycle_through_any_import():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycles_in_services():
    cycles = _cycles(GRAPH)
    described = [
        " -> ".join(cycle)
        + ": "
        + "; ".join(f"{a} imports {b} (line {GRAPH[a][b]})" for a in cycle for b in cycle if b in GRAPH[a])
        for cycle in cycles
    ]
    assert not cycles, "import cycles (lazy imports count too):\n" + "\n".join(described)


def test_the_layering_check_reports_a_service_importing_another():
    graph = {
        "services.agent.tools": {"services.retrieval.sentences": 12, "services.common.errors": 3},
        "services.common.embedding": {"services.model_export": 5},
        "services.cli": {"services.agent.config": 7},
    }
    assert layering_violations(graph) == [
        "services/agent/tools.py:12: services.agent.tools imports services.retrieval.sentences"
    ]


def test_each_service_imports_only_common_and_itself():
    violations = layering_violations(GRAPH)
    assert not violations, "imports across the layers (README, Architecture):\n" + "\n".join(violations)
