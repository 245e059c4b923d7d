"""The check catalog: each check a pure function of a Session (and, for exec-style checks,
a restored workspace handed to it). Nothing here touches the store, a sandbox or an adapter.

Who may import it: replay (grading builds and runs checks) and the app layer (preflight builds
every check before any spend). It imports the core and spec.
"""

from benchtape.checks.registry import CATALOG_VERSION, Check, CheckConfigError, CheckContext, CheckInfo, build, catalog, lookup, register, spec_hash

__all__ = ["CATALOG_VERSION", "Check", "CheckConfigError", "CheckContext", "CheckInfo", "build", "catalog", "lookup", "register", "spec_hash"]
