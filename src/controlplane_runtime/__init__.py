"""What the server runs beside its requests: the periodic tasks over the domain's use cases (the lease reaper,
the flushers, the job scheduler, the steps' timeouts, the idempotency purge) and the webhook dispatcher. The HTTP
app starts and stops them in its lifespan; nothing here knows HTTP."""
