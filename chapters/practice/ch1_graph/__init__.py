"""Chapter 1's self-checked practice: node depths, identity removal, peak live bytes."""
