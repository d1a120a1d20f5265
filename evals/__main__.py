"""``python -m evals [--llm openai] [--fixture NAME] [-v] [--json]``: see ``evals.cli``."""

from evals.cli import main

if __name__ == "__main__":
    main(prog_name="python -m evals")
