from django.conf import settings

from registry.accounts.roles import can_use_staff_pages, is_expert, is_iana_staff, role_label


def roles(request):
    user = getattr(request, "user", None)
    signed_in = getattr(user, "is_authenticated", False)
    return {
        "is_expert": is_expert(user),
        "is_iana_staff": is_iana_staff(user),
        "can_use_staff_pages": can_use_staff_pages(user),
        "role_label": role_label(user) if signed_in else "",
        "REVIEW_LIST_ADDRESS": settings.REVIEW_LIST_ADDRESS,
        "SITE_NAME": settings.SITE_NAME,

    }
