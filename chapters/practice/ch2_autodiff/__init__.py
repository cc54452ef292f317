"""Chapter 2's self-checked practice: path sums, a forward-mode rule, a reverse-mode rule."""
