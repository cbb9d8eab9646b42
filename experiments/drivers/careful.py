"""The careful writer, Python's twin of util/files.h (writeOutputFile, checkOutputFile, OutputFile), and
the drivers' one-line errors. Every file a Python driver writes where a user said (a CSV, a PNG, a plan,
a shortlist) goes through here, checked against every input of the run:

 * a symbolic link is followed and the file it names is written (the link stays);
 * a regular file, or none yet: write_output puts the bytes in a temporary file beside it, then renames
   it into place (a reader never sees half a file; an existing file's permission bits are kept);
   OutputFile (rows as they finish) writes in place, emptied only after the checks;
 * a FIFO or a character device (/dev/stdout, /dev/null, /dev/full) is written in place, never replaced;
 * a directory, a block device, a socket and any input of the run (same device and inode, through any
   link or name) are refused: OutputRefused, "WHAT FILE: reason", exit 2;
 * a write that fails (ENOSPC, EFBIG under ulimit -f, EACCES, ...): OutputFailed, "WHAT FILE: cannot
   write: reason", exit 1, and no temporary file is left behind.

run_main(program, main, argv) turns these, bad input (BadInput), Ctrl-C, SIGTERM and anything unexpected
into one line on stderr and the exit code of docs/cli.md's table; messages escape control characters
(one_line) so that echoed input never breaks the line.
"""
import argparse
import os
import re
import signal
import stat
import sys
import traceback

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_UNAVAILABLE = 0, 1, 2, 3


class OutputRefused(ValueError):
    """An output refused for what it is (exit 2): a directory, an input of this run, ..."""


class OutputFailed(OSError):
    """A write that failed (exit 1): the file and why."""


class BadInput(ValueError):
    """Bad input named by a driver (exit 2): the message is the whole line after the program's name."""


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}


def one_line(text):
    """`text` with its control characters written out (\\n, \\t, \\e, \\xHH), as the CLI's messages do
    (cli/options.h escapeControls): input echoed in a message never adds a line or moves the cursor."""
    return "".join(_ESCAPES.get(c, "\\x%02x" % ord(c)) if ord(c) < 32 or ord(c) == 127 else c for c in str(text))


def _through_links(path, what):
    p = path
    for _ in range(40):
        try:
            if not stat.S_ISLNK(os.lstat(p).st_mode):
                return p
            target = os.readlink(p)
        except FileNotFoundError:
            return p
        except OSError as e:
            raise OutputRefused(f"{what} {path}: cannot read the symbolic link: {e.strerror}") from None
        p = target if os.path.isabs(target) else os.path.join(os.path.dirname(p), target)
    raise OutputRefused(f"{what} {path}: a loop of symbolic links")


def _refuse(st, path, shown, inputs, what):
    for given in inputs:
        if not given:
            continue
        try:
            other = os.stat(given)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            where = "" if os.fspath(given) == path else f"{os.fspath(given)}, "
            raise OutputRefused(f"{what} {shown}: is {where}an input of this run; refusing to overwrite it")
    if stat.S_ISDIR(st.st_mode):
        raise OutputRefused(f"{what} {shown}: a directory, not a file")
    if stat.S_ISBLK(st.st_mode):
        raise OutputRefused(f"{what} {shown}: a block device; refusing to write to it")
    if stat.S_ISSOCK(st.st_mode):
        raise OutputRefused(f"{what} {shown}: a socket, not a file")


def _target(path, inputs, what):
    """(the file links name, the name messages give, its stat or None), after the refusals."""
    path = os.fspath(path) if path is not None else ""
    if not path:
        raise OutputRefused(f"{what}: an empty file name")
    if "\0" in path:
        raise OutputRefused(f"{what} {one_line(path)}: a file name cannot hold a NUL byte")
    real = _through_links(path, what)
    shown = path if real == path else f"{path} (-> {real})"
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real, shown, None
    except OSError as e:
        raise OutputFailed(f"{what} {shown}: cannot write: {e.strerror}") from None
    _refuse(st, path, shown, [os.fspath(i) for i in inputs if i], what)
    return real, shown, st


def check_output(path, inputs=(), what="--out"):
    """The refusals of write_output alone, nothing written: a driver that runs long before it writes
    refuses its output before the run, not after it."""
    _target(path, inputs, what)


def _bytes(data):
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_output(path, data, inputs=(), what="--out"):
    """Writes `data` (str or bytes) to `path` as the module's head says; OutputRefused or OutputFailed."""
    real, shown, st = _target(path, inputs, what)
    data = _bytes(data)
    try:
        if st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            fd = os.open(real, os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY)
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            return
        tmp = f"{real}.{os.getpid()}.{next(_counter)}.tmp"
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            if st is not None:
                os.chmod(tmp, mode)
            os.rename(tmp, real)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)
    except OSError as e:
        raise OutputFailed(f"{what} {shown}: cannot write: {e.strerror or e}") from None


def _counting():
    n = 0
    while True:
        yield n
        n += 1


_counter = _counting()


class OutputFile:
    """An output written as it goes (a driver's CSV, each row as its point finishes): the refusals of
    write_output, then the file opened in place (a regular file emptied after the checks, never before).
    write() and close() raise OutputFailed naming the file."""

    def __init__(self, path, inputs=(), what="--out"):
        real, self.name, _ = _target(path, inputs, what)
        self.what = what
        try:
            self.fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOCTTY, 0o666)
        except OSError as e:
            raise OutputFailed(f"{what} {self.name}: cannot write: {e.strerror}") from None
        try:
            st = os.fstat(self.fd)
            _refuse(st, os.fspath(path), self.name, [os.fspath(i) for i in inputs if i], what)
            if stat.S_ISREG(st.st_mode):
                os.ftruncate(self.fd, 0)
        except OSError as e:
            os.close(self.fd)
            raise OutputFailed(f"{what} {self.name}: cannot write: {e.strerror}") from None
        except BaseException:
            os.close(self.fd)
            raise

    def write(self, text):
        if self.fd < 0:
            raise OutputFailed(f"{self.what} {self.name}: cannot write: already closed")
        try:
            _write_all(self.fd, _bytes(text))
        except OSError as e:
            raise OutputFailed(f"{self.what} {self.name}: cannot write: {e.strerror}") from None
        return len(text)

    def flush(self):
        pass  # nothing is buffered here

    def close(self):
        if self.fd < 0:
            return
        fd, self.fd = self.fd, -1
        try:
            os.close(fd)
        except OSError as e:
            raise OutputFailed(f"{self.what} {self.name}: cannot write: {e.strerror}") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's grammar: a bad flag is one line "PROG: --flag: why (see PROG --help)",
    exit 2, never a usage block; no abbreviated flags (--o is not --out)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        m = re.match(r"argument ([^:]+): (.*)", message, re.S)
        text = f"{m.group(1).split('/')[0]}: {m.group(2)}" if m else message
        sys.stderr.write(f"{self.prog}: {one_line(text)} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_INVALID)


_INTEGER = re.compile(r"[0-9]+\Z")


def integer(lo, hi):
    """An argparse type: a whole number written in ASCII digits (leading zeros allowed; no sign, no
    spaces, no '_'), from lo to hi: docs/cli.md's grammar of integers, as the CLI reads them."""
    def parse(text):
        if not _INTEGER.match(text) or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"expected an integer in {lo}..{hi}, got '{text}'")
        return int(text)
    parse.__name__ = "integer"
    return parse


class _Stopped(BaseException):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _on_stop(signum, _frame):
    raise _Stopped(signum)


def run_main(program, main, argv):
    """main(argv)'s exit code, with every failure one line on stderr "PROGRAM: ..." and the exit code of
    docs/cli.md: 2 bad input (BadInput, OutputRefused), 1 a failed write or run, 128+N a signal (SIGTERM
    and SIGHUP unwind like Ctrl-C, so no temporary file survives)."""
    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) == signal.SIG_DFL:
            signal.signal(s, _on_stop)

    def say(text):
        sys.stderr.write(f"{program}: {one_line(text)}\n")

    try:
        return main(argv)
    except (BadInput, OutputRefused) as e:
        say(e)
        return EXIT_INVALID
    except OutputFailed as e:
        say(e)
        return EXIT_FAILED
    except MemoryError:
        say("out of memory")
        return EXIT_FAILED
    except KeyboardInterrupt:
        say("interrupted")
        return 128 + signal.SIGINT
    except _Stopped as e:
        say(f"stopped by {signal.Signals(e.signum).name}")
        return 128 + e.signum
    except BrokenPipeError:
        return EXIT_FAILED  # stdout closed by its reader (| head): nothing more to say
    except Exception as e:  # noqa: BLE001  a bug, not a user's mistake: one line that says where
        frame = traceback.extract_tb(e.__traceback__)[-1]
        say(f"internal error at {os.path.basename(frame.filename)}:{frame.lineno}: {type(e).__name__}: {e}")
        return EXIT_FAILED
