"""What speaks to a model: the scripted model server and its scripts, and the judge
providers.

`models.script` loads a script (the `mock:` step vocabulary, plus what only a model can
do: parallel tool calls, per-turn usage); `models.server.serve` answers the Anthropic
Messages, OpenAI Responses and OpenAI Chat Completions APIs on loopback from it, so a
real Claude Code or Codex binary runs a whole session offline, with no key and no spend.
`models.providers` (transports), `models.pricing` and `models.judges` (the judge service:
resolution, per-provider concurrency, the live model catalog) ask real judge models.
"""
