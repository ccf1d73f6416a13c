"""The hardened LSP transport, in front of pygls' protocol (docs/protocol.md, "Transport").

pygls keeps the protocol types and the dispatch to our handlers. What it does
not do defensively is done here, before a message reaches it, one part a file:

- `limits.py`: what the transport accepts (`Limits`) and `cap`, which keeps
  error messages from echoing a whole input.
- `framing.py`: `FrameParser` turns the byte stream into message bodies (header
  names case-insensitive, `Content-Length` a positive decimal within the limit,
  an oversized message skipped without being stored, resynchronisation on the
  next `Content-Length` after garbage); `FrameWriter` frames what we send.
- `decoding.py`: strict decoding: params decode field by field (a string is a
  string, never `str(42)`), with a short reason naming the field when they do
  not; the JSON checks (nesting depth, unpaired surrogates, the top level of a
  text too deep for `json.loads`).
- `protocol.py`: `HardenedProtocol` answers every request exactly once, to its
  own id whenever the body parsed as JSON: -32700 for bytes that are not JSON,
  -32600 for what is not a JSON-RPC request, -32602 for params that do not
  decode, -32002 before `initialize`, -32600 after `shutdown`; `exit` ends the
  process with 0 after `shutdown`, else 1.
- `client_requests.py`: `ask_client` bounds every server→client request with a
  timeout and turns an error or a malformed answer into `ClientRequestFailed`.
- `serving.py`: serving one client on stdin/stdout or TCP until `exit`.

Nothing here imports the rest of `deepseek_ls.lsp`.
"""
