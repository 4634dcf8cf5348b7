import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pyterrier_sparse_eval"


def test_import_does_not_load_torch_or_transformers():
    code = (
        "import sys, pyterrier_sparse_eval as pse; "
        "pse.BM25(); pse.SparseIndex('x'); "
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_artifact_entry_point_is_registered():
    from importlib.metadata import entry_points

    eps = {ep.name: ep.value for ep in entry_points(group="pyterrier.artifact")}
    assert eps.get("sparse_index.csr") == "pyterrier_sparse_eval._index:SparseIndex"


# The architecture, as layers: a module may import only modules of lower layers (imports inside functions and
# under TYPE_CHECKING count too). measures/ is the base: it depends on nothing else of the package.
LAYERS = {
    "measures._order": 0,
    "measures._score_dist": 0,
    "measures._warn": 0,
    "measures._json": 0,  # results as strict JSON
    "measures._spelling": 0,  # names close to a mistyped measure name
    "_streams": 0,
    "_startup": -1,  # Ctrl-C while the command line imports the package (console.py hands it back)
    "measures._prepare": 1,
    "measures._frames": 2,
    "measures._metrics": 2,
    "measures._inhouse": 3,
    "measures._evaluate": 4,
    "measures._crosscheck": 4,
    "measures._sdm": 4,
    "measures._sdm_samples": 5,  # SDM from background samples given directly
    "measures": 6,
    "_open_files": 0,  # the open-files limit
    "files": 1,
    "console": 0,
    "_weights": 0,
    "analysis._base": 0,
    "analysis._standard": 1,
    "analysis._english": 1,
    "analysis._arabic": 1,  # language chains: the base only
    "analysis._german": 1,
    "analysis._romance": 1,
    "analysis._japanese": 1,
    "analysis._indic_stem": 1,
    "analysis._thai": 1,
    "analysis._snowball": 1,
    "analysis._indonesian": 1,
    "analysis._cjk": 1,
    "analysis._indic": 2,
    "analysis": 3,  # the registry of languages
    "_tokenize": 4,
    "_numba": 0,
    "_records": 0,  # local files' lines and layouts
    "_attributes": 0,  # PyTerrier's parameter tools on the transformers
    "_fields": 1,  # documents' text fields: which to index, the warnings, the texts joined
    "_trec_files": 1,  # TREC run and qrels files
    "collections": 1,  # local files as datasets
    "_hf_base": 4,  # the datasets library, hub files and the base of hub collections
    "hf": 5,  # Hugging Face hub collections
    "datasets": 6,  # leaves
    "_identical": 7,  # a query's own document left out of its results (BEIR)
    "_topk": 10,
    "_docnos": 10,  # result columns of docnos, gathered as bytes
    "_blocks": 11,  # the threshold kernel's block scorers
    "_lucene": 11,  # Lucene's BM25 sum (scipy) and tie order
    "_prune": 12,  # the running-threshold kernel
    "_postings": 10,
    "_textscan": 10,  # compiled kernels and their numpy twins
    "_format": 15,  # the on-disk format and its checks
    "_retriever": 20,
    "_spill": 17,  # spilled chunks to index files
    "_docno_checks": 16,  # docnos of a batch checked as it arrives (types, duplicates)
    "_toks": 19,  # toks dicts and terms as arrays, refused as they arrive
    "_build": 20,  # searching and writing an index
    "_index": 30,  # the artifact, factory of both
    "_ray": 18,  # connecting to Ray; encoding actors and shard-finishing tasks
    "_ray_search": 32,  # shard searchers on a Ray cluster
    "_shard_writer": 33,
    "_sharded_search": 34,  # the top k of every shard merged
    "_sharded": 35,  # shards of the artifact
    "_bm25": 40,
    "_splade": 40,  # encoders
    "_splade_parts": 21,  # torch imported when first used, SPLADE-max pooling, a model's arguments checked
    "_model_files": 16,  # a SPLADE model's files: local or hub, and their fingerprint
    "_cache": 20,  # the command line's index cache on disk: folders and entry names
    "systems": 50,
    "_sample": 45,  # what SDM reads off a run over a pool
    "_pool": 50,
    "_covariate_run": 53,  # the covariate: a pooling run's view of a pool
    "_covariate": 55,  # the pooling run as SDM's covariate
    "_features": 52,  # a run's features for it: the query terms each document holds
    "plots": 50,
    "_sdm_report": 60,
    "_shared_run": 0,  # what the SDM measures share on one run in an ir_measures evaluation
    "_experiment": 60,  # pipelines on a dataset
    "sdm": 70,
    "": 80,  # the package's __init__: re-exports
    "cli.common": 85,  # the command line: what its subcommands share
    "cli.experiment": 87,
    "cli.checks": 87,  # evaluate, crosscheck, check-index
    "cli.sdm": 87,
    "cli": 90,  # the parser and main
    "__main__": 95,
}
MEASURES_MAY_IMPORT = {"numpy", "scipy", "pandas", "ir_measures", "pytrec_eval"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) for every import in the file, relative imports resolved to package module names
    ('' is the package itself; external modules keep their absolute name, prefixed with '/')."""
    name = _module_name(path)
    base = name.split(".") if name else []
    if path.name != "__init__.py":
        base = base[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == PACKAGE.name:
                    out.append((alias.name.removeprefix(PACKAGE.name).lstrip("."), ""))
                else:
                    out.append(("/" + alias.name, ""))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                target = ".".join(anchor + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == PACKAGE.name:
                target = (node.module or "").removeprefix(PACKAGE.name).lstrip(".")
            else:
                out.extend(("/" + (node.module or ""), a.name) for a in node.names)
                continue
            out.extend((target, a.name) for a in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for target, imported in _imports(path):
            if target.startswith("/"):
                continue
            # `from . import datasets` imports the module datasets, not the package
            sub = f"{target}.{imported}" if target else imported
            deps.add(sub if sub in modules else target)
        deps.discard(name)
        graph[name] = deps
    return graph


def test_every_module_has_a_layer_and_imports_only_downhill():
    graph = _graph()
    assert set(graph) == set(LAYERS), "add new modules to LAYERS (or remove gone ones)"
    uphill = [(a, b) for a, deps in graph.items() for b in deps if LAYERS[b] >= LAYERS[a]]
    assert not uphill, f"imports that do not go downhill: {uphill}"


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in graph[node]:
            assert state.get(dep) != 1, (
                f"import cycle: {' -> '.join(n or PACKAGE.name for n in [*path, node, dep])}"
            )
            if dep not in state:
                visit(dep, [*path, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_measures_depend_on_nothing_else_of_the_package():
    for path in (PACKAGE / "measures").glob("*.py"):
        for target, _ in _imports(path):
            if target.startswith("/"):
                top = target[1:].split(".")[0]
                assert top in MEASURES_MAY_IMPORT or top in sys.stdlib_module_names or top == "__future__", (
                    path,
                    top,
                )
            else:
                assert target.split(".")[0] == "measures", (path, target)


def test_cli_uses_public_names_only():
    files = sorted((PACKAGE / "cli").glob("*.py"))
    assert len(files) >= 2, files
    for path in files:
        for target, imported in _imports(path):
            if target.startswith("/"):
                continue
            assert not any(part.startswith("_") for part in target.split(".") if part), (path.name, target)
            assert not imported.startswith("_") or (imported.startswith("__") and imported.endswith("__")), (
                path.name,
                imported,
            )


def test_modules_stay_small():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert "sdm.py" in sizes and "cli/sdm.py" in sizes  # keyed by path: modules of one name are both seen
    assert max(sizes.values()) <= 500, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_no_module_imports_torch_at_top_level():
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only: lazy imports inside functions are fine
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(m.split(".")[0] in ("torch", "transformers") for m in mods), path


def test_the_readme_s_code_layout_names_every_module():
    """README's "Code layout" table (under "Development") places each top-level module of the package once."""
    import itertools
    import re

    lines = (PACKAGE.parent / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("| layer | modules |"))
    rows = itertools.takewhile(lambda line: line.startswith("|"), lines[start + 2 :])
    named = re.findall(r"`(\w+)\.py`", "\n".join(rows))
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert sorted(modules - set(named)) == [], "modules README's code layout does not name"
    assert sorted(set(named) - modules) == [] and len(named) == len(set(named)), named
