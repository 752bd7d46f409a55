"""The project's packages import one another without a circle.

Every module of every top-level package that ``pyproject.toml`` ships is parsed with :mod:`ast`;
each ``import`` and ``from … import …`` statement, at module level or inside a function, is an edge
from the importing module to the imported one (``from pkg import sub`` to the submodule
``pkg.sub`` when there is one). Importing ``pkg.sub`` also depends on ``pkg``, whose
``__init__`` Python runs first, except from inside ``pkg`` itself: a package is always
initialised before its submodules, so a package ``__init__`` importing its own submodules is no
circle. The graph must have no cycle.

Modules of :data:`NO_DYNAMIC_IMPORTS` must not import by name at run time
(``importlib.import_module``, ``__import__``): such an import is invisible to this graph.

On that graph the packages import only the layers below them (:data:`LAYERS`), the rooms of
``app`` only the rooms before them (:data:`ROOMS`), and neither the rule packages nor the review
room import an HTTP or web-server library (:data:`HTTP_LIBRARIES`). docs/architecture.md draws
the same picture.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.packages import PACKAGES, top_level_packages

ROOT = Path(__file__).resolve().parent.parent

#: Packages whose modules may only import with import statements: every package shipped.
NO_DYNAMIC_IMPORTS: tuple[str, ...] = PACKAGES


def project_packages(root: Path = ROOT) -> tuple[str, ...]:
    """The top-level packages ``pyproject.toml`` ships (directories with an ``__init__.py``)."""
    return tuple(top for top in top_level_packages(root) if (root / top / "__init__.py").is_file())


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    path: Path
    is_package: bool

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def project_modules(packages: Iterable[str], root: Path = ROOT) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            modules[name] = Module(name, path, is_package)
    return modules


def ancestors(name: str) -> Iterator[str]:
    """``a.b.c`` -> ``a``, ``a.b``."""
    parts = name.split(".")
    for end in range(1, len(parts)):
        yield ".".join(parts[:end])


def imported_modules(module: Module, tree: ast.AST, modules: dict[str, Module]) -> Iterator[str]:
    """The project modules ``module`` imports, wherever the import statement stands: ``from pkg
    import name`` imports the submodule ``pkg.name`` when there is one, else ``pkg`` itself."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if target in modules:
                    yield target
                elif source in modules:
                    yield source


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
        own = {name, *ancestors(name)}
        for target in imported_modules(module, tree, modules):
            graph[name].add(target)
            # Python runs the enclosing packages' __init__ first; the importer's own packages
            # are already initialised (or under way) when it runs.
            graph[name].update(a for a in ancestors(target) if a not in own)
        graph[name].discard(name)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def cycle_through(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest import path from the component's first module back to itself."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - a component has one


def import_cycles(root: Path = ROOT) -> list[str]:
    graph = import_graph(project_modules(project_packages(root), root))
    return [" -> ".join(cycle_through(graph, component)) for component in strongly_connected(graph)]


def dynamic_imports(module: Module) -> Iterator[str]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    for node in ast.walk(tree):
        where = f"{module.path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and node.module == "importlib":
            if any(alias.name == "import_module" for alias in node.names):
                yield f"{where}: from importlib import import_module"
        elif isinstance(node, ast.Attribute) and node.attr == "import_module":
            yield f"{where}: {ast.unparse(node)}"
        elif isinstance(node, ast.Name) and node.id == "__import__":
            yield f"{where}: __import__"


def write_tree(root: Path, files: dict[str, str]) -> None:
    """A tree of packages for the tests of the checks themselves."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


# --------------------------------------------------------------------------- tests


def test_the_packages_are_those_pyproject_ships() -> None:
    packages = project_packages()
    assert {"app", "certs", "conversion", "defaulting", "validation"} <= set(packages)
    assert set(NO_DYNAMIC_IMPORTS) <= set(packages)


def test_no_import_cycle() -> None:
    cycles = import_cycles()
    assert not cycles, "import cycles:\n  " + "\n  ".join(cycles)


def test_no_import_by_name() -> None:
    modules = project_modules(NO_DYNAMIC_IMPORTS)
    found = [line for module in modules.values() for line in dynamic_imports(module)]
    assert not found, "imports by name (invisible to the import graph):\n  " + "\n  ".join(found)


def test_the_graph_sees_what_python_runs(tmp_path: Path) -> None:
    """Function-level imports, submodules named in ``from`` imports, relative imports and the
    package ``__init__`` an import runs first are edges; a package importing its own submodules
    is not a circle."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["p", "p.*", "q", "r"]\n'
    )
    files = {
        "p/__init__.py": "from p import a\nfrom . import b\n",
        "p/a.py": "import os\nfrom .b import thing\nfrom p import b\n",
        "p/b.py": "thing = 1\n",
        "p/sub/__init__.py": "",
        "p/sub/c.py": "def late():\n    from q import d\n",
        "q/__init__.py": "from p.sub import c\n",
        "q/d.py": "",
        "r/__init__.py": "from r.e import f\nVALUE = 1\n",
        "r/e.py": "from r import VALUE\n",
    }
    write_tree(tmp_path, files)
    graph = import_graph(project_modules(project_packages(tmp_path), tmp_path))
    assert graph["p"] == {"p.a", "p.b"}
    assert graph["p.a"] == {"p.b"}
    assert graph["p.sub.c"] == {"q", "q.d"}
    assert graph["q"] == {"p", "p.sub", "p.sub.c"}
    assert graph["r.e"] == {"r"}
    assert import_cycles(tmp_path) == ["p.sub.c -> q -> p.sub.c", "r -> r.e -> r"]


#: The packages each package may import (besides itself): the layers of docs/architecture.md.
LAYERS: dict[str, set[str]] = {
    "domain": set(),
    "gocompat": {"domain"},
    "conversion": {"domain", "gocompat"},
    "validation": {"domain", "gocompat", "conversion"},
    "defaulting": {"domain", "gocompat", "conversion", "validation"},
    "kinds": {"domain", "gocompat", "conversion", "validation", "defaulting"},
    "certs": {"domain", "kinds"},
    "apiserver": {"domain", "gocompat", "conversion", "validation", "defaulting", "kinds"},
    "app": {"domain", "gocompat", "conversion", "validation", "defaulting", "kinds", "certs", "apiserver"},
}


def test_packages_import_only_the_layers_below() -> None:
    packages = project_packages()
    assert set(LAYERS) == set(packages)
    graph = import_graph(project_modules(packages))
    wrong = sorted(
        f"{src} imports {dst}"
        for src, targets in graph.items()
        for dst in targets
        if (a := src.split(".")[0]) != (b := dst.split(".")[0]) and b not in LAYERS[a]
    )
    assert not wrong, wrong


#: The rooms of ``app`` (its sub-packages) and the rooms each may import besides itself: the review
#: envelope at the bottom, the serving process on it, the cluster tools on both (they review as
#: the server does, with its settings and look-ups), the command line on top (it starts them all).
ROOMS: dict[str, set[str]] = {
    "app.review": set(),
    "app.server": {"app.review"},
    "app.cluster": {"app.review", "app.server"},
    "app.cli": {"app.review", "app.server", "app.cluster"},
}

#: Third-party libraries that speak HTTP or run a web server: none of them below the server.
HTTP_LIBRARIES = ("fastapi", "starlette", "uvicorn", "httptools", "h11", "httpx", "kubernetes", "urllib3")

#: The packages that must know nothing of HTTP: the rules, and the review envelope the server and
#: the tools share.
HTTP_FREE = ("domain", "gocompat", "conversion", "validation", "defaulting", "kinds", "app.review")


def room_of(module: str) -> str | None:
    """The room of ``app`` a module lives in (``app.server.tls`` -> ``app.server``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "app" and len(parts) > 1 else None


def third_party_imports(module: Module) -> Iterator[str]:
    """The top-level names of everything ``module`` imports (absolute imports only)."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0]


def test_app_is_its_rooms() -> None:
    """Every module of ``app`` lives in one of the rooms; ``app`` and the rooms' ``__init__``
    import nothing, so importing one module loads no other room."""
    modules = project_modules(("app",))
    loose = sorted(name for name in modules if name != "app" and room_of(name) not in ROOMS)
    assert not loose, f"modules of app outside its rooms {sorted(ROOMS)}: {loose}"
    assert {name for name in modules if name.count(".") == 1} == set(ROOMS)
    for name in ("app", *ROOMS):
        tree = ast.parse(modules[name].path.read_text(encoding="utf-8"))
        imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
        assert all(isinstance(node, ast.ImportFrom) and node.module == "__future__" for node in imports), name
        assert ast.get_docstring(tree), f"{name} says what it owns"


def upward_room_imports(graph: dict[str, set[str]]) -> list[str]:
    """The imports from one room of ``app`` into another that :data:`ROOMS` does not allow."""
    return sorted(
        f"{src} imports {dst}"
        for src, targets in graph.items()
        for dst in targets
        if (a := room_of(src)) is not None
        and (b := room_of(dst)) is not None
        and a != b
        and b not in ROOMS[a]
    )


def test_rooms_import_only_the_rooms_before_them() -> None:
    graph = import_graph(project_modules(project_packages()))
    wrong = upward_room_imports(graph)
    assert not wrong, wrong
    # Only the command line starts things: nothing below it names it.
    assert not [
        f"{s} imports {d}"
        for s, ts in graph.items()
        for d in ts
        if d.startswith("app.cli") and room_of(s) != "app.cli"
    ]


def test_rules_and_the_review_envelope_know_nothing_of_http() -> None:
    modules = project_modules(project_packages())
    wrong = sorted(
        f"{name} imports {library}"
        for name, module in modules.items()
        if name.startswith(HTTP_FREE)
        for library in set(third_party_imports(module)) & set(HTTP_LIBRARIES)
    )
    assert not wrong, wrong


def test_the_room_rules_catch_an_upward_import(tmp_path: Path) -> None:
    """The rules as checked see an import from a lower room into a higher one, at any depth."""
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.packages.find]\ninclude = ["app", "app.*"]\n')
    files = {
        "app/__init__.py": "",
        "app/review/__init__.py": "",
        "app/review/dispatch.py": "def late():\n    from app.server.routes import x\n",
        "app/server/__init__.py": "",
        "app/server/routes.py": "x = 1\nfrom app.review import dispatch\n",
    }
    write_tree(tmp_path, files)
    graph = import_graph(project_modules(project_packages(tmp_path), tmp_path))
    # Importing app.server.routes runs app.server's __init__ first: both are edges.
    assert upward_room_imports(graph) == [
        "app.review.dispatch imports app.server",
        "app.review.dispatch imports app.server.routes",
    ]
