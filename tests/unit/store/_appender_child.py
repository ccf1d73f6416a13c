"""Child process of the crash and concurrency tests: append events, print each acknowledged seq_no.

usage: _appender_child.py LOG_PATH SESSION_ID TAG COUNT [GO_FILE|-] [BIG_EVERY] [TEAR_AFTER]

COUNT 0 means forever. With GO_FILE, print "ready" and wait for that file before appending
(so two writers start together), and after the first append wait until the log holds two
events: the other writer's first one too. Their appends then certainly overlap, however the
machine schedules them (on a loaded runner one writer could otherwise finish before the other
ran at all). Every BIG_EVERY-th event carries an ~8 MB payload, so a
SIGKILL can land in the middle of its write; redaction is skipped here (it is tested
elsewhere and would otherwise take most of the time, leaving the writes rarely hit).
With TEAR_AFTER, after that many appends the child writes the first half of another
event line and SIGKILLs itself: a write cut short, made certain rather than lucky.
"""

import os
import signal
import sys
import time
from pathlib import Path

from deepseek_ls.store.log import EventLog


def main() -> None:
    path, session_id, tag, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    go = Path(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] != "-" else None
    big_every = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    tear_after = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    log = EventLog(path, session_id, redact_obj=lambda payload: payload)
    if go is not None:
        print("ready", flush=True)
        while not go.exists():
            time.sleep(0.001)
    i = 0
    while count == 0 or i < count:
        if tear_after and i == tear_after:
            line = f'{{"seq_no":{log.last_seq + 1},"ts":"t","session_id":"{session_id}","kind":"TurnAdded@v1"}}\n'
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.write(fd, line[: len(line) // 2].encode())
            os.kill(os.getpid(), signal.SIGKILL)
        i += 1
        text = f"{tag}-{i}"
        if big_every and i % big_every == 0:
            text += " " + "x" * 8_000_000
        event = log.append("TurnAdded@v1", {"role": "user", "content": text})
        print(f"{event.seq_no} {tag}-{i}", flush=True)
        if go is not None and i == 1:
            while path.read_bytes().count(b"\n") < 2:
                time.sleep(0.001)


if __name__ == "__main__":
    main()
