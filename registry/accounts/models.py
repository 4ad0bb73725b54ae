from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models


class UserQuerySet(models.QuerySet):
    def with_role(self, group: str):
        return (self.filter(groups__name=group, is_active=True)
                .order_by("last_name", "first_name", "email"))

    def designated_experts(self):
        """The active designated experts (RFC 8141 section 6.2)."""
        from registry.accounts.roles import EXPERT

        return self.with_role(EXPERT)

    def iana_staff(self):
        from registry.accounts.roles import STAFF

        return self.with_role(STAFF)


class RegistrantManager(UserManager.from_queryset(UserQuerySet)):  # type: ignore[misc]
    """Users are identified by email; ``username`` is kept for the admin only."""

    def create_user(self, email, password=None, **extra):
        extra.setdefault("username", email)
        return super().create_user(extra.pop("username"), email, password, **extra)

    def create_superuser(self, email, password=None, **extra):
        extra.setdefault("username", email)
        return super().create_superuser(extra.pop("username"), email, password, **extra)


class User(AbstractUser):
    email = models.EmailField("email address", unique=True)
    organisation = models.CharField(max_length=200, blank=True)
    recognized_standards_body = models.BooleanField(
        "recognized standards body",
        default=False,
        help_text=(
            "Set by IANA staff when the IESG recognizes this registrant's organisation as a "
            "standards-related organisation, scientific society or similar body: it may then "
            "use the fast track of RFC 8141 section 6.3."
        ),
    )

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = ["username"]

    objects = RegistrantManager()

    def __str__(self) -> str:
        name = self.get_full_name()
        return f"{name} <{self.email}>" if name else self.email

    @property
    def display_name(self) -> str:
        return self.get_full_name() or self.email
