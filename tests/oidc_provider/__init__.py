"""A real OpenID Connect provider for the single sign-on tests: a small Django project on
django-oauth-toolkit, run in its own process on localhost with its own SQLite database
(``server.running_provider``). It signs ID tokens with an RS256 key made at start and puts its
users' Django groups in a ``groups`` claim."""
