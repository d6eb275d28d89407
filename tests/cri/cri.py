#!/usr/bin/python3
"""A small CRI v1 client for tests/cri/cri.bats: drives containerd's CRI plugin as kubelet does.

Usage (CRI_SOCK = containerd's gRPC socket; CRI_GEN = a directory for the generated code,
default a cache in $TMPDIR named after api.proto's hash; CRI_TIMEOUT = seconds per call, 60):
  cri.py call METHOD [JSON]        RuntimeService/ImageService METHOD with the request as JSON
                                   (proto field names); prints the response as JSON. A gRPC
                                   error prints "CODE: details" on stderr and exits 1.
  cri.py wait-container ID STATE [SECONDS]   poll ContainerStatus until state is STATE
                                   (CONTAINER_RUNNING, CONTAINER_EXITED, ...); prints the status
  cri.py wait-pod ID STATE [SECONDS]         the same for PodSandboxStatus (SANDBOX_NOTREADY, ...)
  cri.py ws-exec URL [STDIN]       a streaming exec/attach URL (from Exec or Attach) through the
                                   websocket channel protocol (v4.channel.k8s.io): sends STDIN on
                                   channel 0 and prints {"stdout", "stderr", "status"} once the
                                   server sends the status (channel 3) or, with CRI_WS_UNTIL,
                                   once stdout contains that text
  cri.py ws-portforward URL DATA UNTIL       a port-forward URL for one port: sends DATA and
                                   prints what comes back once it contains UNTIL
  cri.py serve FIFO                the commands above for a shell, without a python start and
                                   the grpc imports per call (seconds each under the VM's TCG):
                                   reads request names R from FIFO (one a line), runs the command
                                   in R.args (NUL-terminated: CRI_WS_UNTIL's value, then the
                                   arguments), writes its stdout and stderr to R.out and R.err,
                                   then its exit status as a line to the FIFO R.rc (which the
                                   client holds open); see cri() in harness.bash

Only Debian's python3-grpcio and python3-grpc-tools are needed; api.proto next to this file is
compiled into $CRI_GEN on first use. No registry, no network: the streaming server listens on
127.0.0.1.
"""

import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = float(os.environ.get("CRI_TIMEOUT", "60"))


def load_api():
    gen = os.environ.get("CRI_GEN")
    if not gen:
        import hashlib
        import tempfile

        with open(os.path.join(HERE, "api.proto"), "rb") as f:
            tag = hashlib.sha256(f.read()).hexdigest()[:12]
        gen = os.path.join(tempfile.gettempdir(), "ward-cri-gen-%d-%s" % (os.getuid(), tag))
    if not os.path.exists(os.path.join(gen, "api_pb2.py")):
        from grpc_tools import protoc

        os.makedirs(gen, exist_ok=True)
        rc = protoc.main(["protoc", "-I" + HERE, "--python_out=" + gen, os.path.join(HERE, "api.proto")])
        if rc != 0:
            sys.exit("cri.py: protoc failed on api.proto")
    sys.path.insert(0, gen)
    import api_pb2

    return api_pb2


def die(msg, code=1):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.exit(code)


def call(method, req_json="{}"):
    import grpc
    from google.protobuf import json_format

    api = load_api()
    svc = None
    for name in ("RuntimeService", "ImageService"):
        s = api.DESCRIPTOR.services_by_name[name]
        if method in s.methods_by_name:
            svc = s
            break
    if svc is None:
        die("cri.py: unknown method " + method, 2)
    m = svc.methods_by_name[method]
    req_cls = getattr(api, m.input_type.name)
    resp_cls = getattr(api, m.output_type.name)
    req = json_format.Parse(req_json or "{}", req_cls())
    sock = os.environ["CRI_SOCK"]
    with grpc.insecure_channel("unix://" + sock) as ch:
        fn = ch.unary_unary(
            "/runtime.v1.%s/%s" % (svc.name, method),
            request_serializer=req_cls.SerializeToString,
            response_deserializer=resp_cls.FromString,
        )
        try:
            resp = fn(req, timeout=TIMEOUT)
        except grpc.RpcError as e:
            die("%s: %s" % (e.code().name, e.details()))
    out = json_format.MessageToDict(resp, preserving_proto_field_name=True, including_default_value_fields=True)
    # ExecSync's bytes come back base64-encoded in JSON: decode them for the shell
    if method == "ExecSync":
        for k in ("stdout", "stderr"):
            out[k] = base64.b64decode(out.get(k, "")).decode("utf-8", "replace")
    return out


def wait(kind, ident, state, seconds):
    deadline = time.monotonic() + float(seconds)
    last = None
    while True:
        if kind == "container":
            st = call("ContainerStatus", json.dumps({"container_id": ident}))["status"]
        else:
            st = call("PodSandboxStatus", json.dumps({"pod_sandbox_id": ident}))["status"]
        last = st
        if st.get("state") == state:
            return st
        if time.monotonic() > deadline:
            die("cri.py: %s %s: state %s after %ss, expected %s" % (kind, ident, st.get("state"), seconds, state))
        time.sleep(0.1)


# --- websocket (RFC 6455), client side, just enough for the k8s channel protocols ---------


class WS:
    def __init__(self, url, protocols):
        u = urllib.parse.urlparse(url)
        port = u.port or 80
        self.s = socket.create_connection((u.hostname, port), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path + ("?" + u.query if u.query else "")
        req = (
            "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n"
        ) % (path, u.netloc, key, ", ".join(protocols))
        self.s.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = self.s.recv(1)
            if not b:
                die("cri.py: websocket: connection closed during the handshake: %r" % head)
            head += b
        status = head.split(b"\r\n", 1)[0].decode()
        if " 101 " not in status + " ":
            rest = b""
            try:
                self.s.settimeout(2)
                rest = self.s.recv(4096)
            except OSError:
                pass
            die("cri.py: websocket handshake refused: %s %s" % (status, rest.decode("utf-8", "replace").strip()))
        self.buf = b""

    def _read(self, n):
        while len(self.buf) < n:
            b = self.s.recv(65536)
            if not b:
                raise EOFError
            self.buf += b
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, payload, opcode=2):
        hdr = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv(self):
        """One data message (opcode, payload); None once the server closes."""
        data, op0 = b"", None
        while True:
            try:
                b0, b1 = self._read(2)
            except EOFError:
                return None
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            p = self._read(n)
            if mask:
                p = bytes(b ^ mask[i % 4] for i, b in enumerate(p))
            if op == 8:
                return None
            if op == 9:
                self.send(p, 10)
                continue
            if op == 10:
                continue
            if op0 is None:
                op0 = op
            data += p
            if b0 & 0x80:
                return op0, data

    def close(self):
        try:
            self.send(struct.pack("!H", 1000), 8)
        except OSError:
            pass
        self.s.close()


def ws_exec(url, stdin=None):
    ws = WS(url, ["v4.channel.k8s.io"])
    out = {"stdout": "", "stderr": "", "status": None}
    until = os.environ.get("CRI_WS_UNTIL")
    if stdin:
        ws.send(b"\x00" + stdin.encode())
    while True:
        m = ws.recv()
        if m is None:
            break
        _, p = m
        if not p:
            continue
        ch, data = p[0], p[1:].decode("utf-8", "replace")
        if ch == 1:
            out["stdout"] += data
        elif ch == 2:
            out["stderr"] += data
        elif ch == 3 and data:
            out["status"] = json.loads(data)
            break
        if until and until in out["stdout"]:
            break
    ws.close()
    return out


def ws_portforward(url, data, until):
    ws = WS(url, ["v4.channel.k8s.io"])
    # the server first sends the port (2 bytes, little endian) on the data and error channels
    got = b""
    sent = False
    errors = ""
    while True:
        m = ws.recv()
        if m is None:
            break
        _, p = m
        if not p:
            continue
        ch, payload = p[0], p[1:]
        if ch == 0 and not sent:
            ws.send(b"\x00" + data.encode())
            sent = True
            continue
        if ch == 0:
            got += payload
            if until.encode() in got:
                break
        elif ch == 1 and len(payload) > 2:
            errors += payload.decode("utf-8", "replace")
            break
    ws.close()
    return {"data": got.decode("utf-8", "replace"), "error": errors}


def main(argv):
    if len(argv) < 2:
        die(__doc__, 2)
    cmd = argv[1]
    if cmd == "call":
        res = call(argv[2], argv[3] if len(argv) > 3 else "{}")
    elif cmd in ("wait-container", "wait-pod"):
        res = wait(cmd[5:], argv[2], argv[3], argv[4] if len(argv) > 4 else 30)
    elif cmd == "ws-exec":
        res = ws_exec(argv[2], argv[3] if len(argv) > 3 else None)
    elif cmd == "ws-portforward":
        res = ws_portforward(argv[2], argv[3], argv[4])
    else:
        die("cri.py: unknown command " + cmd, 2)
    print(json.dumps(res, sort_keys=True))


def serve(req_fifo):
    import contextlib
    import io
    import traceback

    import grpc  # noqa: F401 (imported once, here)

    load_api()
    # O_RDWR: this process is a writer too, so the FIFO never reaches end of file
    with os.fdopen(os.open(req_fifo, os.O_RDWR), "r") as f:
        for line in f:
            r = line.rstrip("\n")
            if not r:
                continue
            out, err, rc = io.StringIO(), io.StringIO(), 0
            try:
                with open(r + ".args", "rb") as a:
                    parts = [p.decode() for p in a.read().split(b"\0")[:-1]]
                if parts[0]:
                    os.environ["CRI_WS_UNTIL"] = parts[0]
                else:
                    os.environ.pop("CRI_WS_UNTIL", None)
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    main(["cri.py"] + parts[1:])
            except SystemExit as e:
                if isinstance(e.code, int):
                    rc = e.code
                elif e.code is not None:
                    err.write(str(e.code) + "\n")
                    rc = 1
            except Exception:
                err.write(traceback.format_exc())
                rc = 1
            try:
                for ext, text in ((".out", out), (".err", err)):
                    with open(r + ext, "w") as o:
                        o.write(text.getvalue())
                # the client holds R.rc open for reading; gone (killed): nothing to tell
                fd = os.open(r + ".rc", os.O_WRONLY | os.O_NONBLOCK)
                os.write(fd, b"%d\n" % rc)
                os.close(fd)
            except OSError as e:
                sys.stderr.write("cri.py serve: %s: %s\n" % (r, e))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        main(sys.argv)
