// agent-tui's web page: starts textual-serve's terminal (textual.js) once our own font is
// loaded, on a websocket to this same server (wherever a proxy serves it), with a font size that
// gives 80 columns where the window allows it and stays readable on a phone (never under 11 px:
// a 390 px phone gets 59 columns, the dashboard's narrow layout).
"use strict";
(function () {
  const COLUMNS = 80;
  const ADVANCE = 0.6; // Roboto Mono's advance width, in ems
  const LARGEST = 16;
  const SMALLEST = 11; // readable on a phone without zooming

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

  const start = window.onload; // textual.js's own start
  window.onload = null;
  window.addEventListener("load", async function () {
    const size = fontSize();
    const terminal = document.getElementById("terminal");
    terminal.dataset.sessionWebsocketUrl = websocketUrl();
    terminal.dataset.fontSize = String(size);
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
