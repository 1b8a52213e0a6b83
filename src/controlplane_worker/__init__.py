"""The reference worker (`controlplane worker`): registers, heartbeats, leases from a queue, runs agents and teams
against an OpenAI-compatible chat-completions endpoint, streams their output as events, completes, honours cancel.

`config` (its settings), `control_plane` (the calls to the service, tried again), `model` (the chat-completion
stream), `tasks` (one leased execution: its work, events and completion), `worker` (the loop: registration,
heartbeats, leases, stop signals)."""
