"""``python -m engrammar.evals [--llm openai] [--fixture NAME] [-v] [--json]``: see
``evals._cli``."""

from engrammar.evals._cli import main

if __name__ == "__main__":
    main(prog_name="python -m engrammar.evals")
