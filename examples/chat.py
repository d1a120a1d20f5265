"""A chat that remembers, on the ``openai`` SDK, against any OpenAI-compatible server.

Each turn: compile the prompt from memory, call the model, record the whole turn once the
reply is in (a failed call records nothing, so the log never keeps a question with no
answer), observe the reply (its "Decision:"/"Constraint:"/"Open:" lines become memories
at once). Run the nightly jobs (``engram jobs run nightly``) to extract the rest.

    MEMORY_LLM_BASE_URL=http://localhost:11434/v1 MEMORY_LLM_MODEL=llama3.2 \\
        python examples/chat.py --user u1 --chat c1

The base URL, model and key come from the MEMORY_LLM_* settings (or the options below);
with no base URL the SDK talks to OpenAI. One line is one turn; end with an empty input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

import openai

from engrammar import Client, Settings

SYSTEM = "You are a warm, concise companion. Use what you remember; never invent memories."


def turn(client: Client, model: openai.OpenAI, model_name: str, user_id: str, chat_id: str,
         message: str) -> str:
    """One turn of the app, start to end; returns the model's reply."""
    # 1. The prompt: system, memory block, summaries, the recent window, the message last.
    compiled = client.compile(user_id, chat_id, message, system=SYSTEM)
    # 2. The model, on the compiled messages as they are (compile put the message last).
    completion = model.chat.completions.create(model=model_name,
                                               messages=compiled.messages)  # type: ignore[arg-type]
    reply = completion.choices[0].message.content or "(no reply)"
    # 3. The whole turn goes into the log at once, only now that it is complete: if the
    # call above failed, nothing was recorded. 4. Its Decision:/Open: lines into memory.
    client.record_turn(user_id, chat_id, message, reply)
    client.observe(user_id, chat_id, reply)
    return reply


def run(client: Client, model: openai.OpenAI, model_name: str, user_id: str, chat_id: str,
        lines: Iterable[str]) -> list[str]:
    replies = []
    for line in lines:
        if not line.strip():
            break
        reply = turn(client, model, model_name, user_id, chat_id, line.strip())
        print(f"assistant> {reply}", flush=True)
        replies.append(reply)
    return replies


def main(argv: list[str] | None = None) -> None:
    settings = Settings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", default="example-user")
    parser.add_argument("--chat", default="example-chat")
    parser.add_argument("--base-url", default=settings.llm_base_url)
    parser.add_argument("--model", default=settings.llm_model)
    args = parser.parse_args(argv)
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "unused"
    model = openai.OpenAI(base_url=args.base_url, api_key=key)
    with Client.open(settings) as client:
        run(client, model, args.model, args.user, args.chat, sys.stdin)
    model.close()


if __name__ == "__main__":
    main()
