"""A small, dependency-free client for Chromium's DevTools protocol over --remote-debugging-pipe.

Chromium started with --remote-debugging-pipe reads commands on its fd 3 and writes responses and
events on its fd 4; each message is one JSON object followed by a NUL byte. Commands are
{"id", "method", "params"} plus "sessionId" for a page target attached with flatten: true; a
response carries the same "id", an event carries "method" (and the "sessionId" of its page).

    with Browser() as browser:
        page = browser.new_page()
        page.navigate("file:///tmp/x.html", wait_for="window.ready")
        assert page.requests == ["file:///tmp/x.html"] and not page.errors
"""

import atexit
import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--remote-debugging-pipe", "--window-size=1280,900", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--metrics-recording-only", "--mute-audio", "--disable-dev-shm-usage"]

# key -> (code, windowsVirtualKeyCode, text sent with keyDown or None)
KEYS = {"Enter": ("Enter", 13, "\r"), "Escape": ("Escape", 27, None), "Tab": ("Tab", 9, None),
        "Backspace": ("Backspace", 8, None), "ArrowLeft": ("ArrowLeft", 37, None),
        "ArrowUp": ("ArrowUp", 38, None), "ArrowRight": ("ArrowRight", 39, None),
        "ArrowDown": ("ArrowDown", 40, None), " ": ("Space", 32, " ")}
PUNCTUATION = {";": ("Semicolon", 186), "=": ("Equal", 187), ",": ("Comma", 188),
               "-": ("Minus", 189), ".": ("Period", 190), "/": ("Slash", 191),
               "`": ("Backquote", 192), "[": ("BracketLeft", 219), "\\": ("Backslash", 220),
               "]": ("BracketRight", 221), "'": ("Quote", 222)}


class DevToolsError(Exception):
    pass


def _key_definition(key):
    """(key, code, windowsVirtualKeyCode, text, modifiers) for a named key or one character."""
    if key in KEYS:
        code, vk, text = KEYS[key]
        return key, code, vk, text, 0
    if len(key) != 1:
        raise ValueError(f"unknown key {key!r}")
    if key.isascii() and key.isalpha():
        return key, "Key" + key.upper(), ord(key.upper()), key, 8 if key.isupper() else 0
    if key.isascii() and key.isdigit():
        return key, "Digit" + key, ord(key), key, 0
    code, vk = PUNCTUATION.get(key, ("", 0))
    return key, code, vk, key, 0


class Browser:
    """One headless Chromium; a context manager. close() kills it and removes its profile."""

    @staticmethod
    def find_binary():
        candidates = [os.environ.get("VIN_CHROMIUM"), "/usr/bin/chromium"]
        candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")]
        for c in candidates:
            if c and os.path.isfile(c) and os.access(c, os.X_OK):
                return c
        return None

    @staticmethod
    def missing_status():
        """None where a browser is found; else the exit status a test without one ends with,
        its reason printed: 77 (skipped, CTest's SKIP_RETURN_CODE), or 1 under
        VIN_REQUIRE_BROWSER=1 (scripts/test.sh on Debian 12, where the set-up installs it)."""
        if Browser.find_binary():
            return None
        if os.environ.get("VIN_REQUIRE_BROWSER") == "1":
            print("no chromium, and VIN_REQUIRE_BROWSER=1: scripts/setup.sh installs it")
            return 1
        print("skipped: no chromium (VIN_CHROMIUM=PATH names one; VIN_REQUIRE_BROWSER=1 makes "
              "this a failure)")
        return 77

    def __init__(self, binary=None, timeout=30):
        self.binary = binary or self.find_binary()
        if not self.binary:
            raise DevToolsError("no chromium found (set VIN_CHROMIUM)")
        self.timeout = timeout
        self.proc = None
        self.events = []  # browser-level events (no sessionId)
        self._pages = {}  # sessionId -> Page
        self._next_id = 0
        self._buffer = b""
        self._responses = {}
        atexit.register(self.close)
        for headless in ("--headless=new", "--headless"):
            self._launch(headless)
            try:
                self.version = self.send("Browser.getVersion")
                return
            except DevToolsError:
                exited = self.proc.poll() is not None
                self.close()
                if not exited or headless == "--headless":
                    raise

    def _launch(self, headless):
        self.profile = tempfile.mkdtemp(prefix="vin-chromium-")
        self._log = open(os.path.join(self.profile, "chromium.log"), "w+b")
        cmd_read, self._cmd_write = os.pipe()  # we write commands, chromium reads them on fd 3
        self._resp_read, resp_write = os.pipe()  # chromium writes on fd 4, we read

        def onto_3_and_4():  # in the child: move the pipe ends onto 3 and 4 (no clobbering)
            a = fcntl.fcntl(cmd_read, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(resp_write, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [self.binary, headless, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        # Fds 3 and 4 are open here (the pipes took the lowest free fds), as pass_fds requires.
        try:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=self._log, pass_fds=(3, 4),
                                         preexec_fn=onto_3_and_4, start_new_session=True)
        except OSError:
            for fd in (self._cmd_write, self._resp_read):
                os.close(fd)
            self._log.close()
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        finally:
            os.close(cmd_read)
            os.close(resp_write)

    def stderr_tail(self, lines=15):
        try:
            self._log.flush()
            with open(self._log.name, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            return "\n".join(text.splitlines()[-lines:])
        except (OSError, ValueError, AttributeError):
            return "(no log)"

    def _fail(self, what):
        code = self.proc.poll() if self.proc else None
        state = f"chromium exited with {code}" if code is not None else "chromium still running"
        raise DevToolsError(f"{what} ({state}); last chromium output:\n{self.stderr_tail()}")

    def _read_one(self, deadline):
        """Read and dispatch messages until one arrives or the deadline passes; False on timeout."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not select.select([self._resp_read], [], [], left)[0]:
                return False
            chunk = os.read(self._resp_read, 1 << 20)
            if not chunk:
                self._fail("the DevTools pipe closed")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        msg = json.loads(raw)
        if "id" in msg:
            self._responses[msg["id"]] = msg
        elif msg.get("sessionId") in self._pages:
            self._pages[msg["sessionId"]]._on_event(msg["method"], msg.get("params", {}))
        else:
            self.events.append(msg)
        return True

    def pump(self, seconds):
        """Take in the events that arrive within `seconds`."""
        deadline = time.monotonic() + seconds
        while self._read_one(deadline):
            pass

    def wait_until(self, condition, timeout, what):
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not condition():
            if not self._read_one(deadline) and not condition():
                self._fail(f"timed out waiting for {what}")

    def send(self, method, params=None, session_id=None, timeout=None):
        if self.proc is None:
            raise DevToolsError("the browser is closed")
        self._next_id += 1
        msg_id = self._next_id
        msg = {"id": msg_id, "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._cmd_write, data):]
        except OSError as e:
            self._fail(f"writing {method} failed: {e}")
        self.wait_until(lambda: msg_id in self._responses, timeout, f"the response to {method}")
        response = self._responses.pop(msg_id)
        if "error" in response:
            raise DevToolsError(f"{method}: {response['error'].get('message')} "
                                f"{response['error'].get('data', '')}".rstrip())
        return response.get("result", {})

    def new_page(self, width=1280, height=900):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, target, session["sessionId"])
        self._pages[page.session_id] = page
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(domain + ".enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        return page

    def close(self):
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        try:
            os.write(self._cmd_write, b'{"id":0,"method":"Browser.close"}\0')
            proc.wait(timeout=3)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:  # the whole group: chromium's zygote, renderers and gpu process too
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for fd in (self._cmd_write, self._resp_read):
            os.close(fd)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    """One tab, attached with flatten: true; collects its requests, errors and console."""

    def __init__(self, browser, target_id, session_id):
        self.browser, self.target_id, self.session_id = browser, target_id, session_id
        self.requests = []  # URL of every Network.requestWillBeSent
        self.errors = []  # exceptions, console.error, Log entries of level error (CSP refusals)
        self.console = []  # "type: text" of every console API call
        self.events = []  # every (method, params) seen for this page
        self._loads = 0

    def send(self, method, params=None, timeout=None):
        return self.browser.send(method, params, self.session_id, timeout)

    def _on_event(self, method, params):
        self.events.append((method, params))
        if method == "Page.loadEventFired":
            self._loads += 1
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            self.errors.append(d.get("exception", {}).get("description") or d.get("text", ""))
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.console.append(f"{params['type']}: {text}")
            if params["type"] in ("error", "assert"):
                self.errors.append(text)
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"])

    def navigate(self, url, wait_for=None, timeout=30):
        loads = self._loads
        result = self.send("Page.navigate", {"url": url}, timeout)
        if result.get("errorText"):
            raise DevToolsError(f"navigating to {url}: {result['errorText']}")
        self.browser.wait_until(lambda: self._loads > loads, timeout, f"the load of {url}")
        if wait_for:
            self.wait_for(wait_for, timeout)

    def wait_for(self, expression, timeout=30):
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"!!({expression})"):
            if time.monotonic() > deadline:
                raise DevToolsError(f"timed out waiting for {expression!r} to be true")
            self.browser.pump(0.05)

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            raise DevToolsError(f"evaluating {expression!r}: "
                                f"{d.get('exception', {}).get('description') or d.get('text')}")
        return result["result"].get("value")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def center_of(self, selector):
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            " if (!e) return null; const r = e.getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        return tuple(box) if box else None

    def mouse_move(self, x, y):
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def click(self, x, y):
        self.mouse_move(x, y)
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "buttons": buttons, "clickCount": 1})

    def key(self, key):
        key, code, vk, text, modifiers = _key_definition(key)
        down = {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": code,
                "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk, "modifiers": modifiers}
        if text:
            down.update(text=text, unmodifiedText=text.lower())
        self.send("Input.dispatchKeyEvent", down)
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                             "windowsVirtualKeyCode": vk,
                                             "nativeVirtualKeyCode": vk, "modifiers": modifiers})

    def type_text(self, text):
        self.send("Input.insertText", {"text": text})

    def clear_logs(self):
        self.requests.clear(), self.errors.clear(), self.console.clear(), self.events.clear()
