"""Child process of the crash and concurrency tests: append events, print each acknowledged seq_no.

usage: _appender_child.py LOG_PATH SESSION_ID TAG COUNT [GO_FILE] [BIG_EVERY]
COUNT 0 means forever. With GO_FILE, print "ready" and wait for that file before appending
(so two writers start together). Every BIG_EVERY-th event carries a ~2 MB payload, so a
SIGKILL can land in the middle of its write.
"""

import sys
import time
from pathlib import Path

from deepseek_ls.store.log import EventLog


def main() -> None:
    path, session_id, tag, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    go = Path(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] != "-" else None
    big_every = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    log = EventLog(path, session_id)
    if go is not None:
        print("ready", flush=True)
        while not go.exists():
            time.sleep(0.001)
    i = 0
    while count == 0 or i < count:
        i += 1
        text = f"{tag}-{i}"
        if big_every and i % big_every == 0:
            text += " " + "x" * 2_000_000
        event = log.append("TurnAdded@v1", {"role": "user", "content": text})
        print(f"{event.seq_no} {tag}-{i}", flush=True)


if __name__ == "__main__":
    main()
