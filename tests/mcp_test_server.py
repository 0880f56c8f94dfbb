"""A real MCP server written with the `mcp` SDK's server side, for the tests.

`python mcp_test_server.py stdio` serves on stdin/stdout; `python mcp_test_server.py http` serves
streamable HTTP on a free loopback port and prints `http://127.0.0.1:PORT/mcp` on its first line;
`python mcp_test_server.py malformed` is a server written by hand on stdio whose one tool, `odd`,
answers with a result that is not a tool result (`content` is not a list).

Tools: `echo` (the server says it only reads), `count` (reports progress), `where` (its working
directory and one variable), `picture` (text and an image), `crash` (the process exits mid-call),
`hang` (starts a child process, writes both pids to the file `$MCP_TEST_PIDS`, then never answers).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("agent-tui-test")

# A 1x1 PNG.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf000000030101008d1d2a0a0000000049454e44ae426082"
)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count up to `steps`, reporting each step as progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted to {steps}"


@server.tool()
def where(variable: str) -> str:
    """The server's working directory and the value of one environment variable."""
    return f"cwd={os.getcwd()} {variable}={os.environ.get(variable, '<unset>')}"


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and an image."""
    return [TextContent(type="text", text="a red dot"), Image(data=_PNG, format="png").to_image_content()]


@server.tool()
def crash() -> str:
    """The process dies before it answers."""
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Start a child process, write both pids, and never answer."""
    child = subprocess.Popen(["sleep", "3600"])
    path = os.environ.get("MCP_TEST_PIDS")
    if path:
        with open(path + ".tmp", "w") as out:
            out.write(f"{os.getpid()} {child.pid}\n")
        os.replace(path + ".tmp", path)
    await anyio.sleep_forever()
    return "never"


def malformed() -> None:
    """JSON-RPC by hand: initialize, list one tool, answer its call with a broken result."""
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # a notification
        if method == "initialize":
            result: dict[str, object] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "malformed", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "odd", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": "not a list"}
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "malformed":
        malformed()
        return
    if mode == "stdio":
        server.run("stdio")
        return
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
