"""The Workbench's agent side (seed §4, §5.1): the teacher's job tools (`dispatch`) and the
workers that verify before they deliver (researcher, demo-builder, visual-maker)."""
