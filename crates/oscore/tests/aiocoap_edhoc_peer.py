#!/usr/bin/env python3
"""An aiocoap EDHOC + OSCORE peer for tests/edhoc_aiocoap.rs (EDHOC by aiocoap with lakers-python).

    aiocoap_edhoc_peer.py server --port P [--requests N]
        EDHOC Responder on coap://127.0.0.1:P/.well-known/edhoc (RFC 9528 Appendix A.2), and
        POST /r behind the OSCORE context it establishes: answers 2.04 with b"stored:" + the
        payload and prints "got PAYLOAD". Prints "ready" once listening; exits after N
        requests to /r (default 1) or 20 s.
    aiocoap_edhoc_peer.py client --port P --payload TEXT
        EDHOC Initiator (message_3 sent alone, answered by message_4), then POST TEXT to
        coap://127.0.0.1:P/r through the established OSCORE context; prints
        "code CODE payload PAYLOAD", or "error: ..." and exits 1 when the handshake fails.

Both use method 3 and cipher suite 2 with the credentials (CCS, sent by 'kid') and static
keys of RFC 9529 Section 3: the server is its Responder, the client its Initiator. These keys
are published test vectors, used here because they are public.
Exits 3 when aiocoap or lakers-python is missing. Traffic goes to 127.0.0.1 only.
"""
import argparse
import asyncio
import sys

try:
    import aiocoap
    import aiocoap.resource as resource
    import cbor2
    import lakers  # noqa: F401  (aiocoap's EDHOC needs it)
    from aiocoap.edhoc import EdhocCredentials
    from aiocoap.oscore_sitewrapper import OscoreSiteWrapper
except ImportError as e:  # the test says what to install
    print(f"error: aiocoap with EDHOC support is not installed: {e}", file=sys.stderr)
    sys.exit(3)

DEADLINE_S = 20

# RFC 9529 Section 3.
SK_I = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b"
SK_R = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac"
CRED_I = (
    "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3"
    "e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7"
    "d37ecb52a387d257e6db3c2a93df21ff3affc8"
)
CRED_R = (
    "a2026b6578616d706c652e65647508a101a501020241322001215820bbc34960526ea4d32e940cad2a234148dd"
    "c21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c22"
    "4c51eabf6072"
)


def credentials(own_key, own_cred, peer_cred):
    return EdhocCredentials(
        suite=2,
        method=3,
        own_cred_style="by-key-id",
        own_cred={14: cbor2.loads(bytes.fromhex(own_cred))},
        peer_cred={14: cbor2.loads(bytes.fromhex(peer_cred))},
        private_key={1: 2, -1: 1, -4: bytes.fromhex(own_key)},
        use_combined_edhoc=False,
    )


class Readings(resource.Resource):
    def __init__(self, done, limit):
        super().__init__()
        self.done, self.limit, self.count = done, limit, 0

    async def render_post(self, request):
        print(f"got {request.payload.decode('utf-8', 'replace')}", flush=True)
        self.count += 1
        if self.count >= self.limit:
            asyncio.get_running_loop().call_later(0.2, self.done.set)
        return aiocoap.Message(code=aiocoap.CHANGED, payload=b"stored:" + request.payload)


async def server(args):
    done = asyncio.Event()
    site = resource.Site()
    site.add_resource(["r"], Readings(done, args.requests))
    creds = aiocoap.credentials.CredentialsMap()
    creds[f"coap://127.0.0.1:{args.port}/*"] = credentials(SK_R, CRED_R, CRED_I)
    ctx = await aiocoap.Context.create_server_context(OscoreSiteWrapper(site, creds), bind=("127.0.0.1", args.port))
    print("ready", flush=True)
    try:
        await asyncio.wait_for(done.wait(), DEADLINE_S)
    except asyncio.TimeoutError:
        print("error: deadline reached", file=sys.stderr)
    await ctx.shutdown()


async def client(args):
    ctx = await aiocoap.Context.create_client_context()
    origin = f"coap://127.0.0.1:{args.port}"
    ctx.client_credentials[origin + "/*"] = credentials(SK_I, CRED_I, CRED_R)
    try:
        req = aiocoap.Message(code=aiocoap.POST, uri=origin + "/r", payload=args.payload.encode())
        resp = await asyncio.wait_for(ctx.request(req).response, DEADLINE_S)
        print(f"code {resp.code.dotted} payload {resp.payload.decode('utf-8', 'replace')}", flush=True)
    except Exception as e:  # the handshake's failure is what the test looks for
        print(f"error: {type(e).__name__}: {e}", flush=True)
        sys.exit(1)
    finally:
        await ctx.shutdown()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("role", choices=["server", "client"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--requests", type=int, default=1)
    p.add_argument("--payload", default="reading")
    args = p.parse_args()
    asyncio.run(server(args) if args.role == "server" else client(args))


if __name__ == "__main__":
    main()
