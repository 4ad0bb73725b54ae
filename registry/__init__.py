"""The URN Namespace Registry (RFC 8141).

Nothing is imported here (the Django settings are not loaded by importing the
package); the Celery app is loaded by registry.review's AppConfig. The URN rules are
the toolkit package urn8141 (toolkit/), which imports no Django.
"""
