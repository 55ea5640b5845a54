"""Fixes from chat: what a pull request proposes, where the Application is defined, and the edit of its file."""
