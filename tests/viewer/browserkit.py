"""Which Chromium the viewer's browser tests and screenshots drive, and how: Debian's own
binary (never a downloaded one), headless, quiet and offline."""

from __future__ import annotations

import os
import shutil

CHROMIUM = os.environ.get("BENCHTAPE_CHROMIUM") or next((p for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "") if p and os.access(p, os.X_OK)), None)
# Playwright passes most of these already; stated here so the browser stays quiet and offline:
# its own resolver answers every name but the loopback literal with "not found", so not even
# a DNS query leaves the machine (the viewer's URLs use 127.0.0.1).
CHROMIUM_ARGS = [
    "--no-sandbox",  # as root Chromium refuses its sandbox
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--no-pings",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
