"""The one native part: `deepseek_ls.index._native` (Python symbols for the index).

Optional: where it cannot be compiled the install goes on and the index uses the
pure-Python reference in `deepseek_ls/index/symbols.py` (same answers, slower).
Everything else about the package is in pyproject.toml.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "deepseek_ls.index._native",
            ["deepseek_ls/index/_native.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
