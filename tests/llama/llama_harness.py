"""Shared values of the llama.cpp tests: the server's context size and the workspace config using it."""

N_CTX = 2048
ALIAS = "smollm2"


def local_config(base_url: str, *, context_window: int = N_CTX, max_tokens: int = 48) -> str:
    """A workspace config naming the server as a registry entry, and a `local` profile using it."""
    return f'''
[models.smol]
preset = "llama-cpp"
id = "{ALIAS}"
base_url = "{base_url}"
context_window = {context_window}
max_output_tokens = {max(max_tokens, 256)}
default_max_tokens = {max_tokens}
first_token_timeout_seconds = 300
total_timeout_seconds = 300

[llm.profiles.local]
model = "smol"
temperature = 0.0

[llm]
max_retries = 1
retry_base_seconds = 0.05

[agent_loop]
max_iterations = 2
architect_parse_retries = 1
editor_parse_retries = 1
'''
