"""The package: pyproject.toml's metadata agrees with the CMake tree, pip reads it without building
(a full `pip install .` takes the whole C++ build: the README's command, checked by hand), every
public name (functions, classes and their members, in the package, the compiled half, the recorder and
the JAX importer) has a docstring, the type stubs (tapelab/*.pyi, py.typed) name every public name and
member and give every function its arguments as it runs, and python -m tapelab runs the command."""
import inspect
import os
import re
import subprocess
import sys

import pytest

import tapelab

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_pyproject_version_is_cmakes():
    cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    pyproject = open(os.path.join(ROOT, "pyproject.toml")).read()
    version = re.search(r"project\(tapelab VERSION ([0-9.]+)", cmake).group(1)
    assert re.search(r'^version = "([0-9.]+)"', pyproject, re.M).group(1) == version
    assert tapelab.__version__ == version


def _modules():
    """{module: its public names}: the package, the compiled half (its helpers too: they are stubbed), the
    recorder (every op of the table is a function there) and the JAX importer."""
    import tapelab._tapelab as core
    import tapelab.jax_import as jax_import
    import tapelab.record as record
    ops = [o for o in tapelab.OPS if o not in ("const", "input", "randn")]
    return {tapelab: list(tapelab.__all__) + ["__version__"],
            core: [n for n in dir(core) if not n.startswith("__")] + ["__version__"],
            record: list(record.__all__) + ops,
            jax_import: ["from_jax"]}


def _own(cls):
    """A class's members that tapelab defines (not object's, an exception's or pybind11's), by name."""
    out = {}
    for k in reversed(cls.__mro__):
        if k.__module__.startswith("tapelab"):
            out.update(vars(k))
    return {n: v for n, v in out.items() if not n.startswith("__") or n in ("__len__", "__init__", "__eq__")}


def _doc(obj):
    """The docstring a reader gets, without pybind11's signature line."""
    text = (obj.__doc__ if isinstance(obj, property) else getattr(obj, "__doc__", None)) or ""
    name = getattr(obj, "__name__", "")
    if name and text.startswith(name + "("):  # pybind11: "name(args) -> type", then a blank line, then the text
        text = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    return text.strip()


def test_every_public_name_has_a_docstring():
    missing = []
    for module, names in _modules().items():
        for name in names:
            obj = getattr(module, name)
            if isinstance(obj, (str, tuple)):  # __version__, OPS: values, documented where they are defined
                continue
            if not _doc(obj):
                missing.append(f"{module.__name__}.{name}")
            if isinstance(obj, type):
                for member, v in _own(obj).items():
                    if member.startswith("_") and member not in ("__len__", "__init__", "__eq__"):
                        continue
                    if member == "__init__" and not callable(v):
                        continue
                    if (callable(v) or isinstance(v, property)) and not _doc(v):
                        missing.append(f"{module.__name__}.{name}.{member}")
    assert not missing, "no docstring: " + ", ".join(sorted(set(missing)))


STUBS = os.path.join(os.path.dirname(tapelab.__file__))


def _stub(module):
    """(module-level names, {class: member names}, {function or Class.method: ast.FunctionDef}) of its .pyi."""
    import ast
    path = os.path.join(STUBS, module.__name__.split(".")[-1] + ".pyi") if module is not tapelab else \
        os.path.join(STUBS, "__init__.pyi")
    assert os.path.isfile(path), f"{module.__name__}: no stub {path}"
    tree = ast.parse(open(path).read(), path)
    names, classes, functions = set(), {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            members = set()
            for m in node.body:
                if isinstance(m, ast.FunctionDef):
                    members.add(m.name)
                    if not any(isinstance(d, ast.Name) and d.id == "property" for d in m.decorator_list):
                        functions[f"{node.name}.{m.name}"] = m
                elif isinstance(m, ast.AnnAssign):
                    members.add(m.target.id)
            classes[node.name] = members
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets)
        elif isinstance(node, ast.ImportFrom):  # `import X as X`: a re-export (PEP 484), else the stub's own use
            names.update(a.asname for a in node.names if a.asname == a.name)
    return names, classes, functions


def test_the_stubs_name_every_public_name_and_member_and_nothing_else():
    aliases = {"Cuts", "StrategyFunction", "Inputs", "Value", "__getattr__", "__all__"}  # the stubs' own types
    for module, names in _modules().items():
        stub, classes, _ = _stub(module)
        assert set(names) <= stub, f"{module.__name__}: not in its stub: {sorted(set(names) - stub)}"
        stale = {n for n in stub - aliases if not hasattr(module, n)}
        assert not stale, f"{module.__name__}: stubbed but not there: {sorted(stale)}"
        for cls, members in classes.items():
            runtime = getattr(module, cls)
            mine = {n for n in _own(runtime) if (not n.startswith("_") or n.startswith("__"))  # _helpers may be left out
                    and (n != "__init__" or cls in ("Recorder", "Var"))}
            assert mine - {"__eq__"} <= members | {"__eq__"}, \
                f"{module.__name__}.{cls}: not in its stub: {sorted(mine - members - {'__eq__'})}"
            init = _own(runtime).get("__init__")
            assigned = set(re.findall(r"self\.(\w+)\s*=", inspect.getsource(init))) if inspect.isfunction(init) else set()
            there = set(dir(runtime)) | set(getattr(runtime, "__slots__", ())) | assigned  # instance attributes too
            assert members <= there, f"{module.__name__}.{cls}: stubbed but not there: {sorted(members - there)}"
    import tapelab.record as record
    assert {o for o in tapelab.OPS if o not in ("const", "input", "randn")} <= _stub(record)[0], \
        "an op of the table has no function in record.pyi"


def _pybind_parameters(obj):
    """[(name, has_default)] from pybind11's signature line 'name(a: T, b: U = x) -> R' (self dropped)."""
    first = (obj.__doc__ or "").split("\n", 1)[0]
    inside = first[first.index("(") + 1:first.rindex(")")]
    params, depth, cur = [], 0, ""
    for ch in inside + ",":
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            if cur.strip():
                params.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out = [(p.split(":", 1)[0].strip(), " = " in p) for p in params]
    return [p for p in out if p[0] not in ("self", "arg0")] if out and out[0][0] in ("self", "arg0") else out


def _stub_parameters(fn, method):
    """[(name, has_default)] of a stub's def (self dropped); *args and **kwargs as '*name' and '**name'."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    out = [(p.arg, d) for p, d in zip(positional, defaults)]
    if a.vararg:
        out.append(("*" + a.vararg.arg, False))
    out += [(p.arg, d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append(("**" + a.kwarg.arg, False))
    return out[1:] if method else out


def _python_parameters(obj, method):
    import inspect
    out = []
    for p in inspect.signature(obj).parameters.values():
        name = ("*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else "") + p.name
        out.append((name, p.default is not p.empty))
    return out[1:] if method else out


def test_the_stubs_give_every_function_its_arguments():
    checked = 0
    for module in _modules():
        _, _, functions = _stub(module)
        for qualified, fn in functions.items():
            owner, _, name = qualified.rpartition(".")
            obj = getattr(getattr(module, owner), name) if owner else getattr(module, name, None)
            if obj is None or name in ("__getattr__",) or name.startswith("__") and name != "__init__":
                continue
            if module.__name__ == "tapelab.record" and not owner and name not in ("maximum", "minimum"):
                continue  # the op functions take *args at run time (record.py's __getattr__)
            if (obj.__doc__ or "").startswith(name + "("):  # pybind11
                got = _pybind_parameters(obj)
            else:
                got = _python_parameters(obj, bool(owner))
            want = _stub_parameters(fn, bool(owner))
            assert got == want, f"{module.__name__}.{qualified}: runs with {got}, stubbed {want}"
            checked += 1
    assert checked >= 40


def test_python_m_tapelab_runs_the_command(cli):
    env = dict(os.environ, PATH=os.path.dirname(cli.path) + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run([sys.executable, "-m", "tapelab", "config", "--engine", "reference"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "math=ieee,tangent_chunk=0\n"


def test_pip_reads_the_metadata(tmp_path):
    """pip's metadata step (scikit-build-core, no compile): name, version and dependency as declared."""
    try:
        import tomllib
    except ImportError:
        pytest.skip("Python < 3.11: no tomllib to read pyproject.toml here")
    meta = tomllib.load(open(os.path.join(ROOT, "pyproject.toml"), "rb"))
    assert meta["project"]["name"] == "tapelab"
    assert "numpy" in meta["project"]["dependencies"]
    assert meta["build-system"]["build-backend"] == "scikit_build_core.build"
    assert meta["tool"]["scikit-build"]["install"]["components"] == ["python"]
