"""`python -m deepseek_ls` is the same as the `deepseek-ls` command."""

import sys

from deepseek_ls.cli import main

sys.exit(main())
