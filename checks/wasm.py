"""`custom:wasm`: a grader compiled to WebAssembly (WASI preview 1), run inside benchtape by
wasmtime with madbench's ABI.

The module exports `memory`, `alloc(len) -> ptr`, `free(ptr, len)` and
`evaluate(ptr, len) -> i64`. benchtape writes the envelope (the same JSON `custom:exec`
gets) into memory from `alloc`, calls `evaluate`, and reads the Result JSON at the packed
answer `(ptr << 32) | len`, then frees both. A reactor's `_initialize` runs first.

The module is its own sandbox: no files (nothing is preopened), no network, no
environment, at most 64 MiB of memory (1024 pages) and 5 seconds of run time. That is
why it runs in benchtape's process at every sandbox level: there is nothing for a
container to confine. Its stdout/stderr are captured for error messages.
"""

from __future__ import annotations

import atexit
import hashlib
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchtape.checks.common import bench_relative, dumps_json, grader_file, loads_json, score_threshold, short, tail
from benchtape.checks.envelope import envelope, result_from_reply
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, PreflightContext, register
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

if TYPE_CHECKING:
    import wasmtime

TYPE = "custom:wasm"
TIME_LIMIT = 5.0
MEMORY_LIMIT = 64 * 1024 * 1024  # 1024 pages
EXPORTS = ("evaluate", "alloc", "free", "memory")
WASMTIME_INSTALL = "pip install wasmtime"
TICK = 0.05  # the epoch clock: a module is interrupted within one tick of its deadline


class WasmError(Exception):
    """The module could not be loaded or run as a grader; the message says why."""


class _Runtime:
    """One engine (epoch interruption on) and its compiled modules by content hash; a clock
    thread ticks the epoch only while some module is running."""

    def __init__(self) -> None:
        import wasmtime

        self.w = wasmtime
        config = wasmtime.Config()
        config.epoch_interruption = True
        self.engine = wasmtime.Engine(config)
        self.modules: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.running = 0
        self.clock: threading.Thread | None = None
        # Free the engine and modules while wasmtime's library is still loaded: left to the
        # garbage collector at interpreter exit, their finalizers run after it is torn down.
        atexit.register(self.close)

    def close(self) -> None:
        with self.lock:
            for module in self.modules.values():
                module.close()
            self.modules.clear()
            self.engine.close()

    def module(self, data: bytes) -> Any:
        key = hashlib.sha256(data).hexdigest()
        with self.lock:
            if key in self.modules:
                return self.modules[key]
        try:
            module = self.w.Module(self.engine, data)
        except self.w.WasmtimeError as exc:
            raise WasmError(f"it is not a valid WebAssembly module: {_first_line(exc)}") from None
        missing = [name for name in EXPORTS if name not in {e.name for e in module.exports}]
        if missing:
            raise WasmError(f"it does not export {', '.join(missing)} (a grader module exports evaluate, alloc, free and memory)")
        with self.lock:
            self.modules[key] = module
        return module

    def _tick(self) -> None:
        while True:
            time.sleep(TICK)
            with self.lock:
                if self.running == 0:
                    self.clock = None
                    return
            self.engine.increment_epoch()

    def run(self, data: bytes, payload: bytes) -> tuple[bytes, str]:
        """(the Result JSON bytes, the module's captured output)."""
        w = self.w
        module = self.module(data)
        with tempfile.TemporaryDirectory(prefix="benchtape-wasm-") as scratch:
            out = Path(scratch) / "out.txt"
            store = w.Store(self.engine)
            store.set_limits(memory_size=MEMORY_LIMIT)
            store.set_epoch_deadline(int(TIME_LIMIT / TICK) + 1)
            wasi = w.WasiConfig()
            wasi.stdout_file = str(out)
            wasi.stderr_file = str(out)
            store.set_wasi(wasi)
            linker = w.Linker(self.engine)
            linker.define_wasi()
            with self.lock:
                self.running += 1
                if self.clock is None:
                    self.clock = threading.Thread(target=self._tick, name="benchtape-wasm-clock", daemon=True)
                    self.clock.start()
            try:
                return self._call(store, linker, module, payload), _read(out)
            except w.Trap as exc:
                log = _read(out)
                if "interrupt" in str(exc).lower():
                    raise WasmError(f"it ran past the {TIME_LIMIT:g} s limit" + (f"; its output: {tail(log, 500)}" if log else "")) from None
                raise WasmError(f"it trapped: {_first_line(exc)}" + (f"; its output: {tail(log, 500)}" if log else "")) from None
            except w.WasmtimeError as exc:
                raise WasmError(f"it could not run: {_first_line(exc)}") from None
            finally:
                with self.lock:
                    self.running -= 1

    def _call(self, store: wasmtime.Store, linker: Any, module: Any, payload: bytes) -> bytes:
        instance = linker.instantiate(store, module)
        exports = instance.exports(store)
        if "_initialize" in exports:
            exports["_initialize"](store)
        memory, alloc, free, evaluate = exports["memory"], exports["alloc"], exports["free"], exports["evaluate"]
        ptr = alloc(store, len(payload))
        if not isinstance(ptr, int) or ptr < 0 or ptr + len(payload) > memory.data_len(store):
            raise WasmError(f"alloc({len(payload)}) returned {ptr!r}, which is not room in its memory")
        memory.write(store, payload, ptr)
        packed = evaluate(store, ptr, len(payload))
        if not isinstance(packed, int):
            raise WasmError(f"evaluate returned {packed!r}, not the packed i64 (ptr << 32) | len")
        packed &= 0xFFFFFFFFFFFFFFFF
        out_ptr, out_len = packed >> 32, packed & 0xFFFFFFFF
        if out_ptr + out_len > memory.data_len(store):
            raise WasmError(f"evaluate's answer (ptr {out_ptr}, len {out_len}) lies outside its memory")
        result = bytes(memory.read(store, out_ptr, out_ptr + out_len))
        _free(store, free, ptr, len(payload))
        _free(store, free, out_ptr, out_len)
        return result


def _free(store: wasmtime.Store, free: Any, ptr: int, length: int) -> None:
    """`free(ptr, len)`, or `free(ptr)` for a module whose free takes only the pointer."""
    params = len(free.type(store).params)
    free(store, ptr, length) if params >= 2 else free(store, ptr)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _first_line(exc: Exception) -> str:
    """The line of a wasmtime error that says what happened (its first line is often only
    "error while executing at wasm backtrace:")."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    telling = [ln for ln in lines if "wasm trap" in ln or "exceeds" in ln or "limit" in ln]
    pick = telling[-1] if telling else (lines[-1] if lines else type(exc).__name__)
    return short(pick, 300)


_RUNTIME: _Runtime | None = None
_RUNTIME_LOCK = threading.Lock()


def runtime() -> _Runtime:
    global _RUNTIME
    with _RUNTIME_LOCK:
        if _RUNTIME is None:
            _RUNTIME = _Runtime()
        return _RUNTIME


def wasmtime_missing() -> bool:
    try:
        import wasmtime  # noqa: F401
    except ImportError:
        return True
    return False


def _path_of(spec: CheckSpec) -> str:
    path = grader_file(spec, TYPE, ".wasm")
    if path is None:
        raise CheckConfigError(f"{TYPE}: the module is required: `value: ./grader.wasm`, or `type: custom:wasm:./grader.wasm`")
    return path


def wasm_check(spec: CheckSpec) -> Evaluator:
    path = _path_of(spec)
    threshold = score_threshold(spec, None)
    where = f" ({spec.where})" if spec.where.file else ""

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        full = bench_relative(path, ctx.bench_dir)
        if full is None:
            return Result.error(f"{TYPE}{where}: {path} is relative, but no bench directory is known to resolve it against")
        if not full.is_file():
            return Result.error(f"{TYPE}{where}: module {full} does not exist")
        if wasmtime_missing():
            return Result.error(f"{TYPE}{where}: the WebAssembly runtime is not installed: {WASMTIME_INSTALL}")
        payload = dumps_json(envelope(session, spec, ctx))
        try:
            answer, log = runtime().run(full.read_bytes(), payload)
        except WasmError as exc:
            return Result.error(f"{TYPE}{where}: {full}: {exc}")
        try:
            reply = loads_json(answer.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return Result.error(f"{TYPE}{where}: {full}: evaluate's answer is not JSON: {short(answer.decode('utf-8', 'replace'), 300)!r}", {"output_tail": tail(log)})
        return result_from_reply(reply, TYPE, threshold)

    return evaluate


def preflight(spec: CheckSpec, pf: PreflightContext) -> list[str]:
    """The runtime installed, the module present, valid, and exporting the ABI."""
    try:
        path = _path_of(spec)
    except CheckConfigError as exc:
        return [str(exc)]
    full = bench_relative(path, pf.bench_dir)
    if full is None or not full.is_file():
        return [f"{TYPE}: module {full or path} does not exist (a path is relative to the bench file)"]
    if wasmtime_missing():
        return [f"{TYPE} runs modules with wasmtime, which is not installed: {WASMTIME_INSTALL}"]
    try:
        runtime().module(full.read_bytes())
    except WasmError as exc:
        return [f"{TYPE}: {full}: {exc}"]
    return []


register(
    TYPE,
    family="Custom",
    open_args=True,  # the envelope hands args to the grader
    summary="a WebAssembly (WASI preview 1) grader run by wasmtime: exports memory, alloc, free and evaluate(ptr, len) -> (ptr << 32) | len of the Result JSON; 5 s and 64 MiB, no files, no network",
    reads="the whole session (envelope)",
    args={
        "value": "a .wasm file relative to the bench file (or the type suffix custom:wasm:./grader.wasm) (required)",
        "threshold": "bar for a reply carrying only a score (default: above 0)",
    },
    example="type: custom:wasm\nvalue: graders/grade.wasm",
    errors=(
        "no module path, or a path that is not a .wasm file",
        "preflight: a missing module; a module that is not WebAssembly or lacks an export (names the missing ones)",
        "ERROR: a trap, more than 5 s, more than 64 MiB, an answer outside its memory or not JSON",
    ),
    kind="Code",
    prefix=True,
    preflight=preflight,
)(wasm_check)
