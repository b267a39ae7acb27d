#!/usr/bin/env python3
"""fake_sse.py - a scripted stand-in for the GenuProof API, for dashboard tests.

Python 3 standard library only.  Listens on 127.0.0.1 and prints `PORT <n>` as
the first line of stdout (flushed) once it accepts connections.

Usage:
  fake_sse.py [--port N] [--brands a,b] [--rate N] [--burst] [--initial N]
              [--heartbeat-ms N] [--retry-ms N] [--drop-after N] [--start-seq N]
              [--key K] [--no-admin] [--seed N] [--log FILE]

Options:
  --port N          listen port (default 0 = ephemeral)
  --brands a,b      brand ids served (default "brand-a"); threats cycle over them
  --rate N          threats generated per second over all brands (default 0;
                    fractions allowed, e.g. 0.5)
  --burst           generate each second's threats at once at the start of the
                    second instead of spreading them evenly
  --initial N       threats generated at start-up (history for /api/threats)
  --heartbeat-ms N  `heartbeat` event period on streams (default 3000)
  --retry-ms N      send `retry: N` first on every stream (default: none); a
                    real duration: the real server sends 3000 x GENUPROOF_TIME_SCALE
  --drop-after N    close each stream after it has sent N `threat` events
  --start-seq N     first event id is N+1 (lets a restarted server continue)
  --key K           every /api/ request must carry `Authorization: Bearer K`
                    (else 401 {"error":"Unauthorized"})
  --no-admin        admin-only endpoints (/api/ops-log, /api/audit,
                    /api/brands/list, /api/admin/partitions) answer 403
  --seed N          random seed (default 1): same options -> same threats
  --log FILE        one line per request (flushed), space-separated:
                      <epoch-ms> <METHOD> <path> q=<query|-> lei=<Last-Event-ID|-> auth=<Authorization|->
                    e.g. `1764680000000 GET /api/stream q=brandId=brand-a lei=17 auth=-`

Endpoints (all JSON unless noted; GET unless noted):
  /api/stream?brandId=   text/event-stream: [retry:], `connected`
                         {"brandId","timestamp"}, then `threat` events (id: <seq>,
                         data: the whole alert object) and `heartbeat` {"ts"}.
                         Resumes after the Last-Event-ID header (or ?lastEventId=)
                         when it is a known sequence number; else no backlog.
                         Missing brandId -> 400 text/plain `brandId required`.
  /api/threats?brandId=&limit=   newest first (limit default 50, max 500):
                         {"threats":[alert...],"count":n}.  An alert: alertId,
                         brandId, type, severity, productId, details, timestamp,
                         resolved, source, country, city, aiAnalysis,
                         anomalyFlags, count, lastSeen.
  /api/brands?id=        brand profile with productCount/scanCount/threatCount
  /api/brands/list       {"brands":[...],"count":n}
  /api/brands/stats, /api/brands/scans, /api/analytics, /api/audit,
  /api/ops-log, /api/admin/partitions, /api/health, /api/products/verify,
  /api/scans, /api/products/events, /api/products/list: small fixed JSON.
  POST /api/products/recall, POST /api/threats/resolve: {"ok":true}-like JSON.
  Anything else -> 404 {"error":"Not found"}.

Control (never logged as API traffic, work while "down"; GET or POST):
  /_ctl/pause            stop generating threats (rate and initial)
  /_ctl/resume           generate again
  /_ctl/emit?sev=critical&brand=b&type=t&n=1   make n threats now
  /_ctl/down?sec=N       for N seconds: close open streams and close every new
                         /api/ connection without a response
  /_ctl/drop             close every open stream now (server stays up)
  /_ctl/stream-status?code=403   /api/stream answers this status (0 = normal)
  /_ctl/slow?ms=N        delay every non-stream /api/ response by N ms
  /_ctl/status           {"seq","streams","requests","paused","down"}
Signals: SIGUSR1 emits one critical threat; SIGUSR2 toggles pause; SIGTERM/SIGINT
stop the server.
"""

import argparse
import collections
import json
import random
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TYPES = [
    ("geographic_anomaly", "high"),
    ("burst_scan", "medium"),
    ("scan_velocity", "high"),
    ("duplicate_scan", "high"),
    ("claimed_product_scan", "medium"),
    ("hash_tampering", "critical"),
    ("chain_gap", "low"),
    ("product_recall", "critical"),
]
PLACES = [
    ("US", "Memphis"),
    ("CH", "Geneva"),
    ("JP", "Tokyo"),
    ("GB", "London"),
    ("DE", "Berlin"),
    ("BR", "Sao Paulo"),
    ("IN", "Mumbai"),
    ("Unknown", "Unknown"),
]
ADMIN_PATHS = {"/api/ops-log", "/api/audit", "/api/brands/list", "/api/admin/partitions"}


def iso(t=None):
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


class State:
    """Everything shared between handler threads, guarded by one condition."""

    def __init__(self, opts):
        self.opts = opts
        self.cond = threading.Condition()
        self.rng = random.Random(opts.seed)
        self.seq = opts.start_seq
        self.threats = collections.deque(maxlen=20000)  # (seq, alert) oldest first
        self.paused = False
        self.down_until = 0.0
        self.drop_gen = 0  # bumped to close every open stream
        self.stream_status = 0
        self.slow_ms = 0
        self.streams = 0
        self.requests = 0
        self.rr = 0
        self.stopping = False
        self.log = open(opts.log, "a", buffering=1) if opts.log else None
        self.log_lock = threading.Lock()

    def make_threat(self, brand=None, sev=None, typ=None):
        """Appends one alert; call with cond held."""
        if brand is None:
            brand = self.opts.brands[self.rr % len(self.opts.brands)]
            self.rr += 1
        t, s = self.rng.choice(TYPES)
        typ = typ or t
        sev = sev or s
        country, city = self.rng.choice(PLACES)
        self.seq += 1
        pid = "%032x" % self.rng.getrandbits(128)
        now = iso()
        alert = {
            "alertId": "%032x" % (0xA1E70000000000000000000000000000 + self.seq),
            "brandId": brand,
            "type": typ,
            "severity": sev,
            "productId": pid,
            "details": "Fake %s #%d on product %s in %s" % (typ, self.seq, pid[:8], city),
            "timestamp": now,
            "resolved": False,
            "source": "detector",
            "country": country,
            "city": city,
            "aiAnalysis": None,
            "anomalyFlags": [typ],
            "count": 1,
            "lastSeen": now,
        }
        self.threats.append((self.seq, alert))
        self.cond.notify_all()
        return alert

    def after(self, cursor, brand):
        """Alerts of brand with sequence > cursor, oldest first; cond held."""
        out = []
        for s, a in reversed(self.threats):
            if s <= cursor:
                break
            if a["brandId"] == brand:
                out.append((s, a))
        out.reverse()
        return out

    def down(self):
        return time.time() < self.down_until

    def write_log(self, method, path, query, headers):
        if not self.log:
            return
        line = "%d %s %s q=%s lei=%s auth=%s\n" % (
            int(time.time() * 1000),
            method,
            path,
            query or "-",
            (headers.get("Last-Event-ID") or "-").replace(" ", "%20"),
            (headers.get("Authorization") or "-").replace(" ", "%20"),
        )
        with self.log_lock:
            self.log.write(line)


def generator(st):
    """Makes --rate threats per second (evenly, or per second with --burst)."""
    rate = st.opts.rate
    if rate <= 0:
        return
    t0 = time.time()
    made = 0
    while not st.stopping:
        now = time.time()
        if st.opts.burst:
            due = int((int(now - t0) + 1) * rate)
        else:
            due = int((now - t0) * rate)
        with st.cond:
            if st.paused:
                made = due  # no catch-up after a pause
            while made < due:
                st.make_threat()
                made += 1
        if st.opts.burst:
            time.sleep(max(0.001, 1.0 - ((time.time() - t0) % 1.0)))
        else:
            time.sleep(min(0.01, max(0.001, 1.0 / rate)))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake_sse/1"
    st = None  # set in main

    def log_message(self, fmt, *args):  # quiet
        pass

    # -- helpers -------------------------------------------------------------
    def send_json(self, code, obj, extra=None):
        body = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    def abort(self):
        """Closes the connection without any response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(n, 1 << 20)) if n > 0 else b""

    # -- dispatch ------------------------------------------------------------
    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def do_PATCH(self):
        self.route()

    def do_DELETE(self):
        self.route()

    def route(self):
        st = self.st
        u = urllib.parse.urlsplit(self.path)
        path, query = u.path, u.query
        q = {k: v[0] for k, v in urllib.parse.parse_qs(query).items()}
        if path.startswith("/_ctl/"):
            self.read_body()
            return self.control(path[6:], q)
        with st.cond:
            st.requests += 1
        st.write_log(self.command, path, query, self.headers)
        if st.down():
            return self.abort()
        self.read_body()
        if st.opts.key and self.headers.get("Authorization") != "Bearer " + st.opts.key:
            return self.send_json(401, {"error": "Unauthorized"})
        if st.opts.no_admin and path in ADMIN_PATHS:
            return self.send_json(403, {"error": "Forbidden"})
        if path == "/api/stream" and self.command == "GET":
            return self.stream(q)
        if st.slow_ms:
            time.sleep(st.slow_ms / 1000.0)
        return self.api(path, q)

    def control(self, cmd, q):
        st = self.st
        with st.cond:
            if cmd == "pause":
                st.paused = True
            elif cmd == "resume":
                st.paused = False
            elif cmd == "emit":
                for _ in range(max(1, int(q.get("n", "1")))):
                    st.make_threat(q.get("brand"), q.get("sev"), q.get("type"))
            elif cmd == "down":
                st.down_until = time.time() + float(q.get("sec", "5"))
                st.drop_gen += 1
                st.cond.notify_all()
            elif cmd == "drop":
                st.drop_gen += 1
                st.cond.notify_all()
            elif cmd == "stream-status":
                st.stream_status = int(q.get("code", "0"))
            elif cmd == "slow":
                st.slow_ms = int(q.get("ms", "0"))
            elif cmd != "status":
                return self.send_json(404, {"error": "unknown control"})
            status = {
                "seq": st.seq,
                "streams": st.streams,
                "requests": st.requests,
                "paused": st.paused,
                "down": st.down(),
            }
        return self.send_json(200, status)

    # -- SSE -----------------------------------------------------------------
    def stream(self, q):
        st = self.st
        brand = q.get("brandId")
        if not brand:
            body = b"brandId required"
            self.send_response(400)
            self.send_header("Content-Type", "text/plain;charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if st.stream_status:
            return self.send_json(st.stream_status, {"error": "Forbidden"})
        lei = self.headers.get("Last-Event-ID") or q.get("lastEventId")
        with st.cond:
            cursor = st.seq
            if lei and lei.isdigit() and int(lei) <= st.seq:
                cursor = int(lei)
            gen = st.drop_gen
            st.streams += 1
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache, no-transform")
        self.send_header("X-Accel-Buffering", "no")
        self.send_header("Connection", "close")
        self.end_headers()
        hb = st.opts.heartbeat_ms / 1000.0
        sent = 0
        try:
            if st.opts.retry_ms:
                self.wfile.write(b"retry: %d\n\n" % st.opts.retry_ms)
            self.event("connected", {"brandId": brand, "timestamp": iso()})
            next_hb = time.time() + hb
            while True:
                with st.cond:
                    pending = []
                    while True:
                        if st.stopping or st.drop_gen != gen:
                            return
                        pending = st.after(cursor, brand)
                        if pending or time.time() >= next_hb:
                            break
                        st.cond.wait(max(0.001, next_hb - time.time()))
                    if pending:
                        cursor = pending[-1][0]
                for s, a in pending:
                    self.event("threat", a, str(s))
                    sent += 1
                    if st.opts.drop_after and sent >= st.opts.drop_after:
                        return
                if time.time() >= next_hb:
                    self.event("heartbeat", {"ts": iso()})
                    next_hb = time.time() + hb
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            with st.cond:
                st.streams -= 1
            self.abort()

    def event(self, name, data, eid=None):
        frame = "event: %s\n" % name
        if eid is not None:
            frame += "id: %s\n" % eid
        frame += "data: %s\n\n" % json.dumps(data, separators=(",", ":"))
        self.wfile.write(frame.encode())
        self.wfile.flush()

    # -- REST ----------------------------------------------------------------
    def api(self, path, q):
        st = self.st
        brands = st.opts.brands
        m = self.command
        if m == "POST" and path == "/api/products/recall":
            return self.send_json(200, {"success": True, "status": "recalled"})
        if m == "POST" and path == "/api/threats/resolve":
            return self.send_json(200, {"resolved": True})
        if m != "GET":
            return self.send_json(404, {"error": "Not found"})
        if path == "/api/threats":
            b = q.get("brandId")
            if not b:
                return self.send_json(400, {"error": "brandId is required"})
            limit = max(1, min(500, int(q.get("limit", "50")) if q.get("limit", "").isdigit() else 50))
            rows = []
            with st.cond:
                for _, a in reversed(st.threats):
                    if a["brandId"] == b:
                        rows.append(a)
                        if len(rows) >= limit:
                            break
            return self.send_json(200, {"threats": rows, "count": len(rows)})
        if path == "/api/brands":
            b = q.get("id")
            if not b:
                return self.send_json(400, {"error": "Brand ID is required"})
            if b not in brands:
                return self.send_json(404, {"error": "Brand not found"})
            with st.cond:
                n = sum(1 for _, a in st.threats if a["brandId"] == b)
            return self.send_json(200, dict(self.brand(b), productCount=12, scanCount=340, threatCount=n))
        if path == "/api/brands/list":
            rows = [self.brand(b) for b in brands]
            return self.send_json(200, {"brands": rows, "count": len(rows)})
        if path == "/api/health":
            return self.send_json(200, {
                "status": "operational", "timestamp": iso(),
                "services": {"api": "healthy", "database": "healthy", "dbLatency": "1ms"},
                "version": "1.0.0", "endpoints": 25, "pages": 14})
        if path == "/api/brands/stats":
            return self.send_json(200, {
                "productCount": 12, "activeProducts": 10, "recalledProducts": 1,
                "transferredProducts": 1, "totalScans": 340, "threatCount": st.seq,
                "unresolvedThreats": st.seq,
                "statsCounter": {"productCount": 12, "scanCount": 340, "threatCount": st.seq}})
        if path == "/api/brands/scans":
            locs = [{"country": c, "city": ci, "count": 10 - i, "lastScan": iso()}
                    for i, (c, ci) in enumerate(PLACES[:6])]
            return self.send_json(200, {"locations": locs, "threatHotspots": locs[:2], "totalScans": 45})
        if path == "/api/analytics":
            day = 86400
            return self.send_json(200, {
                "totalScans": 340, "totalProducts": 12,
                "dailyScans": [{"date": iso(time.time() - (6 - i) * day)[:10], "count": 40 + i}
                               for i in range(7)],
                "topCountries": [{"country": c, "count": 50 - 5 * i} for i, (c, _) in enumerate(PLACES)],
                "resultBreakdown": {"authentic": 320, "suspicious": 20},
                "hourlyDistribution": [i % 7 for i in range(24)],
                "categoryBreakdown": [{"category": "eyewear", "count": 8}, {"category": "bags", "count": 4}],
                "statusBreakdown": {"active": 10, "recalled": 1, "transferred": 1}})
        if path == "/api/audit":
            return self.send_json(200, {"entries": [
                {"type": "scan", "action": "verification_scan", "actor": None, "productId": "p1",
                 "location": "Memphis, US", "timestamp": iso(), "hash": None, "result": "authentic"}],
                "count": 1})
        if path == "/api/ops-log":
            return self.send_json(200, {"entries": [
                {"agent": "detector", "trigger": "scan", "productId": "p1", "brandId": brands[0],
                 "anomalyFlags": ["burst_scan"], "geminiModel": "fake", "aiSeverity": "medium",
                 "aiAttackVector": "cloning", "aiConfidence": 80, "latencyMs": 12, "timestamp": iso()}],
                "stats": {"totalOperations": 1, "agentBreakdown": {"detector": 1},
                          "severityBreakdown": {"medium": 1}, "attackVectorBreakdown": {"cloning": 1},
                          "avgLatencyMs": 12, "avgConfidence": 80, "geminiModel": "fake"}})
        if path == "/api/admin/partitions":
            return self.send_json(200, {"partitions": [], "minutes": 30})
        if path == "/api/products/verify":
            pid = q.get("productId", "")
            return self.send_json(200, {
                "verified": True, "status": "authentic",
                "product": {"productId": pid, "name": "Fake Product", "brandId": brands[0],
                            "status": "active", "scanCount": 3}})
        if path == "/api/scans":
            return self.send_json(200, {"scans": [
                {"timestamp": iso(), "country": "US", "city": "Memphis", "result": "authentic"}],
                "locations": [], "totalScans": 1})
        if path == "/api/products/events":
            return self.send_json(200, {"events": [], "count": 0})
        if path == "/api/products/list":
            return self.send_json(200, {"products": [], "count": 0})
        return self.send_json(404, {"error": "Not found"})

    @staticmethod
    def brand(b):
        return {"id": b, "name": "Brand " + b, "domain": b + ".example", "industry": "fashion",
                "plan": "free", "createdAt": "2026-01-01T00:00:00.000Z"}


def main():
    ap = argparse.ArgumentParser(description="scripted fake GenuProof API (see the file header)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--brands", default="brand-a")
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--burst", action="store_true")
    ap.add_argument("--initial", type=int, default=0)
    ap.add_argument("--heartbeat-ms", type=int, default=3000)
    ap.add_argument("--retry-ms", type=int, default=0)
    ap.add_argument("--drop-after", type=int, default=0)
    ap.add_argument("--start-seq", type=int, default=0)
    ap.add_argument("--key", default="")
    ap.add_argument("--no-admin", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default="")
    opts = ap.parse_args()
    opts.brands = [b for b in opts.brands.split(",") if b] or ["brand-a"]
    opts.heartbeat_ms = max(10, opts.heartbeat_ms)

    st = State(opts)
    with st.cond:
        for _ in range(opts.initial):
            st.make_threat()
    Handler.st = st
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    # socketserver listens with a backlog of 5: a dashboard's burst of
    # polls on a loaded machine then loses SYNs, whose 1 s retransmission
    # outlasts the client's scaled connect timeout (0.5 s at 0.05).
    ThreadingHTTPServer.request_queue_size = 128
    srv = ThreadingHTTPServer(("127.0.0.1", opts.port), Handler)

    def stop(*_):
        st.stopping = True
        threading.Thread(target=srv.shutdown, daemon=True).start()

    def emit(*_):
        with st.cond:
            st.make_threat(sev="critical")

    def toggle(*_):
        with st.cond:
            st.paused = not st.paused

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGUSR1, emit)
    signal.signal(signal.SIGUSR2, toggle)
    threading.Thread(target=generator, args=(st,), daemon=True).start()
    print("PORT %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever(poll_interval=0.05)
    finally:
        st.stopping = True
        with st.cond:
            st.cond.notify_all()
        srv.server_close()


if __name__ == "__main__":
    main()
