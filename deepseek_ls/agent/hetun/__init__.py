"""Hetun mode ("Plan + Recursive Agents"): research fan-out on the fast model, one mission card,
an approved run straight through. See docs/agent.md, "Hetun mode".

- `research.py`: recursive novelty sampling over slices, budgets, the research tree;
- `validate.py`, `runner.py`, `child.py`: the helper block (AST check, sandboxed process, helpers over a pipe);
- `mission.py`: the mission card; `driver.py`: propose, decide, execute.
"""
