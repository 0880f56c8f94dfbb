"""Hosts and attached dashboards on NATS JetStream: agents that outlive the dashboard.

A host (`agent-tui serve`, or `agent-tui run --bus`) runs agents as the in-process dashboard
does, appends every event to its JSONL logs first, then publishes it on the bus; attached
dashboards read the stream, fold it with the same reducer as a local dashboard, and act through
request/reply on the host's control subject. `protocol` is the contract both sides share.
"""
