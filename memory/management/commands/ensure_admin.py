from django.core.management.base import BaseCommand

from memorylane.runner import ensure_admin


class Command(BaseCommand):
    help = "Create the 'admin' superuser (MEMORYLANE_ADMIN_PASSWORD, or a generated one) if none exists."

    def handle(self, *args, **options) -> None:
        ensure_admin(stdout=self.stdout)
