"""What a pass did, in names, so a drawing can highlight it."""

from __future__ import annotations

from dataclasses import dataclass, field

from chapters.language import language

# The report's sentence in each language the course speaks (chapters.language picks one);
# a pass's name stays its English identifier, and NAMES gives the words a reader sees for it.
TEXTS = {
    "en": {"removed": "{name}: removed {count} node(s)", "listed": " ({names}{more})",
           "more": ", ...", "added": "added {names}", "separator": ", ", "join": "; ",
           "names": {}},
    "zh": {"removed": "{name}：删除了 {count} 个节点", "listed": "（{names}{more}）",
           "more": "、……", "added": "新增 {names}", "separator": "、", "join": "；",
           "names": {"constant folding": "常量折叠", "algebraic simplification": "代数化简",
                     "common-subexpression elimination": "公共子表达式消除",
                     "dead-code elimination": "死代码消除", "elementwise fusion": "逐元素融合"}},
}


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
        """One line in the course's language: the pass, how many nodes it removed
        (the first 8 named), and the nodes it added."""
        words = TEXTS[language()]
        name = words["names"].get(self.name, self.name)
        parts = [words["removed"].format(name=name, count=len(self.removed))]
        if self.removed:
            more = words["more"] if len(self.removed) > 8 else ""
            parts[0] += words["listed"].format(names=words["separator"].join(self.removed[:8]),
                                               more=more)
        if self.added:
            parts.append(words["added"].format(names=words["separator"].join(self.added[:8])))
        return words["join"].join(parts)
