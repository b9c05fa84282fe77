"""Practice (seed §7): problem sets, their partition, generation and grading."""
