// agent-tui's web page: starts textual-serve's terminal (textual.js) once our own font is
// loaded, on a websocket to this same server (wherever a proxy serves it), with a font size that
// gives 80 columns where the window allows it and stays readable on a phone (never under 11 px:
// a 390 px phone gets about 65 columns, the dashboard's narrow layout).
//
// The websocket shows the session value the entry page kept in this origin's localStorage, as a
// subprotocol (never in an address); without one the page says how to get one and opens
// nothing. A websocket closed with AT_CAP (the server's every allowed tab is open) shows the
// server's sentence in place of "ended".
//
// Once the websocket is open, the terminal takes the keyboard's focus, as a terminal window
// does: keys work without a click first (the app starts believing it has the focus: the
// dashboard's footer names its keys at once; see `AgentTuiBase.on_ready`).
"use strict";
(function () {
  const COLUMNS = 80;
  const ADVANCE = 0.6; // Roboto Mono's advance width, in ems
  const LARGEST = 16;
  const SMALLEST = 11; // readable on a phone without zooming
  const AT_CAP = 4029; // agent_tui.web.server.AT_CAP_CLOSE_CODE
  const APP_PROTOCOL = "agent-tui"; // agent_tui.web.access.APP_PROTOCOL
  const SESSION_PROTOCOL = "agent-tui.session."; // agent_tui.web.access.SESSION_PROTOCOL

  function fontSize() {
    const fits = Math.floor(window.innerWidth / (COLUMNS * ADVANCE));
    return Math.max(SMALLEST, Math.min(LARGEST, fits));
  }

  function websocketUrl() {
    const url = new URL("ws", window.location.href);
    url.protocol = window.location.protocol === "https:" ? "wss:" : "ws:";
    url.search = "";
    url.hash = "";
    return url.toString();
  }

  function keptSession() {
    const dashboard = new URL("./", window.location.href);
    try {
      return window.localStorage.getItem("agent-tui-session " + dashboard.pathname);
    } catch (error) {
      return null; // site data blocked: as good as none kept
    }
  }

  // textual.js opens its websocket itself (`new WebSocket(url)`): ours get the session value.
  function showSessionTo(address, session) {
    const Real = window.WebSocket;
    function Socket(url, protocols) {
      const ours = String(url).startsWith(address);
      const socket = ours
        ? new Real(url, [APP_PROTOCOL, SESSION_PROTOCOL + session])
        : protocols === undefined
          ? new Real(url)
          : new Real(url, protocols);
      if (ours) {
        socket.addEventListener("open", focusTerminal);
      }
      socket.addEventListener("close", function (event) {
        if (event.code === AT_CAP && event.reason) {
          document.querySelector(".ended p").textContent = event.reason;
          document.body.dataset.refused = "at-cap";
        }
      });
      return socket;
    }
    Socket.prototype = Real.prototype;
    for (const state of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) {
      Socket[state] = Real[state];
    }
    window.WebSocket = Socket;
  }

  // xterm.js takes keys from its hidden textarea; focusing it also tells the app it has focus.
  // textual.js sends that news only on an open socket, so this waits for the socket to open.
  function keysArea() {
    return document.querySelector("#terminal .xterm-helper-textarea");
  }

  function focusTerminal() {
    const keys = keysArea();
    if (keys !== null && document.activeElement !== keys) {
      keys.focus();
    }
  }

  const start = window.onload; // textual.js's own start
  window.onload = null;
  window.addEventListener("load", async function () {
    const session = keptSession();
    if (!session) {
      document.body.classList.add("-no-session");
      return;
    }
    const size = fontSize();
    const terminal = document.getElementById("terminal");
    const address = websocketUrl();
    terminal.dataset.sessionWebsocketUrl = address;
    terminal.dataset.fontSize = String(size);
    showSessionTo(address, session);
    document.getElementById("reconnect").addEventListener("click", function () {
      window.location.reload();
    });
    try {
      await document.fonts.load(size + 'px "Roboto Mono"');
    } catch (error) {
      // the fallback monospace font draws the same cells
    }
    document.body.dataset.fontSize = String(size);
    if (typeof start === "function") {
      start(new Event("load"));
    }
  });
})();
