"""Self-test of devtools_pipe.py against the local Chromium.

    /usr/bin/python3 tests/report/devtools_pipe_selftest.py

Exit 0 when every check passes, 77 (skipped) when no Chromium is installed.
"""

import base64
import hashlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from devtools_pipe import Browser, DevToolsError  # noqa: E402

SCRIPT = """
window.keys = [];
document.addEventListener('keydown', e => window.keys.push(e.key));
document.getElementById('b').addEventListener('click', () => { document.title = 'clicked'; });
window.ready = true;
"""
PAGE = """<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src '{hash}'">
<title>start</title></head><body>
<button id="b">press</button> <input id="i">
<script>{script}</script></body></html>"""


def sha256_source(script):
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok:", what)


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path, "file://" + path


def main():
    missing = Browser.missing_status()
    if missing is not None:
        return missing
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, Browser() as browser:
        print("chromium:", browser.version["product"], "at", browser.binary)

        # A page whose only script is allowed by its CSP hash: one request, no errors, input works.
        _, url = write(tmp, "good.html", PAGE.format(hash=sha256_source(SCRIPT), script=SCRIPT))
        page = browser.new_page()
        page.navigate(url, wait_for="window.ready")
        check(page.requests == [url], f"exactly one request, the file itself: {page.requests}")
        check(page.errors == [], f"no errors: {page.errors}")
        x, y = page.center_of("#b")
        page.click(x, y)
        check(page.evaluate("document.title") == "clicked", "a click on the button set the title")
        check(page.center_of("#missing") is None, "center_of a missing element is None")
        page.key("/")
        page.key("Escape")
        page.key("ArrowDown")
        check(page.evaluate("window.keys") == ["/", "Escape", "ArrowDown"],
              "keys '/', Escape and ArrowDown reach the page")
        page.click(*page.center_of("#i"))
        page.key("a")
        page.type_text("bc é")
        check(page.evaluate("document.getElementById('i').value") == "abc é",
              "typing into the focused input")
        png = os.path.join(tmp, "shot.png")
        page.screenshot(png)
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the screenshot is a PNG")
        try:
            page.wait_for("window.never", timeout=0.3)
            check(False, "wait_for times out")
        except DevToolsError as e:
            check("window.never" in str(e), "a wait_for timeout names its expression")

        # The same page under a CSP that does not allow its script: the refusal is an error.
        _, url = write(tmp, "csp.html", PAGE.format(hash="sha256-AAAA", script=SCRIPT))
        page = browser.new_page()
        page.navigate(url)
        check(page.evaluate("window.ready === undefined"), "the script did not run")
        # Chromium 156 says "Executing inline script violates the following Content Security
        # Policy directive ..." (older ones "Refused to execute inline script ..."), with the hash.
        check(any("inline script" in e and "Content Security Policy" in e and
                  sha256_source(SCRIPT) in e for e in page.errors),
              f"the CSP refusal is reported, with the script's hash: {page.errors}")

        # A page that throws, and one that logs console.error.
        _, url = write(tmp, "throw.html", "<script>console.error('logged');"
                       "throw new Error('boom')</script>")
        page = browser.new_page()
        page.navigate(url)
        page.evaluate("1")  # a round trip, so the events sent before it are in
        check(any("boom" in e for e in page.errors), f"the exception is reported: {page.errors}")
        check("logged" in page.errors and "error: logged" in page.console,
              "console.error is an error and a console message")
        try:
            page.evaluate("undefinedName.x")
            check(False, "evaluate raises")
        except DevToolsError as e:
            check("undefinedName" in str(e), "evaluate raises on an exception, with its text")
    check(browser.proc is None and not os.path.exists(browser.profile),
          "chromium is gone and its profile removed")
    print(f"all checks passed in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
