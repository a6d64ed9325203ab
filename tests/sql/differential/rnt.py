"""Running statements through rnt: `rnt sql` as a prompt on a pipe (one process per case,
each statement's outcome read before the next is sent), or one process per statement.

The prompt (`rnt sql` without SQL, input piped) runs each `;`-ended statement as it
arrives, prints a query's answer (`--format json`) or the commit on stdout and an error on
stderr as `error: …`, and goes on. After each statement the driver sends a marker query,
`SELECT '__rnt_diff_N__' AS m;`: everything on stdout before the marker's answer is the
statement's output, everything on stderr by then its error (the prompt writes stderr
before it reads the next line). The prompt does not print exit codes, so an error's class
is read from its text, as rnt writes it:

    internal error: …   (DbError::Internal, or a panic, which also ends the process with 70)
    … violates … / … violated …   a constraint (exit 2)
    … its program does not compile …, corrupt, damaged   the store reads as damaged (exit 3)
    anything else       exit 1 (refused: not supported, a bind or type error, or an
                        evaluation error such as division by zero)

When the marker itself fails (its error quotes it), the store no longer answers a trivial
query after the statement: the outcome says so (`broken`), and the case cannot go on.

`--per-statement` (run.py) runs each statement as `rnt sql --format json STATEMENT` instead,
with the real exit code: slower (a process and a store opening per statement), used to
check the prompt's reading and for reproductions.
"""
import os
import re
import select
import subprocess
import time

CONSTRAINT = re.compile(r"\bviolates\b|\bviolated\b")
DAMAGED = re.compile(r"its program does not compile|corrupt|damaged")


class Outcome:
    """What rnt did with one statement: `code` 0 ok, 1 refused or failed, 2 a constraint,
    70 internal (or a crash), None a timeout; `out` stdout, `err` stderr."""

    def __init__(self, code, out, err, broken=None):
        self.code, self.out, self.err = code, out, err
        self.broken = broken  # the marker's error, when the store stopped answering

    def rows(self):
        """The answer's rows (a list of lists), or None if the output is not an answer."""
        import json

        text = self.out.strip()
        if not text.startswith("["):
            return None
        return json.loads(text)

    def message(self):
        """The error's first line, without `error: `."""
        for line in self.err.splitlines():
            line = line.strip()
            if line.startswith("error: "):
                return line[len("error: "):]
            if line:
                return line
        return ""


def code_of_error(err):
    if "internal error" in err:
        return 70
    if DAMAGED.search(err):
        return 3
    if CONSTRAINT.search(err):
        return 2
    return 1


def new_store(binary, directory):
    """`rnt init` in `directory` (created); the store path."""
    os.makedirs(directory, exist_ok=True)
    store = os.path.join(directory, ".rnt")
    subprocess.run([binary, "init", "--store", store], check=True, capture_output=True)
    return store


def base_args(binary, store):
    return [binary, "sql", "--store", store, "--no-server", "--memory-budget", "2G", "--format", "json"]


class Prompt:
    """One `rnt sql` prompt on a store; restarted if it dies."""

    def __init__(self, binary, store, timeout=120.0):
        self.binary, self.store, self.timeout = binary, store, timeout
        self.proc = None
        self.marks = 0
        self.starts = 0

    def start(self):
        env = dict(os.environ)
        env.pop("RNT_SQL_HISTORY", None)
        self.proc = subprocess.Popen(
            base_args(self.binary, self.store),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(self.proc.stderr.fileno(), False)
        self.starts += 1

    def close(self):
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            f.close()
        self.proc = None

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdout, self.proc.stderr, self.proc.stdin):
                try:
                    f.close()
                except OSError:
                    pass
            self.proc = None

    def run(self, sql):
        """Runs one statement; its Outcome."""
        if self.proc is None:
            self.start()
        self.marks += 1
        mark = "__rnt_diff_%d__" % self.marks
        needle = b'["' + mark.encode() + b'"]'
        text = " ".join(sql.split("\n")).strip().rstrip(";") + ";\nSELECT '%s' AS m;\n" % mark
        out, err = bytearray(), bytearray()
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        deadline = time.monotonic() + self.timeout
        fds = {self.proc.stdout.fileno(): out, self.proc.stderr.fileno(): err}
        open_fds = set(fds)
        while True:
            failed = err.find(mark.encode())
            if failed >= 0:
                # The marker failed: wait for the end of its error (or the prompt's next
                # read), then split stderr at the error block that quotes it.
                time.sleep(0.05)
                for fd in list(open_fds):
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if chunk:
                        fds[fd].extend(chunk)
                start = err.rfind(b"error: ", 0, failed)
                own = err[:start].decode(errors="replace") if start >= 0 else ""
                marker = err[start:].decode(errors="replace") if start >= 0 else err.decode(errors="replace")
                return Outcome(code_of_error(own) if own.strip() else 0, out.decode(errors="replace"), own,
                               broken=marker.strip())
            at = out.find(needle)
            if at >= 0 and out.find(b"]", at + len(needle)) >= 0:
                start = out.rfind(b"[", 0, at)
                body = bytes(out[:start])
                return Outcome(code_of_error(err.decode(errors="replace")) if err.strip() else 0,
                               body.decode(errors="replace"), err.decode(errors="replace"))
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                return Outcome(None, out.decode(errors="replace"), err.decode(errors="replace") +
                               "\n(timeout: no answer in %.0f s)" % self.timeout)
            if not open_fds:
                code = self.proc.wait()
                self.proc.stdout.close()
                self.proc.stderr.close()
                self.proc = None
                e = err.decode(errors="replace")
                return Outcome(code if code != 0 else 70, out.decode(errors="replace"),
                               e + "\n(the rnt process ended with exit %d)" % code)
            ready, _, _ = select.select(list(open_fds), [], [], min(left, 1.0))
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    fds[fd].extend(chunk)
                else:
                    open_fds.discard(fd)


class PerStatement:
    """One `rnt sql` process per statement (the real exit code)."""

    def __init__(self, binary, store, timeout=120.0):
        self.binary, self.store, self.timeout = binary, store, timeout
        self.starts = 0

    def run(self, sql):
        self.starts += 1
        try:
            done = subprocess.run(base_args(self.binary, self.store) + [sql], capture_output=True,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired as e:
            return Outcome(None, (e.stdout or b"").decode(errors="replace"),
                           (e.stderr or b"").decode(errors="replace") + "\n(timeout)")
        return Outcome(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))

    def close(self):
        pass
