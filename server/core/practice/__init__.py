"""Practice's pure core (seed §7): the chain model and the named levels."""
