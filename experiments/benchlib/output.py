"""The one careful writer of the Python drivers in experiments/benchlib (bench.py and what it shares).

Every file a driver here writes (CSV, table, figure) goes through write_bytes/write_text: a temporary
file beside the target, renamed onto it, so a run cut short leaves the previous file or the new one,
never half of one; never onto a special file (a FIFO, a device) and never onto a file the run reads
(its inputs: a .tape, a plan, a strategy's source). One place, so that it can become the twin of
util/files.h's writeOutputFile that the hostile-input work (issue 49) gives every Python driver.
"""
import os
import tempfile


class OutputError(ValueError):
    """A file that must not be written: one line naming it."""


def _check(path, inputs):
    real = os.path.realpath(path)
    for i in inputs:
        if i and os.path.exists(i) and os.path.exists(real) and os.path.samefile(real, i):
            raise OutputError(f"{path}: is an input of this run")
    if os.path.exists(real) and not os.path.isfile(real):
        raise OutputError(f"{path}: not a regular file")
    return real


def write_bytes(path, data, inputs=()):
    """Writes `data` to `path` atomically (temporary file beside it, then rename); creates its folder."""
    real = _check(path, inputs)
    folder = os.path.dirname(real) or "."
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(real) + ".")
    except OSError as e:
        raise OutputError(f"{path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_text(path, text, inputs=()):
    write_bytes(path, text.encode("utf-8"), inputs)
