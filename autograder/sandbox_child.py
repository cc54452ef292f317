"""The sandbox: runs one submission's exercise code, one forked child per exercise.

Started by :mod:`autograder.sandbox` as ``python -I -B sandbox_child.py FD``.
It uses only the standard library, numpy and :mod:`codec` (loaded from this
file's directory by path, before anything untrusted runs). Steps:

1. Read the whole payload (JSON) from stdin, then point stdin at ``/dev/null``.
2. Import what the untrusted code will need while the project is still visible.
3. Isolate, when running as root: new mount, PID, network, IPC and UTS
   namespaces; fork a *supervisor* that is PID 1 of the new PID namespace (when
   it dies, the kernel kills every process left in it: no fork bomb or daemon
   outlives the grade); a fresh tmpfs root holding only the interpreter's
   standard library, site-packages and system libraries (read-only, the course's
   own packages masked), three device files and an empty ``/sandbox`` working
   directory with the code; ``chroot`` into it. The project, the spec, the
   reference engines, the gradebook and the other submissions are simply not in
   that file system. Without root (or where namespaces are refused) these steps
   are skipped and a note says so.
4. The supervisor (trusted code only, still root) sets the shared limits
   (address space, file size, open files, no core dumps), then for each exercise
   forks a child that closes every descriptor but its own two pipes, sets its
   CPU-time and process-count limits, drops to ``nobody`` (uid/gid 65534) with
   ``no_new_privs``, installs the import guard, runs the support code, the
   submission's exercise cells in notebook order, and the exercise's function on
   each case's inputs, writing one JSON line per result. The supervisor relays
   those lines to the grader, tagged with the exercise it forked the child for
   (a child cannot speak for another exercise), keeps the first bytes of its
   output, enforces the exercise's wall-clock limit, and afterwards kills every
   process left in the namespace before the next exercise starts.

The child never receives an expected value. Whatever it writes is *data*: the
trusted parent decodes it with :mod:`codec` (plain values only) and decides pass
or fail itself, so tampering here (patched builtins, a fake result line) can at
worst report a wrong value, which fails.
"""

import os
import sys

NOBODY = 65534
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class _Channel:
    """One JSON object per line, written whole with os.write (``tag`` first, if any)."""

    def __init__(self, fd, json_module, tag=b""):
        self.fd, self.json, self.tag = fd, json_module, tag

    def send(self, **event):
        line = self.json.dumps(event, allow_nan=False, separators=(",", ":"))
        view = memoryview(self.tag + line.encode() + b"\n")
        while view:
            view = view[os.write(self.fd, view):]


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


def _build_root(call, root, hide, hide_packages):
    """Mount a tmpfs on ``root`` and fill it with what the untrusted code may see."""
    call("mount", b"none", b"/", None, MS_REC | MS_PRIVATE, None)
    call("mount", b"tmpfs", root.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
         b"size=64m,mode=755")
    for top in ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), root + top)
        elif os.path.isdir(top):
            _bind(call, top, root)
    for d in _python_dirs():
        if any(d == h or d.startswith(h + os.sep) for h in hide) and "site-packages" not in d:
            continue
        _bind(call, d, root)
        for package in hide_packages:  # the course itself, if installed (not editable)
            if os.path.isdir(os.path.join(d, package)):
                call("mount", b"tmpfs", (root + os.path.join(d, package)).encode(), b"tmpfs",
                     MS_RDONLY | MS_NOSUID | MS_NODEV, b"size=4k")
    for dev in DEVICES:
        if os.path.exists(dev):
            _bind(call, dev, root, read_only=False)
    for d, mode in (("/sandbox", 0o700), ("/tmp", 0o1777)):
        # exist_ok: /tmp is already there when the Python runtime itself lives
        # under /tmp (a checkout in /tmp with its .venv, bound above)
        os.makedirs(root + d, exist_ok=True)
        os.chmod(root + d, mode)
    os.chown(root + "/sandbox", NOBODY, NOBODY)


def _isolate(payload, notes):
    """Namespaces + fresh root + PID-1 fork (root only). Returns the working directory."""
    if os.geteuid() != 0:
        notes.append("not running as root: no namespaces or chroot (the project and other "
                     "files readable by this user are visible to submitted code) and no "
                     "switch to an unprivileged user")
        return payload["workdir"]
    call = _libc()
    try:
        if not payload["isolate"]:
            raise OSError("isolation switched off by the grader")
        call("unshare", CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    except OSError as err:
        notes.append(f"no namespaces ({err}): no fresh root, so files readable by uid nobody "
                     "(the project under /work, say) stay visible to submitted code; only "
                     "limits and the switch to uid nobody apply")
        os.chmod(os.path.dirname(payload["workdir"]), 0o711)
        os.chown(payload["workdir"], NOBODY, NOBODY)
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
    _build_root(call, root, payload["hide"], payload["hide_packages"])
    os.chroot(root)
    os.chdir("/sandbox")
    notes.append("isolated: mount/PID/network namespaces, fresh root with only the Python "
                 "runtime, exercise code runs as uid nobody")
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


def _enter_child(payload, job, keep_fds, in_own_pid_namespace):
    """In a freshly forked exercise child: cut it off, limit it, drop privileges."""
    import resource

    low = 3
    for fd in sorted(keep_fds):  # close every other descriptor, whatever its number
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)
    if not in_own_pid_namespace:
        os.setpgid(0, 0)  # so the supervisor can kill this child's whole group
    cpu = int(job["wall_s"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if os.geteuid() == 0:
        # RLIMIT_NPROC counts all processes of a user: set it only for nobody
        resource.setrlimit(resource.RLIMIT_NPROC, (payload["nproc"], payload["nproc"]))
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    call = _libc()
    call("prctl", PR_SET_PDEATHSIG, 9, 0, 0, 0)  # cleared by the uid change; set again
    call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


class ForbiddenImport(ImportError):
    """Raised at the import site of a module the exercise forbids."""


class _CellTimeout(BaseException):
    pass


class _Guard:
    """Refuses forbidden modules at every import entry point: the ``import``
    statement and ``__import__`` (both via ``builtins.__import__``),
    ``importlib.import_module`` and ``importlib.__import__``, and, for modules not
    yet loaded, a first finder on ``sys.meta_path``."""

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


def _run(payload, job, channel, codec):
    import builtins
    import linecache
    import signal
    import time
    import traceback

    guard = _Guard(job["forbid"], payload["unavailable"], channel)
    guard.install()
    pristine_builtins = dict(builtins.__dict__)  # put back after each call: encoding needs them
    namespace = {"__name__": "__main__", "__builtins__": builtins}

    def on_alarm(signum, frame):
        raise _CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    cells = [("support", -1, src) for src in payload["support"]]
    cells += [(c["exercise"], c["index"], c["source"]) for c in payload["cells"]]
    for exercise_id, index, source in cells:
        own = exercise_id == job["exercise"]
        filename = f"<cell {index}: {exercise_id}>" if index >= 0 else "<cell support>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        guard.owner = job["exercise"] if own else ""
        if not own:
            signal.setitimer(signal.ITIMER_REAL, payload["other_cell_s"])
        try:
            exec(compile(source, filename, "exec"), namespace)
        except BaseException as exc:
            channel.send(event="cell", index=index, exercise=exercise_id, own=own,
                         error=_error_text(exc, traceback))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            guard.owner = ""
    function = namespace.get(job["function"])
    guard.owner = job["exercise"]
    for i, encoded in enumerate(job["cases"]):
        if not callable(function):
            channel.send(event="case", i=i, status="missing",
                         error=f"no function named {job['function']!r} is defined")
            continue
        start = time.perf_counter()
        try:
            args, kwargs = codec.decode(encoded)
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
                         seconds=time.perf_counter() - start)
            continue
        seconds = time.perf_counter() - start
        builtins.__dict__.update(pristine_builtins)
        try:
            channel.send(event="case", i=i, status="returned", value=codec.encode(value),
                         seconds=seconds)
        except BaseException as exc:
            channel.send(event="case", i=i, status="unencodable", seconds=seconds,
                         error=str(exc)[:1000])
    channel.send(event="done")


class _Relay:
    """Supervisor side of one exercise child: its result lines, tagged, to the grader;
    its output, the first bytes kept."""

    def __init__(self, tag, out_fd, result_limit, output_limit):
        self.tag, self.out_fd = tag, out_fd
        self.result_limit, self.output_limit = result_limit, output_limit
        self.pending, self.result_bytes, self.overflow = b"", 0, False
        self.output, self.output_total = bytearray(), 0

    def _write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self.out_fd, view):]

    def results(self, chunk):
        self.result_bytes += len(chunk)
        if self.result_bytes > self.result_limit:
            self.overflow = True
            return
        lines = (self.pending + chunk).split(b"\n")
        self.pending = lines.pop()
        if lines:
            self._write(b"".join(self.tag + line + b"\n" for line in lines))

    def printed(self, chunk):
        self.output_total += len(chunk)
        room = self.output_limit - len(self.output)
        if room > 0:
            self.output += chunk[:room]


def _supervise(payload, k, job, channel, codec, in_own_pid_namespace):
    """Fork the child for exercise ``k``, relay it, time it, then clear the namespace."""
    import fcntl
    import selectors
    import signal
    import time

    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    try:  # a bigger pipe: a flood of printing drains in fewer, larger reads
        fcntl.fcntl(output_r, fcntl.F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(output_w, 1)
            os.dup2(output_w, 2)
            _enter_child(payload, job, {result_w}, in_own_pid_namespace)
            _run(payload, job, _Channel(result_w, channel.json), codec)
            sys.stdout.flush()
        finally:
            os._exit(0)
    os.close(result_w)
    os.close(output_w)
    relay = _Relay(f"{k}\t".encode(), channel.fd, payload["result_bytes"],
                   payload["output_bytes"])
    selector = selectors.DefaultSelector()
    selector.register(result_r, selectors.EVENT_READ, relay.results)
    selector.register(output_r, selectors.EVENT_READ, relay.printed)
    deadline = start + job["wall_s"]
    reason, status = "timeout", None

    def pump(timeout):
        for key, _ in selector.select(timeout):
            chunk = os.read(key.fd, 1 << 20)
            if chunk:
                key.data(chunk)
            else:
                selector.unregister(key.fd)

    while time.monotonic() < deadline:
        pump(min(0.05, max(0.0, deadline - time.monotonic())))
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            reason, status = "exit", os.waitstatus_to_exitcode(wait_status)
            break
    seconds = time.monotonic() - start
    while True:  # kill what is left (again, in case something forked meanwhile) and reap it
        try:
            if in_own_pid_namespace:
                os.kill(-1, signal.SIGKILL)  # every process in the namespace but this one
            else:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            reaped, wait_status = os.waitpid(-1 if in_own_pid_namespace else pid, os.WNOHANG)
        except ChildProcessError:
            break
        if reaped == 0:
            time.sleep(0.002)
            continue
        if reaped == pid and status is None:
            status = os.waitstatus_to_exitcode(wait_status)
        if reaped == pid and not in_own_pid_namespace:
            break
    drain_until = time.monotonic() + 2.0
    while selector.get_map() and time.monotonic() < drain_until:  # writers gone: read to EOF
        pump(0.1)
    selector.close()
    for fd in (result_r, output_r):
        os.close(fd)
    if status is not None and status < 0 and -status == signal.SIGXCPU:
        reason = "cpu"
    channel.send(event="end", exercise=k, reason=reason, status=status, seconds=seconds,
                 output=bytes(relay.output).decode("utf-8", "replace"),
                 output_total=relay.output_total, overflow=relay.overflow)


def main():
    result_fd = int(sys.argv[1])
    payload_bytes = _read_all(0)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import codec  # the same module the parent decodes with (stdlib + numpy only)

    del sys.path[0]
    import json

    payload = json.loads(payload_bytes)
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
    if os.geteuid() == 0 and workdir != "/sandbox":
        for name in os.listdir(workdir):
            os.chown(os.path.join(workdir, name), NOBODY, NOBODY)
    _shared_limits(payload)
    in_own_pid_namespace = os.getpid() == 1
    supervisor = _Channel(result_fd, json, tag=b"Z\t")
    supervisor.send(event="ready", notes=notes, cwd=os.getcwd())
    for k, job in enumerate(payload["jobs"]):
        _supervise(payload, k, job, supervisor, codec, in_own_pid_namespace)
    supervisor.send(event="done")
    os._exit(0)


if __name__ == "__main__":
    main()
