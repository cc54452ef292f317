"""Every picture and widget of the course: graphs, gradient flow, timelines, number formats.

Engines never import vizkit; vizkit reads engine objects through small protocols.
"""

from chapters.language import set_language
from vizkit.claims import ClaimNotSupported, claim
from vizkit.source_view import show_source

__all__ = ["ClaimNotSupported", "claim", "set_language", "show_source"]
