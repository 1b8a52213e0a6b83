"""Webhooks: create (the secret shown once), list, get, patch, delete; the deliveries' log, a redelivery, a test
event. Admins write; every role reads."""

from __future__ import annotations

from typing import Any

from litestar import Controller, post
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.webhooks import usecases
from controlplane_domain.webhooks.entity import Delivery as DomainDelivery
from controlplane_domain.webhooks.entity import DeliveryStatus
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, as_command, routes
from controlplane_http.handlers import ADMIN, caller, errors
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.webhooks import Delivery, DeliveryList, Webhook, WebhookCreate, WebhookList, WebhookUpdate


def webhook_out(view: usecases.WebhookView) -> Webhook:
    return to_wire(view.webhook, Webhook, secret=view.secret)


def delivery_out(delivery: DomainDelivery) -> Delivery:
    pending = delivery.status is DeliveryStatus.PENDING
    return to_wire(delivery, Delivery, next_attempt_at=delivery.next_attempt_at if pending else None)


def _update(data: WebhookUpdate) -> usecases.UpdateWebhook:
    fields: dict[str, Any] = given_fields(data)
    if "events" in fields:
        fields["events"] = tuple(fields["events"])
    return usecases.UpdateWebhook(**fields)


@routes(
    Resource("webhook", "Webhook", Webhook, WebhookList, webhook_out),
    Create(
        usecases.create_webhook,
        body=WebhookCreate,
        command=as_command(usecases.CreateWebhook),
        codes=(415, 503),
        opt=ADMIN,
    ),
    Listing(usecases.list_webhooks),
    Read(usecases.get_webhook),
    Update(usecases.update_webhook, body=WebhookUpdate, command=_update, codes=(404, 415), opt=ADMIN),
    Remove(usecases.delete_webhook, force=False, codes=(404,), opt=ADMIN),
)
@routes(
    Resource("delivery", "WebhookDelivery", Delivery, DeliveryList, delivery_out,
             plural=("deliveries", "WebhookDeliveries")),
    Listing(usecases.list_deliveries, under="webhook_id", history=True, codes=(404,)),
)  # fmt: skip
class WebhookController(Controller):
    path = "/api/v1/webhooks"
    tags = ["webhooks"]

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


AREA = HttpArea((WebhookController,), visible={"webhook_id": usecases.get_webhook})
