"""The sandbox: runs one submission's exercise code, one forked child per run.

Started by :mod:`autograder.sandbox` as ``python -I -B sandbox_child.py FD``.
It uses only the standard library, numpy and :mod:`codec` (loaded from this
file's directory by path, before anything untrusted runs). Steps:

1. Read the header frame from stdin (cells, runs, limits: no case inputs).
2. Import what the untrusted code will need while the project is still visible.
3. Isolate, when running as root: new mount, PID, network, IPC and UTS
   namespaces; fork a *supervisor* that is PID 1 of the new PID namespace (when
   it dies, the kernel kills every process left in it); a fresh tmpfs root
   holding only the interpreter's standard library, site-packages and system
   libraries (read-only, the course's own packages masked), three device files
   and an empty ``/sandbox`` working directory with the code; ``chroot`` into
   it. Without root (or where namespaces are refused) these steps are skipped
   and a note says so.
4. The supervisor (trusted code only, still root) becomes a child subreaper,
   sets the shared limits and works through the *runs*: every exercise's public
   cases first, then every exercise's hidden cases. For each run it moves that
   run's case inputs from stdin into a memory file with ``splice`` (the bytes
   never pass through the supervisor's memory, so no forked child can find
   another run's inputs there) and forks a child that closes every other
   descriptor, hides the packages the exercise forbids from its file system
   (a private mount namespace, an empty tmpfs over each), sets its CPU and
   process limits, drops to the sandbox's own uid with ``no_new_privs``, runs
   the support code, the submission's exercise cells in notebook order, and
   the exercise's function on each case, writing one JSON line per result.

The supervisor, not the child, enforces every time limit, with SIGKILL: the
run's wall clock, and ``other_cell_s`` for a cell of *another* exercise. The
child announces on a progress pipe which cell or case it is in; when it dies,
hangs or cuts its pipes inside another exercise's cell, that cell is skipped
and the child started again, so a stray ``os._exit`` costs only its own
exercise; when it dies inside a case, that case is lost and the child starts
again from the next one. After each child, every process the run left behind
is killed: ``kill(-1)`` in the PID namespace, else every descendant (the
supervisor is their subreaper, so ``setsid`` and double forks stay in reach).

The child never receives an expected value, and a public run never receives a
hidden input. Whatever it writes is *data*: the supervisor relays its result
lines tagged with the run (a child cannot speak for another run), replacing a
line over the size cap by a short ``too_large`` note, and the trusted parent
decodes them with :mod:`codec` and decides pass or fail itself.
"""

import os
import re
import sys

NOBODY = 65534
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
FRAME_HEADER = 8          # bytes of big-endian length before each frame on stdin
MASKED = ("No module named {0!r} here: the grader leaves it out of this exercise's "
          "file system")
CASE_LINE = re.compile(rb'^\{"event":"case","i":(\d{1,6}),')


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the grader closed the payload early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _frame_length(fd):
    return int.from_bytes(_read_exact(fd, FRAME_HEADER), "big")


def _splice_frame(fd):
    """The next frame, moved from the pipe ``fd`` into a new memory file, kernel to kernel."""
    left = _frame_length(fd)
    memfd = os.memfd_create("cases")
    while left:
        moved = os.splice(fd, memfd, left)
        if not moved:
            raise EOFError("the grader closed the payload early")
        left -= moved
    return memfd


class _Channel:
    """One JSON object per line, written whole with os.write (``tag`` first, if any)."""

    def __init__(self, fd, json_module, tag=b""):
        self.fd, self.json, self.tag = fd, json_module, tag

    def send(self, **event):
        line = self.json.dumps(event, allow_nan=False, separators=(",", ":"))
        _write_all(self.fd, self.tag + line.encode() + b"\n")


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _libc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def call(name, *args):
        if getattr(libc, name)(*args) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{name}: {os.strerror(err)}")

    return call


def _bind(call, source, root, read_only=True):
    target = root + source
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    call("mount", source.encode(), target.encode(), None, MS_BIND | MS_REC, None)
    if read_only:
        call("mount", None, target.encode(), None,
             MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


def _python_dirs():
    """Directories the interpreter imports from (stdlib, lib-dynload, site-packages)."""
    import site

    dirs = [p for p in sys.path if os.path.isdir(p)]
    dirs += [p for p in site.getsitepackages() if os.path.isdir(p)]
    out = []
    for d in dirs:
        d = os.path.realpath(d)
        if not any(d == o or d.startswith(o + os.sep) for o in out):
            out = [o for o in out if not o.startswith(d + os.sep)] + [d]
    return out


def _mask_packages(call, dirs, packages, prefix=""):
    """Make each of ``packages`` (top-level import names) absent under ``dirs``: over a
    package directory a read-only tmpfs whose only file, ``__init__.py``, raises
    ModuleNotFoundError (an empty directory would import as a namespace package);
    over a single-file module, an empty file."""
    for d in dirs:
        for package in packages:
            base = prefix + os.path.join(d, package)
            if os.path.isdir(base):
                call("mount", b"tmpfs", base.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                     b"size=16k,mode=755")
                with open(os.path.join(base, "__init__.py"), "w") as fh:
                    fh.write(f"raise ModuleNotFoundError({MASKED.format(package)!r}, "
                             f"name={package!r})\n")
                call("mount", None, base.encode(), None,
                     MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
            for name in _module_files(prefix + d, package):
                call("mount", b"/dev/null", name.encode(), None, MS_BIND, None)


def _module_files(directory, package):
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names
            if n == package + ".py" or (n.startswith(package + ".") and n.endswith(".so"))]


def _build_root(call, root, hide, hide_packages, uid):
    """Mount a tmpfs on ``root`` and fill it with what the untrusted code may see."""
    call("mount", b"none", b"/", None, MS_REC | MS_PRIVATE, None)
    call("mount", b"tmpfs", root.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
         b"size=64m,mode=755")
    for top in ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), root + top)
        elif os.path.isdir(top):
            _bind(call, top, root)
    dirs = [d for d in _python_dirs()
            if not any(d == h or d.startswith(h + os.sep) for h in hide) or "site-packages" in d]
    for d in dirs:
        _bind(call, d, root)
    _mask_packages(call, dirs, hide_packages, prefix=root)  # the course itself, if installed
    for dev in DEVICES:
        if os.path.exists(dev):
            _bind(call, dev, root, read_only=False)
    for d, mode in (("/sandbox", 0o700), ("/tmp", 0o1777)):
        # exist_ok: /tmp is already there when the Python runtime itself lives
        # under /tmp (a checkout in /tmp with its .venv, bound above)
        os.makedirs(root + d, exist_ok=True)
        os.chmod(root + d, mode)
    os.chown(root + "/sandbox", uid, uid)
    return dirs


def _isolate(payload, notes):
    """Namespaces + fresh root + PID-1 fork (root only). Returns the working directory."""
    if os.geteuid() != 0:
        notes.append("not running as root: no namespaces or chroot (the project and other "
                     "files readable by this user are visible to submitted code), no switch "
                     "to an unprivileged user, and forbidden packages are refused only by the "
                     "in-process import guard: use this mode for self-checks, not for grading "
                     "a class")
        return payload["workdir"]
    call = _libc()
    try:
        if not payload["isolate"]:
            raise OSError("isolation switched off by the grader")
        call("unshare", CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    except OSError as err:
        notes.append(f"no namespaces ({err}): no fresh root, so files readable by any user "
                     "(the project under /work, say) stay visible to submitted code, and "
                     "forbidden packages are refused only by the in-process import guard; "
                     "limits, a uid of its own and killing every process of that uid apply")
        os.chmod(os.path.dirname(payload["workdir"]), 0o711)
        os.chown(payload["workdir"], payload["uid"], payload["uid"])
        return payload["workdir"]
    pid = os.fork()
    if pid:  # the outer process: wait for PID 1 of the new namespace, pass on its fate
        for fd in (0, 1, 2, payload["_result_fd"]):
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):  # die the same way, so the parent sees the signal
            import signal

            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    call("prctl", PR_SET_PDEATHSIG, 9, 0, 0, 0)
    root = payload["root"]
    payload["_python_dirs"] = _build_root(call, root, payload["hide"], payload["hide_packages"],
                                          payload["uid"])
    os.chroot(root)
    os.chdir("/sandbox")
    notes.append("isolated: mount/PID/network namespaces, fresh root with only the Python "
                 "runtime, forbidden packages absent from the file system, exercise code "
                 "runs under a uid of its own")
    return "/sandbox"


def _shared_limits(payload):
    """Limits every exercise child inherits from the supervisor."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-size write fails with EFBIG
    memory = payload["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    size = payload["file_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _enter_child(payload, run, keep_fds):
    """In a freshly forked child: cut it off, hide its forbidden packages, limit it,
    drop privileges."""
    import resource

    low = 3
    for fd in sorted(keep_fds):  # close every other descriptor, whatever its number
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)
    os.setpgid(0, 0)
    call = _libc()
    if payload.get("_python_dirs") is not None and run["forbid"]:
        call("unshare", CLONE_NEWNS)  # this child's own view: the forbidden packages are gone
        _mask_packages(call, payload["_python_dirs"], run["forbid"])
    cpu = int(run["wall_s"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if os.geteuid() == 0:
        uid = payload["uid"]
        # RLIMIT_NPROC counts every process of a uid: this sandbox's uid is its own
        resource.setrlimit(resource.RLIMIT_NPROC, (payload["nproc"], payload["nproc"]))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    call("prctl", PR_SET_PDEATHSIG, 9, 0, 0, 0)  # cleared by the uid change; set again
    call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


class ForbiddenImport(ImportError):
    """Raised at the import site of a module the exercise forbids."""


class _Guard:
    """Refuses forbidden modules at every import entry point, to give a clear message.

    It is advice, not enforcement (the submission controls this process and can
    undo it): under isolation the forbidden packages are not in the file system
    at all, and the grader also refuses cells that import them by name."""

    def __init__(self, forbidden, unavailable, channel):
        self.forbidden, self.unavailable, self.channel = set(forbidden), set(unavailable), channel
        self.owner = ""

    def check(self, name):
        if not isinstance(name, str):
            return
        top = name.lstrip(".").partition(".")[0]
        if top in self.forbidden:
            self.channel.send(event="forbidden", module=top, during=self.owner)
            raise ForbiddenImport(f"importing {top!r} is not allowed in this exercise")
        if top in self.unavailable:
            raise ModuleNotFoundError(f"{top!r} is not available when grading: the grader runs "
                                      "your code with Python, numpy and the standard library only",
                                      name=top)

    def find_spec(self, name, path=None, target=None):
        self.check(name)
        return None

    def install(self):
        import builtins
        import importlib

        original_import, original_import_module = builtins.__import__, importlib.import_module
        guard = self

        def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0:
                guard.check(name)
            return original_import(name, globals, locals, fromlist, level)

        def guarded_import_module(name, package=None):
            if not str(name).startswith("."):
                guard.check(name)
            return original_import_module(name, package)

        builtins.__import__ = guarded_import
        importlib.__import__ = guarded_import
        importlib.import_module = guarded_import_module
        sys.meta_path.insert(0, self)


def _error_text(exc, traceback_module, limit=6):
    """The exception and the last frames that belong to submitted code."""
    frames = [f for f in traceback_module.extract_tb(exc.__traceback__)
              if f.filename.startswith("<cell")]
    lines = traceback_module.format_list(frames[-limit:])
    lines += traceback_module.format_exception_only(type(exc), exc)
    return "".join(lines).strip()[-4000:]


def _error_type(exc):
    """The exception's class name, as the child sees it (the parent vets it)."""
    return type(exc).__name__[:100]


def _run_cells(payload, run, skip, guard, namespace, channel, progress, traceback):
    import linecache

    cells = [("support", -1, src) for src in payload["support"]]
    cells += [(c["exercise"], c["index"], c["source"]) for c in payload["cells"]]
    for exercise_id, index, source in cells:
        if index in skip:
            continue
        own = exercise_id == run["exercise"]
        filename = f"<cell {index}: {exercise_id}>" if index >= 0 else "<cell support>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        guard.owner = run["exercise"] if own else ""
        progress(b"C%d\n" % index)
        try:
            exec(compile(source, filename, "exec"), namespace)
        except BaseException as exc:
            channel.send(event="cell", index=index, exercise=exercise_id, own=own,
                         error=_error_text(exc, traceback), error_type=_error_type(exc))
        guard.owner = ""
        progress(b"c\n")


def _run(payload, run, skip, first_case, cases_fd, channel, progress, codec):
    """The child's work: the cells, then the run's cases from ``first_case`` on."""
    import builtins
    import json
    import time
    import traceback

    guard = _Guard(run["forbid"], payload["unavailable"], channel)
    guard.install()
    pristine_builtins = dict(builtins.__dict__)  # put back after each call: encoding needs them
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    _run_cells(payload, run, skip, guard, namespace, channel, progress, traceback)
    function = namespace.get(run["function"])
    guard.owner = run["exercise"]
    size = os.fstat(cases_fd).st_size
    cases = json.loads(os.pread(cases_fd, size, 0))
    os.close(cases_fd)
    for i in range(first_case, len(cases)):
        progress(b"K%d\n" % i)
        if not callable(function):
            channel.send(event="case", i=i, status="missing",
                         error=f"no function named {run['function']!r} is defined")
            continue
        start = time.perf_counter()
        try:
            args, kwargs = codec.decode(cases[i])
            value = function(*args, **kwargs)
        except NotImplementedError as exc:
            builtins.__dict__.update(pristine_builtins)
            channel.send(event="case", i=i, status="not_attempted", error=str(exc)[:500],
                         seconds=time.perf_counter() - start)
            continue
        except BaseException as exc:
            builtins.__dict__.update(pristine_builtins)
            status = "forbidden" if isinstance(exc, ForbiddenImport) else "raised"
            channel.send(event="case", i=i, status=status, error=_error_text(exc, traceback),
                         error_type=_error_type(exc), seconds=time.perf_counter() - start)
            continue
        seconds = time.perf_counter() - start
        builtins.__dict__.update(pristine_builtins)
        _send_value(channel, codec, i, value, seconds, payload["memory_mb"])
    progress(b"D\n")


def _send_value(channel, codec, i, value, seconds, memory_mb):
    try:
        encoded = codec.encode(value)
    except MemoryError:
        channel.send(event="case", i=i, status="unencodable", seconds=seconds,
                     error=f"ran out of memory (the limit is {memory_mb} MiB) while encoding "
                           "the returned value: return something smaller")
        return
    except BaseException as exc:
        channel.send(event="case", i=i, status="unencodable", seconds=seconds,
                     error=str(exc)[:1000])
        return
    try:
        channel.send(event="case", i=i, status="returned", value=encoded, seconds=seconds)
    except MemoryError:
        channel.send(event="case", i=i, status="unencodable", seconds=seconds,
                     error=f"ran out of memory (the limit is {memory_mb} MiB) while sending "
                           "the returned value back: return something smaller")


class _Relay:
    """Supervisor side of one run: the child's result lines, tagged, to the grader (a
    line over ``line_limit`` becomes a short ``too_large`` note); its output, the
    first bytes kept."""

    def __init__(self, tag, out_fd, line_limit, result_limit, output_limit):
        self.tag, self.out_fd = tag, out_fd
        self.line_limit, self.result_limit, self.output_limit = (line_limit, result_limit,
                                                                 output_limit)
        self.pending, self.result_bytes, self.overflow = b"", 0, False
        self.drop_head, self.drop_size = b"", 0
        self.output, self.output_total = bytearray(), 0

    def results(self, chunk):
        self.result_bytes += len(chunk)
        if self.result_bytes > self.result_limit:
            self.overflow = True
            return
        out, start = [], 0
        while True:
            end = chunk.find(b"\n", start)
            self._extend(chunk[start:] if end < 0 else chunk[start:end])
            if end < 0:
                break
            out.append(self._finish_line())
            start = end + 1
        if out:
            _write_all(self.out_fd, b"".join(out))

    def _extend(self, piece):
        if self.drop_size:
            self.drop_size += len(piece)
        elif len(self.pending) + len(piece) > self.line_limit:
            self.drop_head = (self.pending + piece[:64])[:64]
            self.drop_size, self.pending = len(self.pending) + len(piece), b""
        else:
            self.pending += piece

    def _finish_line(self):
        if not self.drop_size:
            line, self.pending = self.tag + self.pending + b"\n", b""
            return line
        match = CASE_LINE.match(self.drop_head)
        case = int(match.group(1)) if match else -1
        line = self.tag + b'{"event":"too_large","i":%d,"bytes":%d}\n' % (case, self.drop_size)
        self.drop_head, self.drop_size = b"", 0
        return line

    def printed(self, chunk):
        self.output_total += len(chunk)
        room = self.output_limit - len(self.output)
        if room > 0:
            self.output += chunk[:room]


class _Progress:
    """Where the child says it is: a cell (``C<index>``), a case (``K<i>``), done (``D``)."""

    def __init__(self):
        self.buffer, self.cell, self.case, self.done = b"", None, None, False
        self.since = 0.0

    def feed(self, chunk, now):
        lines = (self.buffer + chunk).split(b"\n")
        self.buffer = lines.pop()[-32:]
        for line in lines:
            kind, number = line[:1], line[1:]
            if kind == b"C" and number.lstrip(b"-").isdigit():
                self.cell, self.since = int(number), now
            elif kind == b"c":
                self.cell = None
            elif kind == b"K" and number.isdigit():
                self.cell, self.case, self.since = None, int(number), now
            elif kind == b"D":
                self.cell, self.done = None, True


def _reap_all(child, in_own_pid_namespace):
    """Kill and reap every process the run left: all of the PID namespace but this
    one, or else every descendant (this process is their subreaper)."""
    import signal
    import time

    status = None
    for _ in range(10_000):
        if in_own_pid_namespace:
            try:
                os.kill(-1, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        else:
            for pid in _descendants(os.getpid()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            reaped, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if reaped == child and status is None:
            status = os.waitstatus_to_exitcode(wait_status)
        if reaped == 0:
            time.sleep(0.002)
    return status


def _descendants(root):
    """Every process below ``root`` in the process tree, from ``/proc``."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            out.append(pid)
            todo.append(pid)
    return out


def _pump(selector, timeout):
    """Read what is ready on the run's pipes and hand each chunk to its handler;
    returns the descriptors that reached end of file."""
    closed = []
    for key, _ in selector.select(timeout):
        chunk = os.read(key.fd, 1 << 20)
        if chunk:
            key.data(chunk)
        else:
            selector.unregister(key.fd)
            closed.append(key.fd)
    return closed


def _attempt(payload, run, own, skip, first_case, cases_fd, channel, relay, codec, deadline,
             in_own_pid_namespace):
    """Fork one child for run ``r`` and watch it until it finishes, dies, hangs in
    another exercise's cell or runs out of time. Returns ``(how, progress, status)``."""
    import fcntl
    import selectors
    import time

    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    progress_r, progress_w = os.pipe()
    try:  # a bigger pipe: a flood of printing drains in fewer, larger reads
        fcntl.fcntl(output_r, fcntl.F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open("/dev/null", os.O_RDONLY)
            os.dup2(devnull, 0)
            os.dup2(output_w, 1)
            os.dup2(output_w, 2)
            _enter_child(payload, run, {result_w, progress_w, cases_fd})
            _run(payload, run, skip, first_case, cases_fd, _Channel(result_w, channel.json),
                 lambda marker: _write_all(progress_w, marker), codec)
            sys.stdout.flush()
        finally:
            os._exit(0)
    for fd in (result_w, output_w, progress_w):
        os.close(fd)
    progress = _Progress()
    selector = selectors.DefaultSelector()
    selector.register(result_r, selectors.EVENT_READ, relay.results)
    selector.register(output_r, selectors.EVENT_READ, relay.printed)
    selector.register(progress_r, selectors.EVENT_READ,
                      lambda chunk: progress.feed(chunk, time.monotonic()))
    how, status = "timeout", None
    while True:
        now = time.monotonic()
        if now >= deadline:
            break
        if progress_r in _pump(selector, min(0.05, deadline - now)) and not progress.done:
            how = "closed"
            break
        if relay.overflow:
            how = "overflow"
            break
        if progress.cell is not None and progress.cell not in own \
                and time.monotonic() - progress.since > payload["other_cell_s"]:
            how = "cell_timeout"
            break
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            how, status = "exit", os.waitstatus_to_exitcode(wait_status)
            break
    reaped = _reap_all(pid, in_own_pid_namespace)
    status = status if status is not None else reaped
    drain_until = time.monotonic() + 1.0
    while selector.get_map() and time.monotonic() < drain_until:  # writers gone: read to EOF
        _pump(selector, 0.1)
    selector.close()
    for fd in (result_r, output_r, progress_r):
        os.close(fd)
    return how, progress, status


def _supervise(payload, r, run, cases_fd, channel, codec, in_own_pid_namespace):
    """Run ``r`` to its end, restarting the child past a cell of another exercise
    that kills or hangs it, and past a case that kills it."""
    import signal
    import time

    start = time.monotonic()
    deadline = start + run["wall_s"]
    relay = _Relay(f"{r}\t".encode(), channel.fd, payload["line_bytes"], payload["result_bytes"],
                   payload["output_bytes"])
    own = {c["index"] for c in payload["cells"] if c["exercise"] == run["exercise"]} | {-1}
    skip, first_case = set(), 0
    while True:
        how, progress, status = _attempt(payload, run, own, skip, first_case, cases_fd, channel,
                                         relay, codec, deadline, in_own_pid_namespace)
        if progress.done or relay.overflow or time.monotonic() >= deadline:
            break
        if progress.cell is not None and progress.cell not in own:
            skip.add(progress.cell)
            channel.send(event="skipped", run=r, index=progress.cell, how=how, status=status)
            continue
        if progress.case is not None and how in ("exit", "closed") \
                and progress.case + 1 < run["n_cases"]:
            channel.send(event="lost", run=r, i=progress.case, how=how, status=status)
            first_case = progress.case + 1
            continue
        break
    if status is not None and status < 0 and -status == signal.SIGXCPU:
        how = "cpu"
    if relay.overflow:
        how = "overflow"
    channel.send(event="end", run=r, reason="exit" if progress.done else how, status=status,
                 seconds=time.monotonic() - start,
                 output=bytes(relay.output).decode("utf-8", "replace"),
                 output_total=relay.output_total)


def main():
    result_fd = int(sys.argv[1])
    header = _read_exact(0, _frame_length(0))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import codec  # the same module the parent decodes with (stdlib + numpy only)

    del sys.path[0]
    import json

    payload = json.loads(header)
    payload["_result_fd"] = result_fd
    for name in payload["preload"]:
        try:
            __import__(name)
        except ImportError:
            pass
    for name in ("selectors", "linecache", "traceback", "resource", "signal", "time", "ctypes",
                 "fcntl"):
        __import__(name)
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                        and "editable" not in getattr(f, "__module__", "").lower()]
    sys.path[:] = [p for p in sys.path
                   if not any(p == h or p.startswith(h + os.sep) for h in payload["hide"])
                   or "site-packages" in p]
    notes = []
    workdir = _isolate(payload, notes)
    os.chdir(workdir)
    for name, source in payload["files"].items():
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as fh:
            fh.write(source)
    if os.geteuid() == 0:
        for name in os.listdir(workdir):
            os.chown(os.path.join(workdir, name), payload["uid"], payload["uid"])
    _libc()("prctl", PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _shared_limits(payload)
    in_own_pid_namespace = os.getpid() == 1
    supervisor = _Channel(result_fd, json, tag=b"Z\t")
    supervisor.send(event="ready", notes=notes, cwd=os.getcwd(),
                    isolated=in_own_pid_namespace)
    for r, run in enumerate(payload["runs"]):
        cases_fd = _splice_frame(0)
        _supervise(payload, r, run, cases_fd, supervisor, codec, in_own_pid_namespace)
        os.close(cases_fd)
    supervisor.send(event="done")
    os._exit(0)


if __name__ == "__main__":
    main()
