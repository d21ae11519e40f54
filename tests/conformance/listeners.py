"""Canary listeners for the tests that run probes: a TCP and a UDP canary that ack the canary
payload, a DNS responder for *.sandprobe.test, a closed port, and a unix socket that answers
GET /_ping. All on 127.0.0.1 (or a path in the test's own directory), as the harness's own
canaries behave (witnesses/witness_net_listeners.cc): nothing here sends to another address.
"""
import re
import select
import socket
import threading

ACK = b"sandprobe-ack\n"
DNS_ZONE = "sandprobe.test"
PAYLOAD = re.compile(rb"^sandprobe ([A-Za-z0-9_-]{1,128}) (\S+) (\S+)\n?$")
MAX_RECEIPTS = 1000


def answer_dns_query(query: bytes):
    """The reply the harness's responder gives: NOERROR + A 127.0.0.1 for a type A question
    under sandprobe.test, REFUSED for anything else; (reply, qname) or (None, "")."""
    if len(query) < 12 or query[2] & 0x80:
        return None, ""
    at, labels = 12, []
    while True:
        if at >= len(query):
            return None, ""
        length = query[at]
        if length == 0:
            break
        if length > 63 or at + 1 + length > len(query):
            return None, ""
        labels.append(query[at + 1:at + 1 + length].decode("ascii", errors="replace"))
        at += 1 + length
    if at + 5 > len(query):
        return None, ""
    qname = ".".join(labels)
    question = query[12:at + 5]
    type_a = query[at + 1] == 0 and query[at + 2] == 1
    ours = qname.endswith("." + DNS_ZONE)
    reply = query[:2] + bytes([0x84 | (query[2] & 0x01), 0x00 if ours else 0x05, 0, 1, 0,
                               1 if ours and type_a else 0, 0, 0, 0, 0]) + question
    if ours and type_a:
        reply += bytes([0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1])
    return reply, qname


class Canaries:
    """Starts the listeners in one thread; receipts record every nonce that arrived."""

    def __init__(self):
        self.receipts = []  # (endpoint, nonce)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sockets = {}
        self._unix = None
        self._threads = []

    def _bind(self, kind):
        s = socket.socket(socket.AF_INET, kind)
        s.bind(("127.0.0.1", 0))
        return s

    def start(self):
        self._sockets["tcp"] = self._bind(socket.SOCK_STREAM)
        self._sockets["tcp"].listen(16)
        self._sockets["udp"] = self._bind(socket.SOCK_DGRAM)
        self._sockets["dns"] = self._bind(socket.SOCK_DGRAM)
        # Bound but not listening: TCP connects are refused; the same UDP port is left unbound,
        # so a datagram there draws an ICMP port unreachable (ECONNREFUSED on a connected socket).
        self._closed = self._bind(socket.SOCK_STREAM)
        thread = threading.Thread(target=self._serve, daemon=True)
        thread.start()
        self._threads.append(thread)

    def endpoints(self):
        def text(s):
            host, port = s.getsockname()
            return f"{host}:{port}"
        return {"tcp": text(self._sockets["tcp"]), "udp": text(self._sockets["udp"]),
                "dns": text(self._sockets["dns"]), "closed": text(self._closed)}

    def start_unix(self, path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.listen(8)
        self._unix = s
        return path

    def nonces_at(self, endpoint):
        with self._lock:
            return [nonce for where, nonce in self.receipts if where == endpoint]

    def _record(self, endpoint, nonce):
        with self._lock:
            if len(self.receipts) < MAX_RECEIPTS:
                self.receipts.append((endpoint, nonce))

    def _serve(self):
        conns = []
        while not self._stop.is_set():
            watched = list(self._sockets.values()) + conns + ([self._unix] if self._unix else [])
            ready, _, _ = select.select(watched, [], [], 0.1)
            for s in ready:
                try:
                    if s is self._sockets["tcp"] or s is self._unix:
                        conn, _ = s.accept()
                        conn.settimeout(2)
                        conns.append(conn)
                    elif s is self._sockets["udp"]:
                        data, peer = s.recvfrom(2048)
                        match = PAYLOAD.match(data)
                        if match:
                            self._record("udp", match.group(1).decode())
                            s.sendto(ACK, peer)
                    elif s is self._sockets["dns"]:
                        data, peer = s.recvfrom(2048)
                        reply, qname = answer_dns_query(data)
                        if reply is not None:
                            self._record("dns", qname.split(".")[0])
                            s.sendto(reply, peer)
                    else:
                        conns.remove(s)
                        self._answer_stream(s)
                except OSError:
                    pass
        for c in conns:
            c.close()

    def _answer_stream(self, conn):
        with conn:
            data = conn.recv(2048)
            if data.startswith(b"GET /_ping"):
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nOK")
                return
            match = PAYLOAD.match(data)
            if match:
                self._record("tcp", match.group(1).decode())
                conn.sendall(ACK)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        for s in list(self._sockets.values()) + [getattr(self, "_closed", None), self._unix]:
            if s is not None:
                s.close()
