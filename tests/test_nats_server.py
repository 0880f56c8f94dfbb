"""The bus's tests have a real JetStream server: it starts, takes a stream, and comes back after
a kill with what it stored."""

from __future__ import annotations

import nats
import pytest
from support_nats import NatsServer, nats_server

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio


async def test_a_killed_server_comes_back_with_its_stream(nats_server: NatsServer) -> None:
    client = await nats.connect(nats_server.url)
    stream = client.jetstream()
    await stream.add_stream(name="probe", subjects=["probe.>"])
    ack = await stream.publish("probe.one", b"kept", headers={"Nats-Msg-Id": "one"})
    assert ack.seq == 1
    await client.close()

    nats_server.restart()

    client = await nats.connect(nats_server.url)
    stream = client.jetstream()
    again = await stream.publish("probe.one", b"kept", headers={"Nats-Msg-Id": "one"})
    assert again.duplicate
    message = await stream.get_msg("probe", 1)
    assert message.data == b"kept"
    await client.close()
