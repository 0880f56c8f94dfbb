"""`agent-tui web`: the attached dashboard served to browsers.

Each browser tab is one `agent-tui attach` process (the thin client of the hosts on the bus),
drawn in the page by `textual-serve`'s terminal. The modules: `access_token` (the token kept in
the user's data dir), `access` (who may reach the server at all), `page` (our own page and the
local copies of its scripts and fonts: nothing is fetched from elsewhere), `tab_process` (the
app process behind one tab, which ends with the tab), `local_host` (the private bus and host
`agent-tui serve` runs on this machine, started when none runs) and `server` (all of them on
one aiohttp server).

Only this package imports `textual_serve` and `aiohttp` (tests/test_layers.py).
"""
