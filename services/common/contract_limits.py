"""The limits and defaults the contracts promise (protos/glossator/v1, in their comments), once.

Servicers check requests against them, clients cut what they send to them, and settings take their
defaults from them, so a contract change is made here and in the proto comment only.
"""

# AskRequest.query and SearchRequest.query: 1-1000 characters.
MAX_QUERY_CHARS = 1000
# AskRequest.top_k and SearchRequest.top_k: 1-20; 0 means the default.
MIN_TOP_K = 1
MAX_TOP_K = 20
DEFAULT_TOP_K = 5
# Source.extracted_text: at most 1000 characters of the chunk.
MAX_EXTRACT_CHARS = 1000
