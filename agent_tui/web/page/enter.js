// agent-tui's entry page (the printed address, with ?token=): keeps the session value in this
// origin's localStorage (scheme, host and port: no server on another port can read it, as it
// would a cookie), under the dashboard's own path, then replaces the address with the
// dashboard's, so the token stays in neither the address bar nor the history.
"use strict";
(function () {
  function named(name) {
    return document.querySelector('meta[name="' + name + '"]').content;
  }

  const dashboard = new URL(named("agent-tui-dashboard"), window.location.href);
  try {
    window.localStorage.setItem("agent-tui-session " + dashboard.pathname, named("agent-tui-session"));
  } catch (error) {
    document.addEventListener("DOMContentLoaded", function () {
      const problem = document.getElementById("problem");
      problem.textContent =
        "This browser does not let the page keep data for " + window.location.host +
        " (site data is blocked), and the dashboard needs it: allow it, then open the address again.";
      problem.hidden = false;
    });
    return;
  }
  window.location.replace(dashboard.href);
})();
