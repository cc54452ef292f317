"""Chapter 5 practice: averaging gradients over ranks, the clipping factor, replica spread."""
