"""The helper block's process (stdlib only; started by `runner.py` inside the OS sandbox).

Protocol, one JSON object a line: the parent sends `{"code", "limits"}` on
stdin; the child answers helper calls it cannot serve itself with
`{"call": name, "args": [...], "kwargs": {...}}` on the protocol descriptor and
reads `{"ok": true, "value": ...}` / `{"ok": false, "error": ...}` back; it
ends with `{"done": true, "result", "findings", "output"}` or
`{"done": false, "error"}`.

Before the block runs: resource limits (address space, CPU, no file writes,
no new processes, few descriptors), stdout moved away from the protocol (a
`print` cannot forge a message), and builtins reduced to the safe ones. The
block itself was checked by `validate.py` in the parent: these are the second
and third walls, the sandbox (no network, read-only file system) the fourth.
"""

import json
import os
import sys


def _limit(limits):
    import resource

    def cap(which, value):
        try:
            soft, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass

    cap(resource.RLIMIT_AS, int(limits.get("memory_mb", 512)) * 1024 * 1024)
    cap(resource.RLIMIT_CPU, int(limits.get("cpu_seconds", 10)))
    cap(resource.RLIMIT_FSIZE, 0)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NOFILE, 16)
    if hasattr(resource, "RLIMIT_NPROC"):
        cap(resource.RLIMIT_NPROC, 0)


class _Stop(Exception):
    pass


def main():
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # anything printed goes to stderr, never to the protocol
    first = proto_in.readline()
    request = json.loads(first)
    limits = request.get("limits") or {}
    _limit(limits)
    max_loops = int(limits.get("max_loop_iterations", 10000))
    state = {"loops": 0}
    findings = []
    output = []
    box = {}

    def send(message):
        proto_out.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
        proto_out.flush()

    def remote(name):
        def call(*args, **kwargs):
            send({"call": name, "args": list(args), "kwargs": kwargs})
            line = proto_in.readline()
            if not line:
                raise _Stop("the parent stopped answering")
            reply = json.loads(line)
            if not reply.get("ok"):
                raise RuntimeError(f"{name}: {reply.get('error')}")
            return reply.get("value")
        call.__name__ = name
        return call

    def loop(iterable):
        for item in iterable:
            state["loops"] += 1
            if state["loops"] > max_loops:
                raise RuntimeError(f"loop limit reached ({max_loops} iterations in all)")
            yield item

    def text_lines(text):
        return str(text).splitlines()

    def slice_lines(text, start, end=None):
        got = text_lines(text)
        return "\n".join(got[max(int(start) - 1, 0): None if end is None else int(end)])

    def grep(text, needle):
        return [f"{i}: {line}" for i, line in enumerate(text_lines(text), start=1) if str(needle) in line]

    def head(items, n=10):
        return items[: int(n)]

    def tail(items, n=10):
        return items[-int(n):] if int(n) else []

    def count_lines(text):
        return len(text_lines(text))

    def map_(fn, items):
        return [fn(x) for x in loop(items)]

    def filter_(fn, items):
        return [x for x in loop(items) if fn(x)]

    def collect(*groups):
        out = []
        for group in loop(groups):
            if isinstance(group, (list, tuple)):
                out.extend(loop(group))
            else:
                out.append(group)
        return out

    def unique(items):
        seen, out = [], []
        for x in loop(items):
            key = json.dumps(x, sort_keys=True, default=str)
            if key not in seen:
                seen.append(key)
                out.append(x)
        return out

    def top(items, n=5, key=None):
        return sorted(items, key=key, reverse=True)[: int(n)] if key else list(items)[: int(n)]

    def join(items, sep="\n"):
        return str(sep).join(str(x) for x in loop(items))

    def finding(text, relevance=0.5):
        findings.append({"text": str(text)[:500], "relevance": max(0.0, min(1.0, float(relevance)))})

    def result(value):
        box["result"] = value

    def print_(*args, **kwargs):
        if len(output) < 200:
            output.append(" ".join(str(a) for a in args)[:500])

    safe = {}
    for name in ("len", "range", "min", "max", "sum", "sorted", "enumerate", "zip", "str", "int", "float", "bool",
                 "list", "dict", "set", "tuple", "abs", "round", "any", "all", "reversed"):
        safe[name] = __builtins__[name] if isinstance(__builtins__, dict) else getattr(__builtins__, name)
    safe.update({"True": True, "False": False, "None": None, "print": print_})
    env = {"__builtins__": safe, "__hetun_loop__": loop}
    env.update({name: remote(name) for name in request.get("remote", [])})
    env.update({
        "slice_lines": slice_lines, "lines": text_lines, "grep": grep, "head": head, "tail": tail,
        "count_lines": count_lines, "map": map_, "filter": filter_, "collect": collect, "unique": unique,
        "top": top, "join": join, "finding": finding, "result": result,
    })
    try:
        code = compile(request["code"], "<helper block>", "exec")
        exec(code, env)  # noqa: S102 - checked by validate.py; builtins reduced; process sandboxed
        send({"done": True, "result": box.get("result"), "findings": findings, "output": output})
    except _Stop:
        return
    except MemoryError:
        send({"done": False, "error": "the helper block ran out of memory", "findings": findings})
    except RecursionError:
        send({"done": False, "error": "the helper block recursed too deeply", "findings": findings})
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the block's error
        send({"done": False, "error": f"{type(exc).__name__}: {exc}"[:1000], "findings": findings})


if __name__ == "__main__":
    main()
