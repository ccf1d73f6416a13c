"""Shared test configuration: the fake DeepSeek server fixtures come from the testkit plugin."""

pytest_plugins = ["deepseek_ls.testkit.pytest_plugin"]
