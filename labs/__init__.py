"""The labs: one per chapter, each with an instructor source notebook and an exercise spec."""
