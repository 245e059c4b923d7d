"""The `judges:` and `models:` blocks: short and long forms, keys only by their variable's
name, inference from a model's prefix, the default, and every refusal naming its line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.core.judgments import JudgeError
from benchtape.spec.bench import load_bench
from benchtape.spec.judge_config import BUILTINS, JudgesConfig, canonical_model, infer_provider, parse_modelspec

SCENARIOS = """
scenarios:
  - name: one
    prompt: hi
    checks:
      - {type: llm-rubric, value: says hi}
"""


def load(tmp_path: Path, head: str, scenarios: str = SCENARIOS):
    p = tmp_path / "bench.yaml"
    p.write_text("harness: mock\n" + textwrap.dedent(head).lstrip() + scenarios)
    return load_bench(p)


def refused(tmp_path: Path, head: str, scenarios: str = SCENARIOS) -> BadInput:
    with pytest.raises(BadInput) as info:
        load(tmp_path, head, scenarios)
    return info.value


def test_short_forms(tmp_path):
    b = load(tmp_path, """
        judges:
          providers:
            fast: haiku-4.5
            ds: deepseek/deepseek-chat
            oa: openai
            gem: gemini-2.5-pro
        """)
    p = b.judges.providers
    assert (p["fast"].transport, p["fast"].model, p["fast"].api_key_env) == ("anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY")
    assert (p["ds"].transport, p["ds"].model, p["ds"].endpoint, p["ds"].api_key_env) == ("openai", "deepseek-chat", BUILTINS["deepseek"].endpoint, "DEEPSEEK_API_KEY")
    assert (p["oa"].model, p["oa"].api_key_env) == (BUILTINS["openai"].model, "OPENAI_API_KEY")
    assert (p["gem"].transport, p["gem"].api_key_env) == ("openai", "GEMINI_API_KEY")
    assert b.judges.default is None and b.judges.default_provider({"ANTHROPIC_API_KEY": "k"}).id == "fast"  # the first provider wins
    assert b.judges.default_provider({"DEEPSEEK_API_KEY": "k"}).id == "ds"  # ... whose key is set
    assert p["ds"].line == 5  # each provider knows its line


def test_long_form_with_aliases_params_and_limits(tmp_path):
    b = load(tmp_path, """
        judges:
          default: mine
          providers:
            mine:
              type: openai
              base_url: http://127.0.0.1:8000/v1/
              model: qwen2.5
              api_key_env: LOCAL_KEY
              params: {temperature: 0, max_tokens: 300}
              concurrency: 8
              timeout: 30s
              retries: 1
              price: {input: 0, output: 0}
            cc: {provider: claude-code, params: {effort: high}}
        """)
    mine, cc = b.judges.providers["mine"], b.judges.providers["cc"]
    assert (mine.transport, mine.endpoint, mine.model, mine.api_key_env) == ("openai", "http://127.0.0.1:8000/v1", "qwen2.5", "LOCAL_KEY")
    assert dict(mine.params) == {"temperature": 0.0, "max_tokens": 300} and (mine.concurrency, mine.timeout, mine.retries) == (8, 30.0, 1)
    assert mine.price == {"input": 0.0, "output": 0.0}
    assert (cc.transport, cc.endpoint, cc.api_key_env, dict(cc.params)) == ("claude-code", None, None, {"effort": "high"})
    assert b.judges.default == "mine" and b.judges.explicit_default


def test_a_bare_model_spec_default_declares_its_own_judge(tmp_path):
    b = load(tmp_path, "judges: {default: sonnet-4.5}\n")
    spec = b.judges.providers["sonnet-4.5"]
    assert (spec.transport, spec.model) == ("anthropic", "claude-sonnet-4-5") and b.judges.explicit_default


def test_models_block_names_models_and_params_resolve_to_them(tmp_path):
    b = load(
        tmp_path,
        """
        params: {judge_model: fast}
        models:
          fast: haiku-4.5
          local: {endpoint: "http://127.0.0.1:9/v1", model: llama3}
        judges: {default: local}
        """,
        """
scenarios:
  - name: one
    prompt: "use {{judge_model}}"
    checks:
      - {type: llm-rubric, value: x, args: {model: fast}}
""",
    )
    assert b.models["fast"].model == "claude-haiku-4-5" and b.models["local"].api_key_env is None
    assert b.scenarios[0].prompt == "use claude-haiku-4-5"  # a param naming a models: key is that model
    assert b.judges.default == "local" and b.judges.providers["local"].model == "llama3"


def test_no_block_means_the_built_ins_by_their_keys():
    config = JudgesConfig()
    assert config.default_provider({"ANTHROPIC_API_KEY": "k"}).id == "anthropic"
    assert config.default_provider({"OPENAI_API_KEY": "k"}).id == "openai"
    with pytest.raises(JudgeError, match="no judges: block and ANTHROPIC_API_KEY is not set"):
        config.default_provider({})


def test_unset_keys_are_skipped_unless_it_is_the_explicit_default(tmp_path):
    b = load(tmp_path, """
        judges:
          providers:
            a: {transport: anthropic, model: claude-haiku-4-5}
            b: {transport: openai, model: gpt-4.1-mini, api_key_env: B_KEY}
        """)
    assert b.judges.default_provider({"B_KEY": "k"}).id == "b"  # a has no key: skipped
    explicit = load(tmp_path, """
        judges:
          default: a
          providers:
            a: {transport: anthropic, model: claude-haiku-4-5}
            b: {transport: openai, model: gpt-4.1-mini, api_key_env: B_KEY}
        """)
    with pytest.raises(JudgeError) as info:
        explicit.judges.default_provider({"B_KEY": "k"})
    assert "judges.default is 'a', whose key variable ANTHROPIC_API_KEY is not set" in str(info.value)
    assert f"{tmp_path / 'bench.yaml'}:3" in str(info.value)


@pytest.mark.parametrize(
    "head,what,line",
    [
        ("judges: {providers: {x: {transport: grpc, model: m}}}\n", "transport 'grpc' is not one of anthropic, openai, claude-code", 2),
        ("judges: {providers: {x: {api_key: sk-123, model: gpt-4o}}}\n", "`api_key:` would put a secret in the YAML", 2),
        ("judges: {providers: {x: {model: gpt-4o, api_key_env: sk-live-123}}}\n", "api_key_env must name an environment variable", 2),
        ("judges: {providers: {x: llama3}}\n", "cannot tell which provider serves the model 'llama3'", 2),
        ("judges: {providers: {x: {endpoint: 'ftp://h', model: m}}}\n", "is not an http:// or https:// URL", 2),
        ("judges: {providers: {x: {endpoint: 'http://h/v1'}}}\n", "no `model:`", 2),
        ("judges: {providers: {x: {model: gpt-4o, colour: red}}}\n", "unknown key `colour`", 2),
        ("judges: {default: nobody-knows}\n", "judges.default 'nobody-knows' is not a provider", 2),
        ("judges: {fallback: x}\n", "unknown key `fallback` in `judges:`", 2),
        ("judges: {providers: {x: {provider: claude-code, endpoint: 'http://h'}}}\n", "a claude-code judge is the local `claude` login", 2),
        ("judges: {providers: {x: {model: gpt-4o, params: {temperature: 9}}}}\n", "params.temperature must be a number from 0 to 2", 2),
    ],
)
def test_refusals_name_the_file_and_line(tmp_path, head, what, line):
    err = refused(tmp_path, head)
    assert what in err.what and err.file == str(tmp_path / "bench.yaml") and err.line == line


def test_a_check_naming_an_unknown_provider_is_refused_at_its_line(tmp_path):
    err = refused(
        tmp_path,
        "judges: {providers: {local: {endpoint: 'http://127.0.0.1:9/v1', model: m}}}\n",
        """
scenarios:
  - name: one
    prompt: hi
    checks:
      - type: any-of
        checks:
          - {type: bias, args: {judge: locl}}
""",
    )
    assert "check bias: args.judge 'locl' names no judge provider" in err.what
    assert err.line == 10 and "did you mean 'local'?" in err.fix


def test_a_built_in_provider_may_be_named_without_declaring_it(tmp_path):
    b = load(tmp_path, "", "\nscenarios:\n  - name: one\n    prompt: hi\n    checks: [{type: bias, args: {judge: openai}}]\n")
    assert b.judges is None


def test_model_names():
    assert canonical_model("haiku-4.5") == "claude-haiku-4-5" and canonical_model("opus-4") == "claude-opus-4"
    assert canonical_model("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5-20250929"
    assert infer_provider("gpt-4o") == "openai" and infer_provider("Qwen-max") == "qwen" and infer_provider("llama3") is None
    assert parse_modelspec("openrouter/anthropic/claude-3.5-sonnet").model == "anthropic/claude-3.5-sonnet"
    with pytest.raises(ValueError, match="no model after the '/'"):
        parse_modelspec("deepseek/")
