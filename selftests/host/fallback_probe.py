#!/usr/bin/python3
# Run inside an agent by selftests/host/test_fallback.c: tries each operation named on the
# command line and prints one line per try, "NAME ok" or "NAME EACCES" (the errno's name).
import ctypes
import errno
import os
import resource
import signal
import socket
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321  # x86_64
CLONE_NEWUSER = 0x10000000
PTRACE_SEIZE = 0x4206


def syscall_result(ret):
    if ret < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def read(path):
    with open(path, "rb") as f:
        f.read()


def write(path):
    with open(path, "wb") as f:
        f.write(b"x")


def run(*argv):
    r = subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        raise OSError(errno.EIO, "exit status %d" % r.returncode)


def memfd_exec(path):
    with open(path, "rb") as f:
        image = f.read()
    fd = os.memfd_create("agent", 0)
    os.write(fd, image)
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(fd, ["agent"], {})
        except OSError as e:
            os._exit(100 + e.errno)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code >= 100:
        raise OSError(code - 100, os.strerror(code - 100))
    if code != 0:
        raise OSError(errno.EIO, "exit status %d" % code)


def connect(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect(("127.0.0.1", int(port)))
    finally:
        s.close()


def unix_connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    finally:
        s.close()


def netlink_socket():
    socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 0).close()


def traceme_then_signal():
    # agentctl becomes the tracer; a signal then stops this process until agentctl passes it on
    got = []
    syscall_result(libc.ptrace(0, 0, None, None))  # PTRACE_TRACEME
    signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
    os.kill(os.getpid(), signal.SIGUSR1)
    if not got:
        raise OSError(errno.EIO, "the signal was not delivered")


def inotify_watch(path):
    fd = libc.inotify_init1(os.O_CLOEXEC)
    syscall_result(fd)
    try:
        syscall_result(libc.inotify_add_watch(fd, path.encode(), 0xFFF))  # IN_ALL_EVENTS
    finally:
        os.close(fd)


OPS = {
    "read": read,
    "write": write,
    "exec": run,
    "ldso": lambda ldso, path: run(ldso, path),
    "memfd": memfd_exec,
    "chmod": lambda path: os.chmod(path, 0o600),
    "bpf": lambda: syscall_result(libc.syscall(SYS_BPF, 0, None, 0)),
    "userns": lambda: syscall_result(libc.unshare(CLONE_NEWUSER)),
    "connect": connect,
    # Seize does not stop the tracee; the tracer's exit lets it go.
    "ptrace": lambda pid: syscall_result(libc.ptrace(PTRACE_SEIZE, int(pid), None, None)),
    "signal": lambda pid: os.kill(int(pid), 0),
    "traceme": traceme_then_signal,
    "netlink": netlink_socket,
    "unix": unix_connect,
    "inotify": inotify_watch,
    # Lowers the core size limit of the task: harmless, and refused only by pid.
    "prlimit": lambda pid: resource.prlimit(int(pid), resource.RLIMIT_CORE, (0, 0)),
}

# Each try is NAME:OP:ARG:ARG...
for spec in sys.argv[1:]:
    name, op, *args = spec.split(":")
    try:
        OPS[op](*args)
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()
