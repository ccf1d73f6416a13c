"""Typed configuration: every section of `.deepseek/config.toml`.

The schema follows `seeds/000_*` Appendix A (`[llm]`, `[router]`, `[policy]`,
`[index]`) and `seeds/001_*` section 8 (`[agent_loop]`), with model *profiles*
as `design.md` describes. Unknown keys are errors (``extra="forbid"``) so a typo
is reported instead of silently ignored. Loading and layering live in
``config.py``; this module is only the shape and the defaults.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelProfile(_Section):
    """One way of calling a model. `fast` and `max_think` must exist.

    Current DeepSeek models (`deepseek-v4-flash`, `deepseek-v4-pro`) select
    thinking with a request flag (`thinking`, `reasoning_effort`) rather than a
    model name; the legacy names `deepseek-chat` / `deepseek-reasoner` remain
    valid values of `model` (thinking then follows the name).
    """

    model: str = "deepseek-v4-flash"
    thinking: bool = False
    # The API maps minimal/low -> low, medium/high/xhigh -> high, max/ultra -> max.
    reasoning_effort: Literal["minimal", "low", "medium", "high", "xhigh", "max", "ultra"] | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    base_url: str | None = None
    api_key_env: str = "DEEPSEEK_API_KEY"
    # Budgets spent by this profile per session (used for max_think).
    max_tokens_per_session: int | None = Field(default=None, gt=0)
    max_seconds_per_session: float | None = Field(default=None, gt=0)


def _default_profiles() -> dict[str, ModelProfile]:
    return {
        "fast": ModelProfile(model="deepseek-v4-flash", thinking=False, temperature=0.2),
        "max_think": ModelProfile(
            model="deepseek-v4-pro",
            thinking=True,
            reasoning_effort="high",
            max_tokens_per_session=400_000,
            max_seconds_per_session=1800.0,
        ),
    }


class LLMConfig(_Section):
    base_url: str = "https://api.deepseek.com"
    api_key_env: str = "DEEPSEEK_API_KEY"
    # Appendix A names; kept as aliases that set the profiles' model names.
    base_model: str | None = None
    max_think_model: str | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    profiles: dict[str, ModelProfile] = Field(default_factory=_default_profiles)
    stream: bool = True
    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    idle_timeout_seconds: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=10)
    retry_base_seconds: float = Field(default=0.5, ge=0)
    retry_max_seconds: float = Field(default=30.0, ge=0)

    @model_validator(mode="after")
    def _apply_legacy_names(self) -> "LLMConfig":
        profiles = dict(self.profiles)
        for name, default in _default_profiles().items():
            profiles.setdefault(name, default)
        if self.base_model:
            profiles["fast"] = profiles["fast"].model_copy(update={"model": self.base_model})
        if self.max_think_model:
            profiles["max_think"] = profiles["max_think"].model_copy(
                update={"model": self.max_think_model}
            )
        if self.temperature is not None:
            profiles["fast"] = profiles["fast"].model_copy(update={"temperature": self.temperature})
        object.__setattr__(self, "profiles", profiles)
        return self


class RouterWeights(_Section):
    prompt_complexity: float = 0.20  # w1
    repo_breadth: float = 0.24  # w2
    failure_streak: float = 0.15  # w3
    verification_failures: float = 0.15  # w4
    low_confidence: float = 0.16  # w5
    ambiguity: float = 0.10  # w6
    # Planner/executor asymmetry and failure-driven escalation (seeds/000 5.4, 9.2).
    planning_request: float = 0.30  # "design", "architecture", 规划… (planner calls only)
    failure_escalation: float = 0.45  # a repeated/design failure nudges towards max-think
    batch_mode: float = 0.05  # batch (autopilot) work tolerates max-think latency


class RouterConfig(_Section):
    auto_max_think: bool = True
    threshold_high: float = Field(default=0.72, ge=0.0)
    escalate_on_invalid_plan: bool = True
    max_escalations_per_unit: int = Field(default=1, ge=0, le=3)
    weights: RouterWeights = Field(default_factory=RouterWeights)
    planner_bias: float = Field(default=0.10, ge=0.0, le=1.0)
    breadth_files_k: int = Field(default=3, ge=1)
    latency_mode: Literal["interactive", "batch"] = "interactive"
    force_profile: Literal["fast", "max_think"] | None = None


ApprovalMode = Literal["suggest", "auto", "never"]


class PolicyConfig(_Section):
    approval_mode: ApprovalMode = "suggest"
    # Appendix A spelling; "ask" means suggest.
    approve_edits: Literal["ask", "auto", "never"] = "ask"
    approve_bash: Literal["ask", "auto", "never"] = "ask"
    allowlist: list[str] = Field(
        default_factory=lambda: [
            "pytest",
            "python -m pytest",
            "cargo test",
            "cargo fmt --check",
            "cargo check",
            "npm test",
            "npm run lint",
            "go test",
            "git status",
            "git diff",
            "git log",
            "rg",
            "ruff check",
            "mypy",
            "make test",
        ]
    )
    allow_shell_metacharacters: bool = False
    deny_paths: list[str] = Field(
        default_factory=lambda: [
            ".env",
            ".env.*",
            "*.pem",
            "*.key",
            "id_rsa*",
            "id_ed25519*",
            "id_ecdsa*",
            ".ssh/",
            ".aws/credentials",
            ".netrc",
            ".npmrc",
            ".pypirc",
            "*.p12",
            "*.pfx",
        ]
    )
    command_timeout_seconds: float = Field(default=120.0, gt=0)
    max_output_bytes: int = Field(default=64_000, gt=0)


class IndexConfig(_Section):
    enabled: bool = True
    engine: Literal["tantivy"] = "tantivy"
    max_file_bytes: int = Field(default=1_000_000, gt=0)
    repo_map_tokens: int = Field(default=2000, gt=0)
    update_on_save: bool = True
    # How long a query may trust the last fresh/stale check before re-checking.
    freshness_ttl_seconds: float = Field(default=2.0, ge=0)
    # Worker processes for a full build's analysis; 0 = one per CPU, 1 = in-process.
    build_workers: int = Field(default=0, ge=0, le=64)
    # Never indexed, on top of .gitignore (gitignore syntax, relative to the workspace root).
    exclude: list[str] = Field(
        default_factory=lambda: [
            "node_modules/", ".venv/", "__pycache__/", ".mypy_cache/",
            ".pytest_cache/", ".ruff_cache/", ".tox/", "*.min.js", "*.map",
        ]
    )


class FailureClassifierConfig(_Section):
    repeat_threshold: int = Field(default=2, ge=1)
    similarity_threshold: float = Field(default=0.8, ge=0.0, le=1.0)
    fingerprint_lines: int = Field(default=40, ge=1)


class SafetyGateConfig(_Section):
    max_files_without_approval: int = Field(default=8, ge=0)
    max_loc_without_approval: int = Field(default=600, ge=0)


class AgentLoopConfig(_Section):
    max_iterations: int = Field(default=6, ge=1)
    architect_parse_retries: int = Field(default=2, ge=0)
    editor_parse_retries: int = Field(default=2, ge=0)
    max_files_per_iteration: int = Field(default=12, ge=1)
    max_file_bytes: int = Field(default=200_000, gt=0)
    max_diff_bytes: int = Field(default=400_000, gt=0)
    verify_timeout_seconds: float = Field(default=60.0, gt=0)
    max_context_requests_per_iteration: int = Field(default=3, ge=0)
    max_context_range_lines: int = Field(default=400, gt=0)
    max_ask_user_cycles: int = Field(default=2, ge=0)
    # Answers that end with finish_reason "length" / "insufficient_system_resource" (agent/finish.py).
    max_continuations: int = Field(default=2, ge=0)
    resource_retries: int = Field(default=2, ge=0)
    # How the executor is asked for edits (patch/editblock_prompts.py); any format is accepted back.
    edit_format: Literal["udiff", "editblock", "whole"] = "udiff"
    edit_format_by_model: dict[str, Literal["udiff", "editblock", "whole"]] = Field(default_factory=dict)
    edit_format_fallback_after: int = Field(default=2, ge=1)  # unified diffs failing this often -> editblock
    whole_file_max_lines: int = Field(default=400, gt=0)  # whole-file answers only for files this small
    mode: Literal["plan", "agent", "yolo"] = "agent"
    apply_strategy: Literal["auto", "three_way"] = "auto"
    failure_classifier: FailureClassifierConfig = Field(default_factory=FailureClassifierConfig)
    safety_gate: SafetyGateConfig = Field(default_factory=SafetyGateConfig)


McpTransport = Literal["stdio", "http", "sse"]


class McpServerConfig(_Section):
    """One MCP server: a program spoken to over stdio, or a streamable-HTTP (or SSE) endpoint.

    The keys are those of the ecosystem's `mcpServers` JSON (`.mcp.json`), so one definition
    can be copied between agents. `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`,
    `url` and `headers` are expanded from the environment when the server starts.
    """

    type: McpTransport = "stdio"
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    # One tool call (and the start-up handshake) may take this long before it is abandoned.
    timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    startup_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    # Tool names (as the server names them) offered to the model: all when `allow_tools` is
    # unset; `deny_tools` always wins.
    allow_tools: list[str] | None = None
    deny_tools: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _transport_fields(self) -> "McpServerConfig":
        if self.type == "stdio" and not self.command:
            raise ValueError("a stdio MCP server needs `command`")
        if self.type in ("http", "sse") and not self.url:
            raise ValueError(f"an MCP server of type {self.type!r} needs `url`")
        return self


class McpConfig(_Section):
    enabled: bool = True
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    # Read `.mcp.json` at the workspace root (its servers still need approval once).
    read_workspace_json: bool = True
    # Cap on one tool result sent to the model (text after redaction), in bytes.
    max_result_bytes: int = Field(default=32_000, gt=0)
    # Restarts after a crash, with exponential backoff from `restart_backoff_seconds`.
    max_restarts: int = Field(default=3, ge=0, le=20)
    restart_backoff_seconds: float = Field(default=1.0, ge=0, le=60)


class Config(_Section):
    """The whole effective configuration."""

    llm: LLMConfig = Field(default_factory=LLMConfig)
    router: RouterConfig = Field(default_factory=RouterConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    agent_loop: AgentLoopConfig = Field(default_factory=AgentLoopConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
