from django.conf import settings

from registry.accounts.roles import is_expert, is_iana_staff


def roles(request):
    user = getattr(request, "user", None)
    return {
        "is_expert": is_expert(user),
        "is_iana_staff": is_iana_staff(user),
        "REVIEW_LIST_ADDRESS": settings.REVIEW_LIST_ADDRESS,
    }
