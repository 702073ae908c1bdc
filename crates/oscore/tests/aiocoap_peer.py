#!/usr/bin/env python3
"""An aiocoap OSCORE peer for tests/aiocoap_interop.rs, with a pre-shared security context.

    aiocoap_peer.py server --port P --ctx DIR [--requests N]
        Serves POST /r behind OSCORE on 127.0.0.1:P; answers 2.04 with payload b"stored:" + the
        request's payload and prints "got PAYLOAD" for each. Prints "ready" once listening and
        exits after N requests (default 1) or 20 s, whichever is first.
    aiocoap_peer.py client --port P --ctx DIR --payload TEXT [--count N]
        POSTs TEXT (N times, numbered TEXT-0, TEXT-1, ...) to coap://127.0.0.1:P/r through
        OSCORE and prints "code CODE payload PAYLOAD" for each response.

DIR holds aiocoap's context files (settings.json: algorithm, sender-id_hex, recipient-id_hex,
secret_hex, salt_hex); aiocoap keeps its sequence numbers and replay window there.

Needs aiocoap with its OSCORE extra (pip install 'aiocoap[oscore]'); exits 3 if missing.
Traffic goes to 127.0.0.1 only.
"""
import argparse
import asyncio
import sys

try:
    import aiocoap
    import aiocoap.resource as resource
    from aiocoap.oscore_sitewrapper import OscoreSiteWrapper
except ImportError as e:  # the test says what to install
    print(f"error: aiocoap with OSCORE support is not installed: {e}", file=sys.stderr)
    sys.exit(3)

DEADLINE_S = 20


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
    creds.load_from_dict({":client": {"oscore": {"basedir": args.ctx}}})
    ctx = await aiocoap.Context.create_server_context(OscoreSiteWrapper(site, creds), bind=("127.0.0.1", args.port))
    print("ready", flush=True)
    try:
        await asyncio.wait_for(done.wait(), DEADLINE_S)
    except asyncio.TimeoutError:
        print("error: deadline reached", file=sys.stderr)
    await ctx.shutdown()


async def client(args):
    ctx = await aiocoap.Context.create_client_context()
    uri = f"coap://127.0.0.1:{args.port}/r"
    ctx.client_credentials.load_from_dict({f"coap://127.0.0.1:{args.port}/*": {"oscore": {"basedir": args.ctx}}})
    try:
        for i in range(args.count):
            req = aiocoap.Message(code=aiocoap.POST, uri=uri, payload=f"{args.payload}-{i}".encode())
            resp = await asyncio.wait_for(ctx.request(req).response, DEADLINE_S)
            print(f"code {resp.code.dotted} payload {resp.payload.decode('utf-8', 'replace')}", flush=True)
    finally:
        await ctx.shutdown()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("role", choices=["server", "client"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ctx", required=True)
    p.add_argument("--requests", type=int, default=1)
    p.add_argument("--payload", default="reading")
    p.add_argument("--count", type=int, default=1)
    args = p.parse_args()
    asyncio.run(server(args) if args.role == "server" else client(args))


if __name__ == "__main__":
    main()
