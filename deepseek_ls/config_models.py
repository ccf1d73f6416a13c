"""Typed configuration: every section of `.deepseek/config.toml`.

Every section and key is documented in docs/configuration.md (`[llm]`, `[router]`,
`[policy]`, `[index]`, `[agent_loop]` ...), the model *profiles* in docs/llm.md. Unknown keys are errors (``extra="forbid"``) so a typo
is reported instead of silently ignored. Loading and layering live in
``config.py``; this module is only the shape and the defaults.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Literal

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def check_base_url(value: str | None) -> str | None:
    """A base URL must name its scheme and host: `localhost:8080/v1` would be sent nowhere useful."""
    if value is None:
        return value
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"{value!r} is not an http(s) URL; write it with its scheme, e.g. 'http://{value.strip().split('://')[-1]}'"
        )
    return value.strip()


PRESETS_PATH = Path(__file__).parent / "llm" / "presets.toml"

ThinkingSwitch = Literal["thinking", "reasoning_effort", "none"]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def check_peak_hours(value: list[str]) -> list[str]:
    """Each window is 'HH:MM-HH:MM' in UTC (start inclusive, end exclusive; it may wrap past midnight)."""
    for window in value:
        try:
            start, end = window.split("-")
            for clock in (start, end):
                hours, minutes = clock.strip().split(":")
                if not (hours.isdigit() and minutes.isdigit() and int(hours) <= 24 and int(minutes) < 60):
                    raise ValueError
                if int(hours) == 24 and int(minutes) != 0:
                    raise ValueError
        except ValueError:
            raise ValueError(f"{window!r} is not a window like '01:00-04:00' (UTC, HH:MM-HH:MM)") from None
    return value


@cache
def preset_tables() -> dict[str, dict[str, Any]]:
    """The shipped model presets (`llm/presets.toml`) as raw tables, keyed by entry name."""
    with PRESETS_PATH.open("rb") as fh:
        return tomllib.load(fh)


class ModelEntry(_Section):
    """One model in the registry (`[models.NAME]`): where it is served, what it takes, what it costs.

    `preset = "NAME"` starts from a shipped preset (`llm/presets.toml`); the
    table's own keys win. Prices are per 1M tokens (`currency`).
    """

    preset: str | None = None
    provider: str = "openai-compatible"  # deepseek, openai-compatible, ollama, llama-cpp: picks error advice
    id: str  # the model name sent to the server
    base_url: str | None = None  # unset: `llm.base_url` (or $DEEPSEEK_BASE_URL)
    api_key_env: str | None = None  # unset: `llm.api_key_env`
    api_key_required: bool = True  # local servers take no key
    context_window: int = Field(default=32_768, gt=0)  # tokens, prompt + output
    max_output_tokens: int = Field(default=8_192, gt=0)  # the most the model can write in one answer
    default_max_tokens: int | None = Field(default=None, gt=0)  # `max_tokens` sent when the profile sets none
    # Capabilities: never send what the model does not take.
    thinking_switch: ThinkingSwitch = "none"  # `thinking: {type}` object, `reasoning_effort`, or no switch
    reasoning_field: Literal["reasoning_content", "reasoning"] = "reasoning_content"
    tools: bool = True
    json_mode: bool = False
    fim: bool = False  # has a fill-in-the-middle endpoint (inline completion, docs/inline-completion.md)
    # Which one: DeepSeek's `/beta/completions` (`prompt` + `suffix`) or llama.cpp's `/infill`.
    fim_api: Literal["beta", "infill"] = "beta"
    stream_usage: bool = True  # takes `stream_options: {include_usage: true}`
    # The edit format its prompts ask for (udiff, editblock, whole); unset: `agent_loop.edit_format`.
    edit_format: Literal["udiff", "editblock", "whole"] | None = None
    price_cache_hit: float | None = Field(default=None, ge=0)
    price_cache_miss: float | None = Field(default=None, ge=0)
    price_output: float | None = Field(default=None, ge=0)
    currency: str = "USD"
    # Time-of-day billing: inside a peak window (UTC, on `peak_days`) the prices above are
    # multiplied by `peak_price_factor`; unset, the prices hold around the clock.
    peak_price_factor: float | None = Field(default=None, ge=1)
    peak_hours_utc: list[str] = Field(default_factory=list)
    peak_days: list[Weekday] = Field(default_factory=lambda: list(WEEKDAYS))
    max_inflight: int | None = Field(default=None, gt=0)  # concurrent calls the server allows
    tokenizer: str | None = None  # "deepseek" counts with DeepSeek's tokenizer when installed; else an estimate
    # Bounded calls (see docs/llm.md).
    first_token_timeout_seconds: float | None = Field(default=None, gt=0)
    total_timeout_seconds: float | None = Field(default=None, gt=0)

    _base_url = field_validator("base_url")(check_base_url)
    _peak_hours = field_validator("peak_hours_utc")(check_peak_hours)

    @model_validator(mode="before")
    @classmethod
    def _start_from_preset(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("preset"):
            presets = preset_tables()
            name = data["preset"]
            if name not in presets:
                raise ValueError(f"unknown preset {name!r}; shipped presets: {', '.join(sorted(presets))}")
            merged = {**presets[name], **data}
            if "context_window" in data and "max_output_tokens" not in data:
                # A smaller window than the preset's: its output limits shrink with it unless given.
                half = max(int(data["context_window"]) // 2, 1)
                merged["max_output_tokens"] = min(int(merged.get("max_output_tokens") or half), half)
                if merged.get("default_max_tokens"):
                    merged["default_max_tokens"] = min(int(merged["default_max_tokens"]), merged["max_output_tokens"])
            return merged
        return data

    @model_validator(mode="after")
    def _output_fits(self) -> "ModelEntry":
        if self.max_output_tokens >= self.context_window:
            raise ValueError(
                f"max_output_tokens ({self.max_output_tokens}) must be below context_window ({self.context_window})"
            )
        return self

    @property
    def output_cap(self) -> int:
        """`max_tokens` for a call that names none: the entry's default, else its maximum."""
        return min(self.default_max_tokens or self.max_output_tokens, self.max_output_tokens)


def _default_models() -> dict[str, ModelEntry]:
    return {name: ModelEntry.model_validate(table) for name, table in preset_tables().items()}


class ModelProfile(_Section):
    """One way of calling a model. `fast` and `max_think` must exist.

    `model` names a registry entry (`[models.NAME]`, the shipped presets
    included); a name the registry does not know is sent as the model id with
    DeepSeek's settings, so the legacy names `deepseek-chat` /
    `deepseek-reasoner` keep working (thinking then follows the name).
    """

    model: str = "deepseek-v4-flash"
    thinking: bool = False
    # The API maps minimal/low -> low, medium/high/xhigh -> high, max/ultra -> max.
    reasoning_effort: Literal["minimal", "low", "medium", "high", "xhigh", "max", "ultra"] | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    base_url: str | None = None  # unset: the model entry's, else `llm.base_url`
    api_key_env: str | None = None  # unset: the model entry's, else `llm.api_key_env`
    # Budgets spent by this profile per session (used for max_think).
    max_tokens_per_session: int | None = Field(default=None, gt=0)
    max_seconds_per_session: float | None = Field(default=None, gt=0)
    # Used when `model` is down or out of capacity after the retries (a registry entry or a model id).
    fallback_model: str | None = None

    _base_url = field_validator("base_url")(check_base_url)


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
    # How long one attempt waits for its first data event after sending the request (keep-alive
    # comments do not count). Unset: idle_timeout_seconds. A model entry's own value wins.
    first_token_timeout_seconds: float | None = Field(default=None, gt=0)
    # Wall clock for all the attempts of one call until an answer starts to stream: no retry (or
    # wait before one) goes past it, and the last attempt's first-token wait is cut to what is left.
    retry_budget_seconds: float = Field(default=180.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=10)
    retry_base_seconds: float = Field(default=0.5, ge=0)
    retry_max_seconds: float = Field(default=30.0, ge=0)
    # The registry (`Config.models`), attached by `Config` so every client built from `config.llm` sees it.
    _models: dict[str, ModelEntry] | None = PrivateAttr(default=None)

    @property
    def models(self) -> dict[str, ModelEntry]:
        return self._models if self._models is not None else _default_models()

    _base_url = field_validator("base_url")(check_base_url)

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
    # Planner/executor asymmetry and failure-driven escalation (docs/agent.md, "Router").
    planning_request: float = 0.30  # "design", "architecture", 规划… (planner calls only)
    failure_escalation: float = 0.45  # a repeated/design failure nudges towards max-think
    batch_mode: float = 0.05  # batch (autopilot) work tolerates max-think latency
    # Review calls only (agent/review.py): a large or risky change is reviewed on max-think.
    review_size: float = 0.72  # changed lines / router.review_size_lines
    review_risk: float = 0.72  # risk areas the change touches (security, exec, concurrency, ...) / 2


class RouterConfig(_Section):
    auto_max_think: bool = True
    threshold_high: float = Field(default=0.72, ge=0.0)
    escalate_on_invalid_plan: bool = True
    max_escalations_per_unit: int = Field(default=1, ge=0, le=3)
    weights: RouterWeights = Field(default_factory=RouterWeights)
    planner_bias: float = Field(default=0.10, ge=0.0, le=1.0)
    breadth_files_k: int = Field(default=3, ge=1)
    review_size_lines: int = Field(default=400, ge=1)  # changed lines at which `review_size` is 1.0
    latency_mode: Literal["interactive", "batch"] = "interactive"
    force_profile: Literal["fast", "max_think"] | None = None


ApprovalMode = Literal["suggest", "auto", "never"]

# Where credentials live (gitignore patterns, matched at any depth, case-insensitively).
# Files with no telling name are recognised by their content (policy/secret_files.py).
DEFAULT_DENY_PATHS: tuple[str, ...] = (
    # dotenv and direnv
    ".env", ".env.*", "*.env", ".envrc", ".flaskenv",
    # private keys and keystores
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx",
    "id_rsa*", "id_dsa*", "id_ed25519*", "id_ecdsa*", ".ssh/", ".gnupg/",
    # cloud and cluster credentials
    ".aws/credentials", ".aws/config", ".azure/", ".config/gcloud/", "application_default_credentials.json",
    ".kube/", "kubeconfig", "*.kubeconfig", ".docker/config.json", ".dockercfg",
    ".boto", ".s3cfg", ".vault-token", ".terraformrc", "terraform.rc", "*.tfstate", "*.tfstate.backup",
    # package registries and hosts
    ".netrc", "_netrc", ".npmrc", ".yarnrc.yml", ".pypirc", ".gem/credentials", ".cargo/credentials*",
    ".git-credentials", ".config/gh/hosts.yml", ".pgpass", ".my.cnf", ".htpasswd",
    # build tools' registry passwords
    ".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties", ".ivy2/.credentials",
    ".config/pip/pip.conf", ".pip/pip.conf",
    ".composer/auth.json", ".config/composer/auth.json", ".config/rclone/rclone.conf",
    # shell and REPL histories: what people typed (export API_KEY=..., mysql -p...)
    ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history",
    ".irb_history", ".lesshst", ".viminfo", ".local/share/fish/fish_history",
)


# Download caches of build tools: artifacts, no credentials (those sit beside them, not inside).
DEFAULT_BUILD_CACHES = ("~/.m2/repository", "~/.gradle/caches/modules-2", "~/.npm/_cacache")


class SandboxConfig(_Section):
    """The OS sandbox (bubblewrap) every command the agent starts runs in (docs/tools.md)."""

    # auto: use bubblewrap when it works here, else ask before every command;
    # off: never sandbox (every command then needs an explicit approval).
    mode: Literal["auto", "off"] = "auto"
    bwrap_path: str | None = None
    # Extra absolute paths writable inside the sandbox (e.g. a build cache under ~).
    writable_paths: list[str] = Field(default_factory=list)
    # Extra absolute paths hidden inside the sandbox, on top of policy.deny_paths matches.
    masked_paths: list[str] = Field(default_factory=list)
    # Extra paths under the home directory shown read-only inside the sandbox (the home is otherwise
    # empty there but for the toolchains on PATH and the build caches below), e.g. "~/.ivy2/cache".
    readable_paths: list[str] = Field(default_factory=list)
    # Build tools' download caches shown read-only inside the sandbox, never the credential files
    # beside them (~/.m2/settings.xml, ~/.gradle/gradle.properties). A Gradle `caches/modules-2`
    # becomes Gradle's read-only dependency cache (GRADLE_RO_DEP_CACHE); [] shows none.
    build_caches: list[str] = Field(default_factory=lambda: list(DEFAULT_BUILD_CACHES))


# gitignore-style patterns, matched case-insensitively (policy.exec_config_files).
EXEC_CONFIG_FILES = (
    # Python: test collection, packaging and tool configuration that loads plugins
    "conftest.py", "setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "pytest.ini", "noxfile.py",
    "sitecustomize.py", "usercustomize.py", "*.pth", "manage.py",
    # pytest 9 reads pytest.toml first, then .pytest.toml, pytest.ini, .pytest.ini (addopts, plugins);
    # mypy and coverage load plugins named in their files; ruff's `fix = true` rewrites files on `ruff check`
    "pytest.toml", ".pytest.toml", ".pytest.ini", "mypy.ini", ".mypy.ini", ".coveragerc", "ruff.toml", ".ruff.toml",
    # JavaScript: scripts and configuration files that are programs
    "package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", "*.config.js", "*.config.cjs", "*.config.mjs",
    "*.config.ts", ".eslintrc*", ".babelrc*", ".mocharc*",
    # Make, Rust, Go
    "Makefile", "makefile", "GNUmakefile", "*.mk", "build.rs", "Cargo.toml", ".cargo/", "go.mod", "go.work",
    "rust-toolchain", "rust-toolchain.toml",
    # editors, CI, hooks, shells
    ".vscode/", ".idea/", ".devcontainer/", ".github/workflows/", ".gitlab-ci.yml", ".circleci/",
    "Jenkinsfile", ".travis.yml", "azure-pipelines.yml", ".pre-commit-config.yaml", ".husky/", ".githooks/",
    ".gitattributes", ".gitmodules", ".envrc", ".bashrc", ".bash_profile", ".profile", ".zshrc", ".tool-versions",
    ".mcp.json",
)


class PolicyConfig(_Section):
    approval_mode: ApprovalMode = "suggest"
    # Appendix A spelling; "ask" means suggest.
    approve_edits: Literal["ask", "auto", "never"] = "ask"
    approve_bash: Literal["ask", "auto", "never"] = "ask"
    # How long an approval or a question waits for the person; then it counts as unanswered and the
    # session pauses saying so (it is never asked again by itself: docs/agent.md).
    approval_timeout_seconds: float = Field(default=600.0, gt=0, le=86_400)
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
    deny_paths: list[str] = Field(default_factory=lambda: list(DEFAULT_DENY_PATHS))
    command_timeout_seconds: float = Field(default=120.0, gt=0)
    max_output_bytes: int = Field(default=64_000, gt=0)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    # Files that execute or configure execution: a patch touching one always needs an explicit
    # approval showing its content, "always allow" and approval_mode=auto notwithstanding.
    exec_config_files: list[str] = Field(default_factory=lambda: list(EXEC_CONFIG_FILES))


class IndexConfig(_Section):
    enabled: bool = True
    engine: Literal["tantivy"] = "tantivy"
    max_file_bytes: int = Field(default=1_000_000, gt=0)
    repo_map_tokens: int = Field(default=2000, gt=0)
    update_on_save: bool = True
    # How long a query may trust the last fresh/stale check before re-checking.
    freshness_ttl_seconds: float = Field(default=2.0, ge=0)
    # Worker processes for a full build's analysis; 0 = one per CPU but one (tantivy's
    # indexing thread needs a core; in-process on 2 CPUs), 1 = in-process.
    build_workers: int = Field(default=0, ge=0, le=64)
    # tantivy indexing threads of a full build; 0 = one per CPU, at most 4; 1 keeps a core
    # free for the editor while a build runs. Updates always use one (documents in order).
    build_threads: int = Field(default=0, ge=0, le=16)
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
    # The same tool call, failing edit or verification failure this many times in a row pauses (agent/runaway.py).
    # 4: the failure classifier's ladder (fix, replan, replan after a design mismatch) gets every rung first.
    runaway_repeats: int = Field(default=4, ge=2)
    # Compaction (agent/compaction.py): summarize older turns when the next prompt passes this share of the
    # window; the newest `compact_keep_turns` answers (and what followed them) are kept as they are.
    auto_compact: bool = True  # off: only when asked (/compact, deepseek.compact)
    compact_threshold: float = Field(default=0.8, gt=0, le=1)
    compact_keep_turns: int = Field(default=2, ge=0)
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
    # Teammate lanes (agent/lanes): independent steps run at once, each in its own git worktree.
    teammate_mode: bool = False
    max_lanes: int = Field(default=3, ge=1, le=16)  # lanes running at once; more wait in a queue
    lane_timeout_seconds: float = Field(default=900.0, gt=0)  # a lane still running then is cancelled


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


class ModelPrices(_Section):
    """Price per 1M tokens of one model."""

    cache_hit: float = Field(ge=0)
    cache_miss: float = Field(ge=0)
    output: float = Field(ge=0)
    currency: str = "USD"
    # Time-of-day billing, as in `[models.NAME]`: unset, these prices hold around the clock.
    peak_price_factor: float | None = Field(default=None, ge=1)
    peak_hours_utc: list[str] = Field(default_factory=list)
    peak_days: list[Weekday] = Field(default_factory=lambda: list(WEEKDAYS))

    _peak_hours = field_validator("peak_hours_utc")(check_peak_hours)


class BudgetConfig(_Section):
    # Money one session may spend (in the currency of the models' prices); reaching it pauses the session.
    max_cost: float | None = Field(default=None, gt=0)
    # Tokens (prompt + output, every call) one session may use; reaching it pauses the session like max_cost.
    max_tokens: int | None = Field(default=None, gt=0)
    # Prices by model id, for models the registry does not price (or to override it).
    prices: dict[str, ModelPrices] = Field(default_factory=dict)


class InstructionsConfig(_Section):
    # Project instructions put at the start of every prompt (workspace-relative; missing files are skipped).
    files: list[str] = Field(default_factory=lambda: ["AGENTS.md", ".deepseek/instructions.md"])
    max_bytes: int = Field(default=32_000, gt=0)


class ReviewConfig(_Section):
    """`deepseek-ls review` and the editor's review (agent/review.py, docs/review.md)."""

    max_changed_lines: int = Field(default=10_000, gt=0)  # a larger change is refused: review it in parts
    max_diff_bytes: int = Field(default=8_000_000, gt=0)  # the diff read from git or a file, at most
    chunk_tokens: int = Field(default=24_000, ge=1_000)  # one model call reviews at most this much diff
    context_lines: int = Field(default=10, ge=0, le=200)  # unchanged lines git shows around each change


class HetunHelperConfig(_Section):
    """The Hetun helper block: a small Python program the model writes, validated on its AST and run
    in a separate, sandboxed process (docs/agent.md, "Hetun mode")."""

    enabled: bool = True
    # Refuse to run a helper block when no OS sandbox (bubblewrap) works here.
    require_sandbox: bool = True
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    cpu_seconds: int = Field(default=10, ge=1, le=600)
    memory_mb: int = Field(default=512, ge=64, le=8192)
    max_calls: int = Field(default=64, ge=1, le=10_000)  # helper calls served by the parent per block
    max_loop_iterations: int = Field(default=10_000, ge=1, le=10_000_000)  # every loop and comprehension together
    max_code_bytes: int = Field(default=8_000, ge=100, le=200_000)
    max_result_bytes: int = Field(default=32_000, ge=100, le=1_000_000)


class HetunConfig(_Section):
    """Budgets and shape of the Hetun research phase; every budget is enforced."""

    max_subqueries: int = Field(default=32, ge=1, le=1000)
    max_tokens: int = Field(default=200_000, ge=1)
    # Money the research phase may spend (the models' price currency); None: no research money cap.
    max_cost: float | None = Field(default=0.5, ge=0)
    max_seconds: float = Field(default=300.0, gt=0)
    parallelism: int = Field(default=8, ge=1, le=64)
    max_depth: int = Field(default=2, ge=0, le=6)  # follow-up rounds after the first fan-out
    max_slices: int = Field(default=12, ge=1, le=500)  # slices in the first fan-out
    slice_lines: int = Field(default=200, gt=0, le=5000)
    cross_check: int = Field(default=3, ge=0, le=32)  # top findings re-checked on the max-think profile
    helper: HetunHelperConfig = Field(default_factory=HetunHelperConfig)


class InlineCompletionConfig(_Section):
    """Inline completion from the model's fill-in-the-middle endpoint (docs/inline-completion.md)."""

    enabled: bool = True  # off: no FIM request is ever sent
    profile: str = "fast"  # the profile whose model completes (it needs `fim = true` in the registry)
    model: str | None = None  # a registry entry or model id instead of the profile's model
    debounce_ms: int = Field(default=75, ge=0, le=2_000)  # quiet time after a keystroke before asking
    max_tokens: int = Field(default=128, ge=1, le=4_096)  # the longest suggestion (DeepSeek's FIM caps at 4K)
    context_tokens: int = Field(default=2_048, ge=64, le=32_000)  # prefix + suffix + index hits, at most
    index_hits: int = Field(default=3, ge=0, le=10)  # snippets for identifiers near the cursor (0: none)
    timeout_seconds: float = Field(default=10.0, gt=0, le=120)  # a suggestion later than this is not worth it
    # Plain `textDocument/completion` items too, for clients without inline completion (Helix, Emacs).
    completion_items: bool = False


class HooksConfig(_Section):
    """Lifecycle hooks (docs/hooks.md): configured in hooks.json files and .claude/settings.json."""

    enabled: bool = True
    timeout_seconds: float = Field(default=60.0, gt=0, le=600)  # a hook that does not set its own
    max_output_bytes: int = Field(default=65_536, ge=1_024, le=1_048_576)  # stdout and stderr, each


class NotificationsConfig(_Section):
    """Telling the person a session waits for them or finished (docs/hooks.md#notifications)."""

    enabled: bool = True
    desktop: bool = True  # notify-send, where it is installed


class CodeActionsConfig(_Section):
    """What the server offers through standard LSP to every editor (docs/editors.md): each switch only
    shows or hides actions the person then chooses; nothing runs on its own."""

    hunk_actions: bool = True  # Accept / Reject code actions on pending hunks (as the lenses)
    hunk_diagnostics: bool = True  # one diagnostic (source "deepseek") per pending hunk
    comment_instructions: bool = True  # "DeepSeek: <instruction>" on a `deepseek:` comment line
    diagnostic_actions: bool = True  # "DeepSeek: Fix …" / "DeepSeek: Explain …" on other tools' diagnostics


class Config(_Section):
    """The whole effective configuration."""

    llm: LLMConfig = Field(default_factory=LLMConfig)
    models: dict[str, ModelEntry] = Field(default_factory=_default_models)
    router: RouterConfig = Field(default_factory=RouterConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    agent_loop: AgentLoopConfig = Field(default_factory=AgentLoopConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    instructions: InstructionsConfig = Field(default_factory=InstructionsConfig)
    hetun: HetunConfig = Field(default_factory=HetunConfig)
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    inline_completion: InlineCompletionConfig = Field(default_factory=InlineCompletionConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    notifications: NotificationsConfig = Field(default_factory=NotificationsConfig)
    code_actions: CodeActionsConfig = Field(default_factory=CodeActionsConfig)

    @model_validator(mode="after")
    def _attach_registry(self) -> "Config":
        models = dict(self.models)
        for name, entry in _default_models().items():
            models.setdefault(name, entry)
        object.__setattr__(self, "models", models)
        self.llm._models = models
        return self
