"""Chapter 4 practice: reading bfloat16 bits, lost float16 updates, the largest safe loss scale."""
