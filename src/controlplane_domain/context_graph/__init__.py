"""The context graph: an organization's nodes and typed, directed edges, their neighbours and shortest paths."""
