"""Webhooks: create (the secret shown once), list, get, patch, delete; the deliveries' log, a redelivery, a test
event. Admins write; every role reads."""

from __future__ import annotations

from typing import Any

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.webhooks import usecases
from controlplane_domain.webhooks.entity import Delivery as DomainDelivery
from controlplane_domain.webhooks.entity import DeliveryStatus
from controlplane_http.handlers import (
    ADMIN,
    Limit,
    NewestFirst,
    Offset,
    OldestFirst,
    caller,
    errors,
    page_of,
    page_request,
)
from controlplane_wire.configuration import given_fields
from controlplane_wire.webhooks import Delivery, DeliveryList, Webhook, WebhookCreate, WebhookList, WebhookUpdate


def webhook_out(view: usecases.WebhookView) -> Webhook:
    hook = view.webhook
    return Webhook(
        id=hook.id, organization_id=hook.organization_id, url=hook.url, events=list(hook.events),
        enabled=hook.enabled, description=hook.description, secret=view.secret,
        disabled_reason=hook.disabled_reason, failing_since=hook.failing_since, created_at=hook.created_at,
        updated_at=hook.updated_at,
    )  # fmt: skip


def delivery_out(delivery: DomainDelivery) -> Delivery:
    pending = delivery.status is DeliveryStatus.PENDING
    return Delivery(
        id=delivery.id, webhook_id=delivery.webhook_id, message_id=delivery.message_id,
        event_type=delivery.event_type, status=delivery.status, attempts=delivery.attempts,
        response_code=delivery.response_code, latency_ms=delivery.latency_ms, last_error=delivery.last_error,
        next_attempt_at=delivery.next_attempt_at if pending else None, first_attempt_at=delivery.first_attempt_at,
        last_attempt_at=delivery.last_attempt_at, redelivery_of=delivery.redelivery_of, payload=delivery.payload,
        created_at=delivery.created_at,
    )  # fmt: skip


class WebhookController(Controller):
    path = "/api/v1/webhooks"
    tags = ["webhooks"]

    @post("/", operation_id="createWebhook", status_code=201, opt=ADMIN, responses=errors(415, 503))
    async def create_webhook(self, data: JSONBody[WebhookCreate], scope: Scope) -> Webhook:
        ports, principal = caller(scope)
        command = usecases.CreateWebhook(
            url=data.url, events=tuple(data.events), enabled=data.enabled, description=data.description
        )
        return webhook_out(await usecases.create_webhook(ports, principal.organization_id, command))

    @get("/", operation_id="listWebhooks", responses=errors())
    async def list_webhooks(
        self, scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> WebhookList:
        ports, principal = caller(scope)
        page = await usecases.list_webhooks(ports, principal.organization_id, page_request(limit, offset, order))
        return page_of(WebhookList, page, webhook_out)

    @get("/{webhook_id:str}", operation_id="getWebhook", responses=errors(404))
    async def get_webhook(self, webhook_id: FromPath[str], scope: Scope) -> Webhook:
        ports, principal = caller(scope)
        return webhook_out(await usecases.get_webhook(ports, principal.organization_id, webhook_id))

    @patch("/{webhook_id:str}", operation_id="updateWebhook", opt=ADMIN, responses=errors(404, 415))
    async def update_webhook(self, webhook_id: FromPath[str], data: JSONBody[WebhookUpdate], scope: Scope) -> Webhook:
        ports, principal = caller(scope)
        fields: dict[str, Any] = given_fields(data)
        if "events" in fields:
            fields["events"] = tuple(fields["events"])
        command = usecases.UpdateWebhook(**fields)
        return webhook_out(await usecases.update_webhook(ports, principal.organization_id, webhook_id, command))

    @delete("/{webhook_id:str}", operation_id="deleteWebhook", status_code=204, opt=ADMIN, responses=errors(404))
    async def delete_webhook(self, webhook_id: FromPath[str], scope: Scope) -> None:
        ports, principal = caller(scope)
        await usecases.delete_webhook(ports, principal.organization_id, webhook_id)

    @get("/{webhook_id:str}/deliveries", operation_id="listWebhookDeliveries", responses=errors(404))
    async def list_deliveries(
        self, webhook_id: FromPath[str], scope: Scope, limit: Limit = 50, offset: Offset = 0, order: NewestFirst = None
    ) -> DeliveryList:
        ports, principal = caller(scope)
        page = await usecases.list_deliveries(
            ports, principal.organization_id, webhook_id, page_request(limit, offset, order, newest_first=True)
        )
        return page_of(DeliveryList, page, delivery_out)

    @post(
        "/{webhook_id:str}/deliveries/{delivery_id:str}/redeliver",
        operation_id="redeliverWebhookDelivery",
        status_code=202,
        opt=ADMIN,
        responses=errors(404, 409),
        description="Queues the event of a finished delivery again (same webhook-id and body): 202 with the new "
        "delivery; 409 while the delivery is pending or the webhook is disabled.",
    )
    async def redeliver(self, webhook_id: FromPath[str], delivery_id: FromPath[str], scope: Scope) -> Delivery:
        ports, principal = caller(scope)
        return delivery_out(await usecases.redeliver(ports, principal.organization_id, webhook_id, delivery_id))

    @post(
        "/{webhook_id:str}/test",
        operation_id="testWebhook",
        status_code=202,
        opt=ADMIN,
        responses=errors(404, 409),
        description="Queues a `webhook.test` event for this webhook: 202 with its delivery (409 when disabled).",
    )
    async def send_test(self, webhook_id: FromPath[str], scope: Scope) -> Delivery:
        ports, principal = caller(scope)
        return delivery_out(await usecases.send_test(ports, principal.organization_id, webhook_id))
