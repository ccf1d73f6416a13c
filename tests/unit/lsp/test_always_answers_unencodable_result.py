"""An answer the transport cannot encode still answers the request (as an error), never silence."""

from __future__ import annotations

import json

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from deepseek_ls.lsp.transport.protocol import HardenedProtocol


def unencodable() -> types.Diagnostic:
    """A diagnostic echoed back as the strict decoder gave it: its severity a plain int, not the enum."""
    where = types.Range(types.Position(0, 0), types.Position(0, 1))
    return types.Diagnostic(range=where, message="m", severity=1)  # type: ignore[arg-type]


def _server_writing_to(sent: list[bytes]) -> HardenedProtocol:
    server = LanguageServer("t", "0", protocol_cls=HardenedProtocol)
    protocol = server.protocol
    assert isinstance(protocol, HardenedProtocol)

    class Writer:
        def write(self, data: bytes) -> None:
            sent.append(data)

        def close(self) -> None:
            pass

    protocol.set_writer(Writer(), include_headers=False)
    return protocol


def _answers(sent: list[bytes]) -> list[dict]:
    return [json.loads(chunk) for chunk in sent]


def test_always_answers_a_result_that_does_not_encode() -> None:
    sent: list[bytes] = []
    protocol = _server_writing_to(sent)
    protocol._inflight.add(7)
    protocol._send_response(7, result=[unencodable()])
    [answer] = _answers(sent)
    assert answer["id"] == 7 and "result" not in answer
    assert answer["error"]["code"] == types.ErrorCodes.InternalError.value
    assert "could not encode its answer" in answer["error"]["message"]


def test_an_encodable_result_is_sent_as_it_is() -> None:
    sent: list[bytes] = []
    protocol = _server_writing_to(sent)
    protocol._inflight.add("a")
    protocol._send_response("a", result={"fine": [1, 2]})
    [answer] = _answers(sent)
    assert answer == {"jsonrpc": "2.0", "id": "a", "result": {"fine": [1, 2]}}
