from django.conf import settings

from registry.accounts.signed_in import navigation_context


def roles(request):
    """What every template may ask: the navigation's answers for the visitor (the same
    function builds the cached navigation's) and the site's names."""
    return {
        **navigation_context(getattr(request, "user", None)),
        "REVIEW_LIST_ADDRESS": settings.REVIEW_LIST_ADDRESS,
        "SITE_NAME": settings.SITE_NAME,
    }
