"""What a pass did, in names, so a drawing can highlight it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PassReport:
    """``removed``: names of nodes the pass took out; ``added``: names of nodes
    it created (a folded constant, a fused node)."""

    name: str
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.added)

    def __str__(self) -> str:
        parts = [f"{self.name}: removed {len(self.removed)} node(s)"]
        if self.removed:
            more = ", ..." if len(self.removed) > 8 else ""
            parts[0] += f" ({', '.join(self.removed[:8])}{more})"
        if self.added:
            parts.append(f"added {', '.join(self.added[:8])}")
        return "; ".join(parts)
