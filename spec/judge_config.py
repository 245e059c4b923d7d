"""The `judges:` and `models:` blocks: which models may judge, how to reach them, and with
which key (named by its environment variable, never written in YAML).

Loading checks only what the file says (keys, transports, URLs, that a check's
`args.judge` names a provider); whether a key is set is a fact of the machine that runs
the bench, so it is asked at run start (`JudgesConfig.default_provider(env)`), where a
provider whose key is unset is skipped, unless it is the explicit default, which is an
error naming the variable to set.

Forms, as madbench v0.23.0 writes them:
- short: a model spec (`haiku-4.5`: the provider is inferred from the model's prefix),
  `provider/model` (`deepseek/deepseek-chat`), or a bare provider key (`openai`);
- long: `{transport (alias type), endpoint (alias base_url), model, api_key_env,
  params: {temperature, max_tokens, effort}}`, plus benchtape's `provider` (a built-in
  to start from), `concurrency` (requests in flight, default 4), `timeout` (default
  "60s"), `retries` (default 4) and `price: {input, output}` (USD per million tokens,
  for a model the built-in price table does not know).
A long form with an `endpoint` and no `api_key_env` needs no key: a local
OpenAI-compatible server (Ollama, vLLM, llama.cpp) works by its base URL alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from benchtape.core.errors import BadInput, closest
from benchtape.core.judgments import JudgeError

TRANSPORTS = ("anthropic", "openai", "claude-code")
# The AI check types (checks/judge.py registers them; kept here as data so the loader can
# validate `args.judge` without importing the catalog).
JUDGE_TYPE_NAMES = (
    "llm-rubric", "factuality", "model-graded-closedqa", "g-eval", "answer-relevance", "context-faithfulness",
    "context-recall", "answer-relevancy", "faithfulness", "context-relevance", "context-precision",
    "prompt-alignment", "llm-tool-call-accuracy", "toxicity", "bias", "hallucination", "noise-sensitivity",
)
JUDGES_KEYS = {"default", "providers"}
PROVIDER_KEYS = {"transport", "endpoint", "model", "api_key_env", "params", "provider", "concurrency", "timeout", "retries", "price"}
PRICE_KEYS = {"input", "output"}
PROVIDER_ALIASES = {"type": "transport", "base_url": "endpoint"}
PARAM_KEYS = {"temperature", "max_tokens", "effort"}
SECRET_KEYS = ("api_key", "key", "token", "secret", "password", "authorization")
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 4
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Builtin:
    transport: str
    endpoint: str | None
    key_env: str | None
    model: str | None  # used when the provider is named by its key alone
    prefixes: tuple[str, ...] = ()


# The providers a bench may name without declaring them, in the order an undeclared
# default is looked for (the first whose key is set). OpenAI-compatible APIs ride the
# `openai` transport; claude-code is never chosen implicitly (it is the local login).
BUILTINS: dict[str, Builtin] = {
    "anthropic": Builtin("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "claude-haiku-4-5", ("claude-", "opus", "sonnet", "haiku")),
    "openai": Builtin("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4.1-mini", ("gpt-",)),
    "gemini": Builtin("openai", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", "gemini-2.5-flash", ("gemini-",)),
    "grok": Builtin("openai", "https://api.x.ai/v1", "XAI_API_KEY", "grok-3-mini", ("grok-",)),
    "glm": Builtin("openai", "https://api.z.ai/api/paas/v4", "ZAI_API_KEY", "glm-4.5", ("glm-",)),
    "minimax": Builtin("openai", "https://api.minimax.io/v1", "MINIMAX_API_KEY", "MiniMax-M1", ("minimax-",)),
    "kimi": Builtin("openai", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY", "kimi-k2-0905-preview", ("kimi-",)),
    "deepseek": Builtin("openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat", ("deepseek-",)),
    "mistral": Builtin("openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", "mistral-small-latest", ("mistral-",)),
    "qwen": Builtin("openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY", "qwen-plus", ("qwen-",)),
    "openrouter": Builtin("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", None),
    "ollama": Builtin("openai", "http://127.0.0.1:11434/v1", None, None),
    "claude-code": Builtin("claude-code", None, None, None),
}


@dataclass(frozen=True)
class ProviderSpec:
    """One way to reach a judge model. `api_key_env` None: no key is needed."""

    id: str
    transport: str
    model: str | None = None
    endpoint: str | None = None
    api_key_env: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    price: Mapping[str, float] | None = None
    line: int | None = None

    def key_missing(self, env: Mapping[str, str]) -> bool:
        return self.api_key_env is not None and not env.get(self.api_key_env)

    def to_dict(self) -> dict[str, Any]:
        """What a judgment records of its provider (a key's variable name, never a key)."""
        return {
            "id": self.id,
            "transport": self.transport,
            "model": self.model,
            "endpoint": self.endpoint,
            "api_key_env": self.api_key_env,
            "params": dict(self.params),
            "concurrency": self.concurrency,
            "timeout": self.timeout,
            "retries": self.retries,
            "price": dict(self.price) if self.price is not None else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProviderSpec:
        return cls(
            id=d["id"],
            transport=d["transport"],
            model=d.get("model"),
            endpoint=d.get("endpoint"),
            api_key_env=d.get("api_key_env"),
            params=dict(d.get("params") or {}),
            concurrency=int(d.get("concurrency") or DEFAULT_CONCURRENCY),
            timeout=float(d.get("timeout") or DEFAULT_TIMEOUT),
            retries=int(d["retries"] if d.get("retries") is not None else DEFAULT_RETRIES),
            price=dict(d["price"]) if d.get("price") is not None else None,
        )


class JudgeSetupError(JudgeError):
    """No judge can be used as configured on this machine (a run-start error, not a load error)."""


@dataclass(frozen=True)
class JudgesConfig:
    """The judges a bench may use. `providers` are the declared ones; the built-ins are
    always there by their key. `default` is the explicit default, a provider id (declared
    or built in); None: the first declared provider whose key is set (with no block, the
    first built-in whose key is set)."""

    providers: Mapping[str, ProviderSpec] = field(default_factory=dict)
    default: str | None = None
    explicit_default: bool = False
    models: Mapping[str, ProviderSpec] = field(default_factory=dict)
    file: str | None = None
    line: int | None = None

    def ids(self) -> list[str]:
        return list(self.providers) + [b for b in BUILTINS if b not in self.providers]

    def get(self, pid: str) -> ProviderSpec | None:
        if pid in self.providers:
            return self.providers[pid]
        if pid in BUILTINS:
            return builtin_spec(pid)
        return None

    def default_provider(self, env: Mapping[str, str]) -> ProviderSpec:
        """The judge a check uses when it names none. An explicit default whose key is unset
        is an error; otherwise providers whose key is unset are skipped."""
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        if self.default is not None:
            spec = self.get(self.default)
            if spec is None:  # the loader refuses this; a config built in code may not have
                raise JudgeSetupError(f"{where}judges.default {self.default!r} names no provider")
            if spec.key_missing(env):
                raise JudgeSetupError(f"{where}judges.default is {self.default!r}, whose key variable {spec.api_key_env} is not set: set it in the environment (keys never go in YAML), or choose another default")
            return spec
        # without a block, only a built-in with a key can be meant (never a local default port)
        candidates = list(self.providers.values()) if self.providers else [builtin_spec(b) for b, v in BUILTINS.items() if v.key_env]
        for spec in candidates:
            if not spec.key_missing(env):
                return spec
        if self.providers:
            names = ", ".join(f"{p.id} ({p.api_key_env})" for p in candidates)
            raise JudgeSetupError(f"{where}no judge provider has its key set: {names}; set one of those variables")
        raise JudgeSetupError("no judge provider: the bench has no judges: block and ANTHROPIC_API_KEY is not set; declare judges: (a local OpenAI-compatible endpoint needs no key) or set a provider's key")

    def provider(self, pid: str | None, env: Mapping[str, str]) -> ProviderSpec:
        """The provider a check names (None: the default); one whose key is unset is an error."""
        if pid is None:
            return self.default_provider(env)
        spec = self.get(pid)
        if spec is None:
            near = closest(pid, self.ids())
            raise JudgeSetupError(f"judge provider {pid!r} is not declared in judges.providers and is not built in" + (f" (did you mean {near!r}?)" if near else ""))
        if spec.key_missing(env):
            raise JudgeSetupError(f"judge provider {pid!r} needs {spec.api_key_env}, which is not set")
        return spec


def builtin_spec(pid: str, model: str | None = None) -> ProviderSpec:
    b = BUILTINS[pid]
    return ProviderSpec(id=pid, transport=b.transport, model=model or b.model, endpoint=b.endpoint, api_key_env=b.key_env)


def infer_provider(model: str) -> str | None:
    """The built-in provider a model id belongs to, by its prefix (`gpt-` → openai)."""
    low = model.lower()
    for pid, b in BUILTINS.items():
        if any(low.startswith(p) for p in b.prefixes):
            return pid
    return None


_SHORT_CLAUDE = re.compile(r"^(opus|sonnet|haiku)-(\d+)(?:[.-](\d+))?$")


def canonical_model(model: str) -> str:
    """madbench's short Claude names as API ids: `haiku-4.5` → `claude-haiku-4-5`; any other
    id is already canonical and passes unchanged."""
    m = _SHORT_CLAUDE.match(model)
    if not m:
        return model
    family, major, minor = m.groups()
    return f"claude-{family}-{major}" + (f"-{minor}" if minor else "")


def parse_modelspec(text: str, pid: str | None = None) -> ProviderSpec:
    """A short form: a provider key, `provider/model`, or a model whose prefix names its
    provider. Raises ValueError with what to write instead."""
    text = text.strip()
    if not text:
        raise ValueError("an empty model spec")
    if text in BUILTINS:
        return replace(builtin_spec(text), id=pid or text)
    head, sep, rest = text.partition("/")
    if sep and head in BUILTINS:
        if not rest:
            raise ValueError(f"{text!r} names the provider {head!r} but no model after the '/'")
        return replace(builtin_spec(head, rest), id=pid or text)
    inferred = infer_provider(text)
    if inferred is None:
        raise ValueError(
            f"cannot tell which provider serves the model {text!r} (known prefixes: opus, sonnet, haiku, claude-, gpt-, gemini-, grok-, glm-, minimax-, kimi-, deepseek-, mistral-, qwen-)"
        )
    return replace(builtin_spec(inferred, canonical_model(text)), id=pid or text)


# ---------------------------------------------------------------- loading


class _Block:
    """Parsing helpers bound to the bench loader (its `err`, `strict` and `mapping`)."""

    def __init__(self, loader: Any):
        self.ld = loader

    def provider(self, pid: str, value: Any, parent: Any, key: str, what: str) -> ProviderSpec:
        line = parent.line_of(key) if hasattr(parent, "line_of") else None
        if isinstance(value, str):
            try:
                return replace(parse_modelspec(value, pid), line=line)
            except ValueError as exc:
                raise self.ld.err(f"{what}: {exc}", parent, key, "write the long form {transport, endpoint, model}, or prefix the model with a provider: openrouter/<model>") from None
        if not isinstance(value, dict):
            raise self.ld.err(f"{what} must be a model spec (text) or a mapping, got {type(value).__name__}", parent, key)
        for secret in SECRET_KEYS:
            if secret in value:
                raise self.ld.err(f"{what}: `{secret}:` would put a secret in the YAML; keys never go in a bench file", value, secret, "name the environment variable that holds it: `api_key_env: MY_KEY`")
        node = self.ld.strict(self.ld.mapping(value, what, parent, key), PROVIDER_KEYS, what, PROVIDER_ALIASES)
        base_id = node.get("provider")
        if base_id is not None and base_id not in BUILTINS:
            near = closest(str(base_id), list(BUILTINS))
            raise self.ld.err(f"{what}: provider {base_id!r} is not a built-in provider", node, "provider", f"did you mean {near!r}?" if near else f"built in: {', '.join(BUILTINS)}")
        base_id = base_id or (pid if pid in BUILTINS else None)
        model = node.get("model")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise self.ld.err(f"{what}: `model:` must be a model id", node, "model")
        transport = node.get("transport")
        if transport is not None and transport not in TRANSPORTS:
            near = closest(str(transport), TRANSPORTS)
            raise self.ld.err(f"{what}: transport {transport!r} is not one of {', '.join(TRANSPORTS)}", node, "transport", f"did you mean {near!r}? (an OpenAI-compatible server uses `openai`)" if near else "an OpenAI-compatible server uses `transport: openai`")
        endpoint = node.get("endpoint")
        if endpoint is not None:
            if not isinstance(endpoint, str) or not re.match(r"^https?://[^/\s]+", endpoint):
                raise self.ld.err(f"{what}: endpoint {endpoint!r} is not an http:// or https:// URL", node, "endpoint")
            endpoint = endpoint.rstrip("/")
        if base_id is None and transport is None:
            inferred = infer_provider(model) if isinstance(model, str) else None
            if inferred is not None and endpoint is None:
                base_id = inferred
            elif endpoint is not None:
                transport = "openai"
            else:
                raise self.ld.err(f"{what}: say how to reach it: `transport:` ({', '.join(TRANSPORTS)}) with an `endpoint:`, or a model whose prefix names its provider", node)
        base = BUILTINS.get(base_id) if base_id else None
        transport = transport or (base.transport if base else "openai")
        if base is not None and base.transport != transport:
            base = None  # a different wire than the built-in's: nothing of it applies
        key_env = node.get("api_key_env")
        if key_env is not None:
            if not isinstance(key_env, str) or not _ENV_NAME.fullmatch(key_env):
                raise self.ld.err(f"{what}: api_key_env must name an environment variable (like MY_API_KEY), not hold a key", node, "api_key_env", "put the key in the environment, and its variable's name here")
        elif endpoint is None:
            key_env = base.key_env if base else {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}.get(transport)
        if transport == "claude-code":
            if endpoint is not None or key_env is not None:
                raise self.ld.err(f"{what}: a claude-code judge is the local `claude` login: it takes no endpoint and no api_key_env", node, "endpoint" if endpoint is not None else "api_key_env")
        elif endpoint is None:
            endpoint = base.endpoint if base else {"anthropic": BUILTINS["anthropic"].endpoint, "openai": BUILTINS["openai"].endpoint}[transport]
        if model is None:
            model = base.model if base else None
        if model is None and transport != "claude-code":
            raise self.ld.err(f"{what}: no `model:` (this provider has no default model)", node, None, "add `model: <id>`")
        params = self.params(node.get("params"), node, what)
        return ProviderSpec(
            id=pid,
            transport=transport,
            model=canonical_model(model) if model else None,
            endpoint=endpoint,
            api_key_env=key_env,
            params=params,
            concurrency=self.whole(node, "concurrency", DEFAULT_CONCURRENCY, what),
            timeout=self.duration(node, what),
            retries=self.whole(node, "retries", DEFAULT_RETRIES, what, minimum=0),
            price=self.price(node.get("price"), node, what),
            line=node.line,
        )

    def params(self, value: Any, parent: Any, what: str) -> dict[str, Any]:
        if value is None:
            return {}
        node = self.ld.strict(self.ld.mapping(value, f"{what}.params", parent, "params"), PARAM_KEYS, f"{what}.params")
        out: dict[str, Any] = {}
        t = node.get("temperature")
        if t is not None:
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2:
                raise self.ld.err(f"{what}.params.temperature must be a number from 0 to 2, got {t!r}", node, "temperature")
            out["temperature"] = float(t)
        m = node.get("max_tokens")
        if m is not None:
            if isinstance(m, bool) or not isinstance(m, int) or m <= 0:
                raise self.ld.err(f"{what}.params.max_tokens must be a positive whole number, got {m!r}", node, "max_tokens")
            out["max_tokens"] = m
        e = node.get("effort")
        if e is not None:
            out["effort"] = str(e)
        return out

    def price(self, value: Any, parent: Any, what: str) -> dict[str, float] | None:
        if value is None:
            return None
        node = self.ld.strict(self.ld.mapping(value, f"{what}.price", parent, "price"), PRICE_KEYS, f"{what}.price")
        out: dict[str, float] = {}
        for k in ("input", "output"):
            v = node.get(k, 0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise self.ld.err(f"{what}.price.{k} must be USD per million tokens (a number ≥ 0), got {v!r}", node, k)
            out[k] = float(v)
        return out

    def whole(self, node: Any, key: str, default: int, what: str, minimum: int = 1) -> int:
        v = node.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise self.ld.err(f"{what}.{key} must be a whole number ≥ {minimum}, got {v!r}", node, key)
        return v

    def duration(self, node: Any, what: str) -> float:
        from benchtape.spec.units import parse_duration

        v = node.get("timeout")
        if v is None:
            return DEFAULT_TIMEOUT
        seconds = parse_duration(v)
        if seconds is None or seconds <= 0:
            raise self.ld.err(f"{what}.timeout {v!r} is not a duration with a unit", node, "timeout", 'write e.g. `timeout: "60s"`')
        return seconds


def load_models(loader: Any, node: Any, top: Any) -> dict[str, ProviderSpec]:
    """`models:` — named model definitions, each a short or long model spec."""
    if node is None:
        return {}
    block = _Block(loader)
    models = loader.mapping(node, "`models:`", top, "models")
    return {str(name): block.provider(str(name), value, models, name, f"models.{name}") for name, value in models.items() if not str(name).startswith("x-")}


def load_judges(loader: Any, node: Any, top: Any, models: Mapping[str, ProviderSpec]) -> JudgesConfig | None:
    """`judges:` — `default` and `providers`. None when the bench has no block."""
    if node is None:
        return None
    block = _Block(loader)
    judges = loader.strict(loader.mapping(node, "`judges:`", top, "judges"), JUDGES_KEYS, "`judges:`")
    providers: dict[str, ProviderSpec] = {}
    raw = judges.get("providers")
    if raw is not None:
        raw = loader.mapping(raw, "`judges.providers:`", judges, "providers")
        for pid, value in raw.items():
            pid = str(pid)
            if pid.startswith("x-"):
                continue
            providers[pid] = block.provider(pid, value, raw, pid, f"judges.providers.{pid}")
    default = judges.get("default")
    line = judges.line_of("default") if "default" in judges else judges.line
    if default is None:
        return JudgesConfig(providers=providers, default=None, explicit_default=False, models=models, file=loader.file, line=line)
    if not isinstance(default, str) or not default.strip():
        raise loader.err("judges.default must be a provider id or a model spec", judges, "default")
    if default in providers or default in BUILTINS:
        return JudgesConfig(providers=providers, default=default, explicit_default=True, models=models, file=loader.file, line=line)
    if default in models:
        spec = replace(models[default], id=default)
    else:
        try:
            spec = replace(parse_modelspec(default), line=line)  # a bare model spec declares its own judge
        except ValueError as exc:
            declared = ", ".join(providers) or "none"
            raise loader.err(f"judges.default {default!r} is not a provider of judges.providers (declared: {declared}), a key of models:, or a model spec: {exc}", judges, "default") from None
    providers = {default: spec, **providers}
    return JudgesConfig(providers=providers, default=default, explicit_default=True, models=models, file=loader.file, line=line)


def check_judge_references(loader: Any, judges: JudgesConfig | None, models: Mapping[str, ProviderSpec], checks: Iterable[Any], judge_types: Iterable[str]) -> None:
    """A check whose `args.judge` names no provider is refused at load, naming the check."""
    config = judges or JudgesConfig(models=models)
    types = set(judge_types)
    for spec in _walk(checks):
        if spec.type not in types or not isinstance(spec.args, Mapping):
            continue
        pid = spec.args.get("judge")
        if isinstance(pid, str) and config.get(pid) is None:
            near = closest(pid, config.ids())
            declared = ", ".join(config.providers) or "none"
            raise BadInput(
                f"check {spec.type}: args.judge {pid!r} names no judge provider (declared in judges.providers: {declared}; built in: {', '.join(BUILTINS)})",
                file=spec.where.file or loader.file,
                line=spec.where.line,
                fix=f"did you mean {near!r}?" if near else "declare it under judges.providers, or use one of those",
            )


def _walk(checks: Iterable[Any]) -> Iterable[Any]:
    for spec in checks:
        yield spec
        yield from _walk(spec.checks)
