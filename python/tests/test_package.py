"""The package: pyproject.toml's metadata agrees with the CMake tree, pip reads it without building
(a full `pip install .` takes the whole C++ build: the README's command, checked by hand), every
public name has a docstring, and python -m tapelab runs the command."""
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


def test_every_public_name_has_a_docstring():
    for name in tapelab.__all__:
        obj = getattr(tapelab, name)
        if name in ("OPS",):
            continue
        assert (getattr(obj, "__doc__", None) or "").strip(), f"tapelab.{name} has no docstring"


def test_python_m_tapelab_runs_the_command(cli):
    env = dict(os.environ, PATH=os.path.dirname(cli.path) + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run([sys.executable, "-m", "tapelab", "config", "--engine", "reference"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "math=ieee\n"


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
