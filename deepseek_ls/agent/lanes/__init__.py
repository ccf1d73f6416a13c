"""Teammate mode's lanes: a plan's independent steps run at once, each in its own git worktree.

`schedule` picks the steps (no shared file, no declared dependency),
`worktree` makes and removes the checkouts, `runner` runs one lane session per
step under the model manager's limits (`llm/capacity.py`), and `orchestrator`
stages the lanes' results into the workspace in step order. Only the
orchestrator writes to the person's workspace. See docs/agent.md#teammate-mode.
"""

from deepseek_ls.agent.lanes.orchestrator import run_wave
from deepseek_ls.agent.lanes.schedule import wave

__all__ = ["run_wave", "wave"]
