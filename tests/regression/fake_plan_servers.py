"""Plan servers for tests of a --plan client: fakes that misbehave (to test its timeouts and
fallbacks), each in a thread, and the real tools/miniamr-plan-server started as a process.

    with silent_server() as fake:            # accepts, reads the request, never answers
        ... miniamr --plan 127.0.0.1:{fake.port} ...
        fake.requests                        # the request lines received, without newlines
    with garbage_server(BINARY_GARBAGE) as fake: ...
    with closing_server() as fake: ...       # closes each connection at once
    with plan_server(SERVER, "plan.txt", "--log", "log.txt") as real: ... real.port ...
    real.returncode                          # 0: stopped by SIGTERM on leaving

Every fake listens on 127.0.0.1 on a free port and serves any number of connections, each in
its own thread; `connections` counts them.
"""
import contextlib
import socket
import subprocess
import threading

TEXT_GARBAGE = b"%%%\n"
BINARY_GARBAGE = b"\x00\xff\xfe\x1b[31m\x80\x81 no newline"  # not text, and no end of line
MAX_LINE_BYTES = 4096


class FakePlanServer:
    """A listener whose connections are each served by `behaviour(server, connection)` in a
    thread of their own."""

    def __init__(self, behaviour):
        self._behaviour = behaviour
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)  # so that the accepting thread sees close()
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._requests = []
        self._connections = 0
        self._open = []
        self.closing = threading.Event()
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    @property
    def requests(self):
        """The request lines received so far (str, without their newline)."""
        with self._lock:
            return list(self._requests)

    @property
    def connections(self):
        with self._lock:
            return self._connections

    def _accept(self):
        while not self.closing.is_set():
            try:
                connection, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self._connections += 1
                self._open.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection):
        try:
            self._behaviour(self, connection)
        except OSError:
            pass  # the client went away: nothing to record

    def read_request(self, connection, timeout=10.0):
        """Reads up to a newline (or end of file, or MAX_LINE_BYTES) and records what came, if
        anything."""
        connection.settimeout(timeout)
        data = b""
        try:
            while b"\n" not in data and len(data) <= MAX_LINE_BYTES:
                chunk = connection.recv(MAX_LINE_BYTES)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        if data:
            line = data.split(b"\n", 1)[0].decode("utf-8", errors="backslashreplace")
            with self._lock:
                self._requests.append(line)

    def close(self):
        self.closing.set()
        self._acceptor.join()
        self._listener.close()
        with self._lock:
            for connection in self._open:
                connection.close()


@contextlib.contextmanager
def _running(behaviour):
    server = FakePlanServer(behaviour)
    try:
        yield server
    finally:
        server.close()


def silent_server():
    """Accepts, reads the request line and never answers; the connection stays open until the
    server closes (the client must give up by itself)."""
    def behaviour(server, connection):
        server.read_request(connection)
        server.closing.wait()
    return _running(behaviour)


def garbage_server(answer=TEXT_GARBAGE, delay=0.0):
    """Reads the request line, waits `delay` seconds, sends `answer` (bytes: TEXT_GARBAGE,
    BINARY_GARBAGE, or a valid answer late) and closes."""
    def behaviour(server, connection):
        server.read_request(connection)
        if not server.closing.wait(delay):
            connection.sendall(answer)
        connection.close()
    return _running(behaviour)


def closing_server(read_first=False):
    """Closes each connection at once, without an answer: before reading the request (the
    client may see a reset), or after it with `read_first` (the client sees end of file)."""
    def behaviour(server, connection):
        if read_first:
            server.read_request(connection)
        connection.close()
    return _running(behaviour)


class RunningPlanServer:
    """A started plan server: its `port` and `process`; `stderr()` is what it has written there
    so far (read as it comes, so that a long log never fills the pipe), `stdout` and
    `returncode` are set once it has stopped."""

    def __init__(self, process, port):
        self.process = process
        self.port = port
        self.stdout = None
        self.returncode = None
        self._stderr = []
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self):
        for line in self.process.stderr:
            self._stderr.append(line)

    def stderr(self):
        return "".join(self._stderr)

    def stop(self, timeout=10.0):
        """SIGTERM unless it has exited already, then waits (SIGKILL after `timeout` s)."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stdout = self.process.stdout.read()
        self._drain.join()
        self.returncode = self.process.returncode


@contextlib.contextmanager
def plan_server(server, plan, *options, startup_timeout=10.0):
    """tools/miniamr-plan-server `server` with plan file `plan` and more `options`, on
    127.0.0.1 and a free port; yields a RunningPlanServer, which it stops on leaving."""
    process = subprocess.Popen([server, "--plan", plan, "--host", "127.0.0.1", "--port", "0",
                                *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    port = _listening_port(process, startup_timeout)
    running = RunningPlanServer(process, port)
    try:
        yield running
    finally:
        running.stop()


def _listening_port(process, timeout):
    """The port of the server's 'listening on HOST:PORT' line (read in a thread, so that a
    server that never prints it cannot hang the test)."""
    lines = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    line = lines[0] if lines else ""
    if ": listening on " not in line:
        process.kill()
        _, err = process.communicate()
        raise RuntimeError(f"the plan server did not start: {line!r} {err[-1000:]}")
    return int(line.rsplit(":", 1)[1])
