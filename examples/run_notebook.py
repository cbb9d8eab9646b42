#!/usr/bin/env python3
"""Executes a notebook headless (nbclient, the kernel of this interpreter) and writes the executed copy:
    run_notebook.py NOTEBOOK.ipynb [OUT.ipynb]
Exit 0 when every cell ran, 1 naming the cell that failed, 77 when nbclient or ipykernel is missing."""
import os
import sys

try:
    import nbclient
    import nbformat
    import ipykernel  # noqa: F401  (the kernel the notebook runs in)
except ImportError as e:
    print(f"run_notebook: skipped: {e} (apt install python3-nbclient python3-ipykernel)")
    sys.exit(77)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    path, out = argv[0], (argv[1] if len(argv) > 1 else None)
    nb = nbformat.read(path, as_version=4)
    # The kernel is this interpreter (the one tapelab was built for), whatever python3 PATH finds first.
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        print(f"run_notebook: {path}: a cell failed:\n{str(e)[-1500:]}")
        return 1
    if out:
        nbformat.write(nb, out)
    cells = sum(c.cell_type == "code" for c in nb.cells)
    print(f"run_notebook: {path}: {cells} code cells ran" + (f", executed copy in {out}" if out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
