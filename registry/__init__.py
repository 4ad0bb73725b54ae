"""The URN Namespace Registry (RFC 8141).

Nothing is imported here, so that ``registry.urns`` stays importable without
Django; the Celery app is loaded by registry.review's AppConfig.
"""
