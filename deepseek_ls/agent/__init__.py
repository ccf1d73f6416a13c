"""The agent: plan-first loop, sessions, failure recovery and deterministic replay."""

from deepseek_ls.agent.agent import Agent
from deepseek_ls.agent.loop import StepOutcome
from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.agent.runtime import AgentFailure, BudgetExceeded, SessionCancelled

__all__ = ["Agent", "AgentFailure", "BudgetExceeded", "Plan", "SessionCancelled", "Step", "StepOutcome"]
