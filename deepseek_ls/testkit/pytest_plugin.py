"""pytest fixtures for the fake DeepSeek server (filled in by the LLM issue)."""
