"""What speaks to a model: the scripted model server and its scripts, and the judge
providers.

`benchtape.spec.script` loads a script (the `mock:` step vocabulary, plus what only a model can
do: parallel tool calls, per-turn usage); `benchtape.models.server.serve` answers the Anthropic
Messages, OpenAI Responses and OpenAI Chat Completions APIs on loopback from it, so a
real Claude Code or Codex binary runs a whole session offline, with no key and no spend.
`benchtape.models.providers` (transports), `benchtape.models.price_table` and `benchtape.models.judge_service` (the judge service:
resolution, per-provider concurrency, the live model catalog) ask real judge models.

Who may import it: recorder, replay (judges) and the app layer. It imports core, spec and
tools (a judge through a pinned agent CLI), never the adapters: a model knows no harness.
"""
