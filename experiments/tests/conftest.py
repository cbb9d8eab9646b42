"""The build whose drivers experiments/tests run: --build-dir BUILD (CTest passes the build tree)."""


def pytest_addoption(parser):
    parser.addoption("--build-dir", default=None, help="a build tree with cli/tapelab and experiments/ built")
