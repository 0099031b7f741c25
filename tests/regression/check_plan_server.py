#!/usr/bin/env python3
"""miniamr-plan-server answers each spawning process with its line of the plan, resolves the
keys of spawned jobs' processes (init.2 spawns job J, J's process 0 is init.2.0), answers bad
requests with ERROR, is not held up by a silent client, logs every request as it comes, stops
with status 0 (signals, --max-requests), and refuses bad input with one message and status 2.
The fake servers of fake_plan_servers.py do what they say.

  check_plan_server.py --server tools/miniamr-plan-server
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from fake_plan_servers import (BINARY_GARBAGE, closing_server, garbage_server, plan_server,
                               silent_server)
from mpi_env import verdict

PLAN = """# a plan for the test
init.0: node0,node1
init.1: node2
init.2: node3, node3     # spaces after commas are allowed

init.2.0: node4,node5
init.2.0.0: node6
init.2.1: node7
"""

READ_TIMEOUT = 2  # the server's --read-timeout, in seconds
LONG_LINE = b"x" * 4097

# (request bytes as sent, the answer or, for ERROR answers, how it starts), in order: the
# server learns job ids from earlier requests.
EXCHANGES = [
    (b"100;0;?\n", "node0,node1"),
    (b"100;1;?\n", "node2"),
    (b"100;2;200\n", "node3,node3"),      # job 200 is init.2's
    (b"200;0;300\n", "node4,node5"),      # init.2.0; job 300 is its
    (b"300;0;?\n", "node6"),              # init.2.0.0
    (b"200;1;?\n", "node7"),              # init.2.1
    (b"200;5;?\n", "ERROR no plan for init.2.5"),
    (b"100;7;?\n", "ERROR no plan for init.7"),
    (b"100;7;500\n", "ERROR no plan for init.7"),  # job 500 is init.7's all the same
    (b"500;0;?\n", "ERROR no plan for init.7.0"),
    (b"400;2;?\n", "node3,node3"),        # a job never named as a child is the launcher's
    (b"100;1;?\r\n", "node2"),
    (b"no semicolons\n", "ERROR malformed request: 1 field(s)"),
    (b"100;1\n", "ERROR malformed request: 2 field(s)"),
    (b"100;1;?;4\n", "ERROR malformed request: 4 field(s)"),
    (b"100;x;?\n", "ERROR malformed request: parent vpid 'x'"),
    (b"100;-1;?\n", "ERROR malformed request: parent vpid '-1'"),
    (b"100; 1;?\n", "ERROR malformed request: parent vpid ' 1'"),
    (b";1;?\n", "ERROR malformed request: parent job id ''"),
    (b"?;1;?\n", "ERROR malformed request: parent job id '?'"),
    (b"100;1;\n", "ERROR malformed request: child job id ''"),
    (b"100;1;100\n", "ERROR malformed request: the child job id is the parent's"),
    (b"\xff;1;?\n", "ERROR malformed request: not ASCII text"),
    (b"\n", "ERROR malformed request: empty line"),
    (b"x" * 4096 + b"\n", "ERROR malformed request: 1 field(s)"),  # the longest line allowed
    (LONG_LINE + b"\n", "ERROR request longer than 4096 bytes"),
    (b"y" * 100000, "ERROR request longer than 4096 bytes"),     # and no newline
]


def ask(port, data, half_close=False, timeout=10.0):
    """Sends `data` as one client (then ends its side with `half_close`); the answer line without
    its newline ('' when none came before the server closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        return read_answer(s)


def read_answer(s):
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    return answer.decode("ascii", errors="backslashreplace").rstrip("\n")


def answer_problem(what, got, want):
    """Why `got` is not the answer `want` (ERROR answers: how it starts); None when it is."""
    ok = got.startswith(want) if want.startswith("ERROR") else got == want
    return None if ok else f"{what}: answer {got[:200]!r}, want {want!r}"


def logged(text):
    """How the log quotes a request line or an answer."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    return ascii(text)


def log_problems(log_text, exchanges):
    """Each (request line, answer) must be on one line of the log."""
    lines = log_text.splitlines()
    problems = []
    for request, answer in exchanges:
        wanted = (f" request {logged(request)} " if request is not None else " request (none) ",
                  f" answer {logged(answer)}")
        if not any(all(w in line for w in wanted) for line in lines):
            problems.append(f"the log lacks {wanted[0].strip()} with {wanted[1].strip()}")
    return problems


def check_exchanges(port, failures):
    """EXCHANGES, then a cut request; returns the (request line, answer) pairs the log must
    hold."""
    seen = []
    for data, want in EXCHANGES:
        got = ask(port, data)
        problem = answer_problem(f"request {data[:40]!r}", got, want)
        if problem:
            failures.append(problem)
        line = data.split(b"\n", 1)[0].removesuffix(b"\r")
        if len(line) <= 200:  # (the log cuts longer lines)
            seen.append((line, got))
    # A line cut short by the client closing its side could parse as another request.
    got = ask(port, b"100;1", half_close=True)
    problem = answer_problem("a request without its newline", got,
                             "ERROR connection closed after 5 bytes")
    if problem:
        failures.append(problem)
    seen.append((None, got))
    return seen


def check_silent_clients(port, failures):
    """A client that sends nothing and one that stops midway do not hold up the next client, and
    get an ERROR once the read timeout is over. Returns the exchanges the log must hold."""
    silent = socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT + 5)
    trickling = socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT + 5)
    trickling.sendall(b"100;0")
    time.sleep(0.2)  # both connections are with the server now
    start = time.monotonic()
    got = ask(port, b"100;1;?\n")
    waited = time.monotonic() - start
    if got != "node2" or waited > READ_TIMEOUT / 2:
        failures.append(f"a client behind a silent one: answer {got!r} after {waited:.1f} s")
    seen = [(b"100;1;?", got)]
    for name, s in (("silent", silent), ("trickling", trickling)):
        with s:
            try:
                answer = read_answer(s)
            except socket.timeout:
                answer = "(none in time)"
        problem = answer_problem(f"the {name} client", answer,
                                 f"ERROR no request line within {READ_TIMEOUT} s")
        if problem:
            failures.append(problem)
        seen.append((None, answer))
    return seen


def check_main_server(server, plan, work, failures):
    log_path = os.path.join(work, "log.txt")
    options = ("--log", log_path, "--read-timeout", str(READ_TIMEOUT))
    with plan_server(server, plan, *options) as running:
        seen = check_exchanges(running.port, failures)
        seen += check_silent_clients(running.port, failures)
        # A job id named again by another process: its key changes, and the log says so.
        seen.append((b"100;1;200", ask(running.port, b"100;1;200\n")))
        seen.append((b"200;0;?", ask(running.port, b"200;0;?\n")))
        failures.extend(filter(None, [
            answer_problem("job 200's new parent", seen[-2][1], "node2"),
            answer_problem("job 200 after its new parent", seen[-1][1],
                           "ERROR no plan for init.1.0")]))
        # Read while the server runs, right after the last answer: logged before it was sent.
        with open(log_path) as f:
            log_text = f.read()
        failures.extend(log_problems(log_text, seen))
        if "note: job 200 was spawned by init.2, now by init.1" not in log_text:
            failures.append("the log does not note job 200's new parent")
        if running.stderr():
            failures.append(f"stderr is not empty with --log: {running.stderr()[:300]!r}")
    if running.returncode != 0:
        failures.append(f"SIGTERM: exit status {running.returncode}, want 0")
    with open(log_path) as f:
        if "stopped by SIGTERM" not in f.read():
            failures.append("the log does not say the server stopped by SIGTERM")


def check_stopping(server, plan, failures):
    """--max-requests N: exits by itself, status 0, after N connections (the log on stderr);
    SIGINT: status 0."""
    with plan_server(server, plan, "--max-requests", "2") as running:
        answers = [ask(running.port, b"100;0;?\n"), ask(running.port, b"100;9;?\n")]
        try:
            running.process.wait(10)
        except subprocess.TimeoutExpired:
            failures.append("--max-requests 2: still running after 2 requests")
    if running.returncode != 0:
        failures.append(f"--max-requests 2: exit status {running.returncode}, want 0")
    failures.extend(f"--max-requests 2: {p}" for p in
                    log_problems(running.stderr(), [(b"100;0;?", answers[0]),
                                                    (b"100;9;?", answers[1])]))
    if running.stdout != "":
        failures.append(f"--max-requests 2: stdout after the listening line: {running.stdout!r}")
    with plan_server(server, plan) as running:
        running.process.send_signal(signal.SIGINT)
        try:
            running.process.wait(10)
        except subprocess.TimeoutExpired:
            failures.append("SIGINT: still running")
    if running.returncode != 0 or "Traceback" in running.stderr():
        failures.append(f"SIGINT: exit status {running.returncode}: {running.stderr()[-500:]}")


def bad_input_cases(work, busy_port):
    """(arguments, text the one message must hold) for every input the server must refuse."""
    # Plan files: name -> (text, what the message says after 'NAME.txt')
    plans = {
        "no_colon": ("init.0: a\ninit.1 node0\n", ":2: no ':' between the key and its nodes"),
        "other_name": ("foo.0: a\n", ":1: bad key 'foo.0'"),
        "bare_init": ("init: a\n", ":1: bad key 'init'"),
        "word": ("init.x: a\n", ":1: bad key 'init.x'"),
        "negative": ("init.-1: a\n", ":1: bad key 'init.-1'"),
        "leading_zero": ("init.01: a\n", ":1: bad key 'init.01'"),
        "double_dot": ("init..0: a\n", ":1: bad key 'init..0'"),
        "no_nodes": ("# c\ninit.0:   # none\n", ":2: init.0 has no nodes"),
        "empty_node": ("init.0: a,,b\n", ":1: init.0: node 2 of 3 is empty"),
        "trailing_comma": ("init.0: a,\n", ":1: init.0: node 2 of 2 is empty"),
        "spaced_node": ("init.0: a b\n", ":1: init.0: node name 'a b' is not a host name"),
        "twice": ("init.0: a\n# c\ninit.0: b\n", ":3: init.0 is given twice (first on line 1)"),
        "empty": ("# nothing\n\n", ": the plan is empty"),
        "not_utf8": (b"init.0: a\ninit.1: \xff\n", ":2: not UTF-8 text"),
    }
    cases = []
    for name, (text, message) in plans.items():
        path = os.path.join(work, f"{name}.txt")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        cases.append((["--plan", path, "--port", "0"], f"{name}.txt{message}"))
    good = os.path.join(work, "plan.txt")
    missing = os.path.join(work, "missing.txt")
    cases += [
        ([], "the following arguments are required: --plan, --port"),
        (["--plan", missing, "--port", "0"],
         f"cannot read plan file {missing!r}: No such file or directory"),
        (["--plan", work, "--port", "0"],
         f"cannot read plan file {work!r}: it is not a regular file"),
        (["--plan", good, "--port", "abc"], "argument --port: expects a port number from 0 to "
                                            "65535 (0: any free port), got 'abc'"),
        (["--plan", good, "--port", "70000"], "argument --port: expects a port number"),
        (["--plan", good, "--port", "-1"], "argument --port: expects a port number"),
        (["--plan", good, "--port", str(busy_port)],
         f"--port {busy_port}: 127.0.0.1:{busy_port} is already in use"),
        (["--plan", good, "--port", "0", "--max-requests", "0"],
         "argument --max-requests: expects a positive integer, got '0'"),
        (["--plan", good, "--port", "0", "--read-timeout", "0"],
         "argument --read-timeout: expects a positive number of seconds, got '0'"),
        (["--plan", good, "--port", "0", "--log", "/nonexistent-dir/log.txt"],
         "--log '/nonexistent-dir/log.txt': cannot write: No such file or directory"),
        (["--plan", good, "--port", "0", "--log", work],
         f"--log {work!r}: cannot write: Is a directory"),
    ]
    return cases


def check_bad_input(server, work, failures):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        for args, message in bad_input_cases(work, busy.getsockname()[1]):
            try:
                run = subprocess.run([server, *args], capture_output=True, text=True, timeout=10)
            except subprocess.TimeoutExpired:
                failures.append(f"{args}: still running after 10 s")
                continue
            problems = []
            if run.returncode != 2:
                problems.append(f"exit status {run.returncode}, want 2")
            if run.stderr.count("\n") != 1 or run.stderr.count(message) != 1:
                problems.append(f"stderr should be one line holding {message!r}")
            if "Traceback" in run.stderr or run.stdout:
                problems.append("a traceback, or output on stdout")
            if problems:
                failures.append(f"{args}: {'; '.join(problems)}\n--- stderr\n{run.stderr[-1500:]}")
    run = subprocess.run([server, "--help"], capture_output=True, text=True, timeout=10)
    if run.returncode != 0 or "Key resolution" not in run.stdout or "init.2.0" not in run.stdout:
        failures.append(f"--help: exit {run.returncode}, {run.stdout[:300]!r}")


def check_fakes(failures):
    """The fake servers other tests rely on: no answer, garbage, a closed connection."""
    with silent_server() as fake:
        with socket.create_connection(("127.0.0.1", fake.port), timeout=0.5) as s:
            s.sendall(b"1;0;?\n")
            try:
                failures.append(f"silent_server answered {s.recv(100)!r}")
            except socket.timeout:
                pass
        if fake.requests != ["1;0;?"]:
            failures.append(f"silent_server recorded {fake.requests}")
    with garbage_server() as fake:
        got = ask(fake.port, b"1;0;?\n")
        if got != "%%%" or fake.requests != ["1;0;?"]:
            failures.append(f"garbage_server: {got!r}, recorded {fake.requests}")
    with garbage_server(BINARY_GARBAGE) as fake:
        with socket.create_connection(("127.0.0.1", fake.port), timeout=5) as s:
            s.sendall(b"1;0;?\n")
            data = b""
            while chunk := s.recv(100):
                data += chunk
        if data != BINARY_GARBAGE:
            failures.append(f"garbage_server(BINARY_GARBAGE) sent {data!r}")
    for read_first in (False, True):
        with closing_server(read_first=read_first) as fake:
            try:
                got = ask(fake.port, b"1;0;?\n")
            except ConnectionResetError:
                got = ""
            if got != "" or fake.connections != 1 or (read_first and fake.requests != ["1;0;?"]):
                failures.append(f"closing_server(read_first={read_first}): {got!r}, "
                                f"{fake.connections} connections, recorded {fake.requests}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="tools/miniamr-plan-server")
    a = ap.parse_args()
    server = os.path.abspath(a.server)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        plan = os.path.join(work, "plan.txt")
        with open(plan, "w") as f:
            f.write(PLAN)
        check_main_server(server, plan, work, failures)
        check_stopping(server, plan, failures)
        check_bad_input(server, work, failures)
    check_fakes(failures)
    return verdict(failures, "plan server: answers, spawned jobs' keys, ERROR answers, silent "
                             "clients, log, signals, --max-requests, bad input; fake servers")


if __name__ == "__main__":
    sys.exit(main())
