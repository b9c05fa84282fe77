"""The machine room's HTTP plumbing: the loopback guard, the content security policy, the static frontend."""
