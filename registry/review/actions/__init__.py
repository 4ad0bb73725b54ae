"""Every write to a registration request, and mail's own, goes through one function of
this package (``<noun>_<verb>(*, ..., actor)``): ``registrations`` for the request
itself, ``mail`` for what is sent and received. Each locks its row, asks the workflow
table, writes its event row in the same transaction and queues its mail for after
commit.
"""

from registry.review.actions.mail import (
    Delivery,
    inbound_mail_receive,
    inbound_message_attach,
    message_deliver,
    message_resend,
    person_withdraw,
    reply_addresses_revoke,
)
from registry.review.actions.registrations import (
    registration_assign,
    registration_comment,
    registration_create,
    registration_remind,
    registration_set_standardisation,
    registration_transition,
    registration_update,
)
from registry.review.workflow import (
    NotAllowed,
    NotEditable,
    Refused,
    StaleEdit,
    TransitionRefused,
)

__all__ = [
    "Delivery",
    "NotAllowed",
    "NotEditable",
    "Refused",
    "StaleEdit",
    "TransitionRefused",
    "inbound_mail_receive",
    "inbound_message_attach",
    "message_deliver",
    "message_resend",
    "person_withdraw",
    "reply_addresses_revoke",
    "registration_assign",
    "registration_comment",
    "registration_create",
    "registration_remind",
    "registration_set_standardisation",
    "registration_transition",
    "registration_update",
]

