"""An email backend whose SMTP server is always down, for the retry tests."""

import smtplib

from django.core.mail.backends.base import BaseEmailBackend


class EmailBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        raise smtplib.SMTPServerDisconnected("the test SMTP server is down")
