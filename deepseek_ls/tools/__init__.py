"""Tools the agent may call: a registry of read, stage/apply and exec tools behind policy.

`ToolHost` (in `host.py`) is the entry point; `DocumentOverlay` (in `overlay.py`)
holds the editor's open buffers.
"""
