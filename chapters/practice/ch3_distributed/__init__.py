"""Chapter 3's self-checked practice: broadcast trees, balanced pipeline stages, ZeRO shards."""
