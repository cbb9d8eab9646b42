"""The bench's outputs (bench.py and what it shares) through the one careful writer of every Python driver,
experiments/drivers/careful.py (the twin of util/files.h's writeOutputFile): atomic, never onto a special
file or a file the run reads (its inputs: a .tape, a plan, a strategy's source). OutputError is the one-line
error bench.py reports."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "drivers"))
import careful  # noqa: E402


class OutputError(ValueError):
    """A file that must not or could not be written: one line naming it."""


def write_bytes(path, data, inputs=(), what="--out"):
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)  # --out names a folder the bench creates
    except OSError as e:
        raise OutputError(f"{what} {folder}: cannot create the folder: {e.strerror or e}") from None
    try:
        careful.write_output(path, data, inputs, what)
    except (careful.OutputRefused, careful.OutputFailed) as e:
        raise OutputError(str(e)) from None


def write_text(path, text, inputs=(), what="--out"):
    write_bytes(path, text.encode("utf-8"), inputs, what)
