"""Inbound edges of the bot: the Argo CD webhook, Slack commands and buttons. Thin: validate, ack, enqueue."""
