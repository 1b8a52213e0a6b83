"""One controller per area; each decodes, calls one use case, encodes."""
