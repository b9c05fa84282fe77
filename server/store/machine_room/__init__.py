"""The machine room's storage: settings, secrets and subscription logins."""
