"""`deepseek-ls` (the console script) and `python -m deepseek_ls`: the CLI, Ctrl-C handled from the start.

The console script calls `main` here, not `deepseek_ls.cli.main`: only this module
and the package's `__init__` (a version string) run before the guard is in place.
A SIGINT at any later moment of start-up — importing the CLI, reading the config,
building the parser, importing a command's module — before a command's event loop
(cli/interrupt.py) takes Ctrl-C over ends with one line, `deepseek-ls: interrupted`,
and exit code 130, never a traceback. Nothing is imported here, so start-up stays
as lazy as cli/__init__.py makes it (bench/bench_cli_startup.py).
"""

import sys


def main() -> int:
    try:
        from deepseek_ls.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        pass
    return _interrupted()


def _interrupted() -> int:
    while True:
        try:
            import signal

            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while we say so changes nothing
            break
        except KeyboardInterrupt:
            continue
    try:
        print("deepseek-ls: interrupted", file=sys.stderr, flush=True)
    except OSError:  # stderr gone (closed terminal): the exit code still says it
        pass
    return 130


if __name__ == "__main__":
    sys.exit(main())
