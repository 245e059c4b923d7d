"""`make screenshots`: the README's pictures of `benchtape view`, from stores recorded for real
(tests/viewer/scenes.py), taken in Debian's Chromium: the session page (its subagent opened)
and an evaluation's matrix, plus the index and a grading diff.

    python tests/viewer/screenshots.py [FOLDER]     (default docs/img)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # evalkit
sys.path.insert(0, str(HERE.parents[1]))

import scenes
from browserkit import CHROMIUM, CHROMIUM_ARGS

WIDTH, HEIGHT = 1280, 860


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else scenes.ROOT / "docs" / "img")
    out.mkdir(parents=True, exist_ok=True)
    if CHROMIUM is None:
        print("no chromium: apt-get install -y chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from benchtape.view.serving import running
    from benchtape.view.viewer import Viewer

    with tempfile.TemporaryDirectory(prefix="benchtape-shots-") as tmp:
        rich = scenes.rich(Path(tmp) / "rich")
        evaluated = scenes.evaluation(Path(tmp) / "evaluation")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, chromium_sandbox=False)
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
            with running(Viewer(rich.db, rich.root)) as base:
                page.goto(base + "/")
                page.wait_for_selector("#live.on")
                page.screenshot(path=out / "view-index.png")
                page.goto(base + "/session/latest")
                page.locator("details.changes > summary").click()  # folded: the timeline in view
                page.locator("details.subagent > summary").click()
                page.keyboard.press("j")
                page.keyboard.press("j")
                page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
                page.set_viewport_size({"width": WIDTH, "height": 1180})
                page.screenshot(path=out / "view-session.png")
                page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
            with running(Viewer(evaluated.db, evaluated.root)) as base:
                page.goto(base + "/evaluation/base")
                page.screenshot(path=out / "view-evaluation.png")
                page.goto(base + "/gradings")
                page.get_by_role("button", name="diff A → B").click()
                page.wait_for_selector("tr.change.flip")
                page.screenshot(path=out / "view-grading-diff.png")
            browser.close()
    for name in ("view-index.png", "view-session.png", "view-evaluation.png", "view-grading-diff.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
