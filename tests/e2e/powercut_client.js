// powercut_client.js - the client of tests/e2e/powercut.sh.
//
//   node powercut_client.js load  URL KEY BRAND ACKLOG [WORKERS]
//   node powercut_client.js check URL KEY BRAND ACKLOG
//
// load: WORKERS loops (default 8) over keep-alive connections, each
// registering a product, verifying it from US, FR and JP (three scans, the
// third trips the geographic check) and appending a provenance event, until
// the server goes away (or 60 s).  Every answer with a 2xx is appended to
// ACKLOG at once, before the next request: "P productId code", "S productId
// country", "E productId hash".  Exits 0 once a connection error ended every
// loop (the server was killed), 1 otherwise.
//
// check: reads ACKLOG and asks the (restarted) server whether every
// acknowledged write is there; prints one "PASS: ..." or "FAIL: ..." line
// per check, and "LOST n" with the number of acknowledged writes missing.
'use strict';
const http = require('http');
const fs = require('fs');

const [mode, base, key, brand, ackPath, workersArg] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const COUNTRIES = ['US', 'FR', 'JP'];

function request(method, path, body, headers) {
    return new Promise((resolve, reject) => {
        const data = body === undefined ? undefined : JSON.stringify(body);
        const h = Object.assign({ Authorization: 'Bearer ' + key }, headers || {});
        if (data !== undefined) {
            h['Content-Type'] = 'application/json';
            h['Content-Length'] = Buffer.byteLength(data);
        }
        const req = http.request(base + path, { method, headers: h, agent, timeout: 20000 }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => {
                const text = Buffer.concat(chunks).toString('utf8');
                let json = null;
                try {
                    json = JSON.parse(text);
                } catch (e) {
                    json = null;
                }
                resolve({ status: res.statusCode, json, text });
            });
            res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        if (data !== undefined) req.write(data);
        req.end();
    });
}

async function load() {
    const workers = Number(workersArg || 8);
    const fd = fs.openSync(ackPath, 'a');
    const ack = (line) => fs.writeSync(fd, line + '\n');
    const deadline = Date.now() + 60000;
    let ended = 0;
    async function loop(w) {
        for (let i = 0; Date.now() < deadline; i++) {
            try {
                const name = `powercut ${w}-${i}-${process.pid}`;
                const r = await request('POST', '/api/products/register', { brandId: brand, name, sku: `PC-${w}-${i}` });
                if (r.status !== 200 || !r.json || !r.json.productId) continue;
                const pid = r.json.productId;
                ack(`P ${pid} ${r.json.verificationCode}`);
                for (const c of COUNTRIES) {
                    const v = await request('GET', `/api/products/verify?code=${encodeURIComponent(r.json.verificationCode)}`,
                        undefined, { 'X-Country': c });
                    if (v.status === 200) ack(`S ${pid} ${c}`);
                }
                const e = await request('POST', '/api/products/events',
                    { productId: pid, type: 'shipped', actor: 'Power Cut Logistics', location: 'Rotterdam, NL' });
                if (e.status === 200 && e.json && e.json.hash) ack(`E ${pid} ${e.json.hash}`);
            } catch (err) {
                ended++; // connection refused or reset: the server is gone
                return;
            }
        }
    }
    await Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
    fs.closeSync(fd);
    agent.destroy();
    process.exit(ended === workers ? 0 : 1);
}

async function check() {
    const products = new Map();
    for (const line of fs.readFileSync(ackPath, 'utf8').split('\n')) {
        const [kind, pid, value] = line.split(' ');
        if (kind === 'P') products.set(pid, { code: value, scans: [], events: [] });
        else if (kind === 'S') products.get(pid).scans.push(value);
        else if (kind === 'E') products.get(pid).events.push(value);
    }
    let lost = 0, missingProducts = 0, missingScans = 0, missingEvents = 0, badCounters = 0, badChains = 0;
    let ackedScans = 0, geo = [];
    // at normal durability (POWERCUT_CONTROL=1) answered writes may be
    // lost: those results are reported, not checked; consistency still is
    const control = process.env.POWERCUT_CONTROL === '1';
    const say = (ok, name, detail) => console.log((ok ? 'PASS: ' : 'FAIL: ') + name + (ok || !detail ? '' : ' (' + detail + ')'));
    const lossSay = (ok, name, detail) => control ? console.log('  ' + name + (ok || !detail ? '' : ' (' + detail + ')'))
        : say(ok, name, detail);
    for (const [pid, p] of products) {
        ackedScans += p.scans.length;
        if (COUNTRIES.every((c) => p.scans.includes(c))) geo.push(pid);
        const v = await request('GET', `/api/products/verify?code=${encodeURIComponent(p.code)}&metadata=true`);
        if (v.status !== 200 || !v.json || v.json.authentic !== true) {
            missingProducts++;
            lost += 1 + p.scans.length + p.events.length;
            if (missingProducts <= 3) console.log(`  product ${pid}: ${v.status} ${v.text.slice(0, 200)}`);
            continue;
        }
        const s = await request('GET', `/api/scans?productId=${pid}&limit=100`);
        const stored = s.json ? s.json.totalScans : -1;
        if (stored < p.scans.length) {
            missingScans += p.scans.length - Math.max(stored, 0);
            lost += p.scans.length - Math.max(stored, 0);
            console.log(`  product ${pid}: ${p.scans.length} scans answered, ${stored} stored`);
        }
        // the counter and the rows are written in one transaction: after
        // the cut they must still agree
        if (v.json.scanCount !== stored) {
            badCounters++;
            console.log(`  product ${pid}: scanCount ${v.json.scanCount}, ${stored} scans stored`);
        }
        const e = await request('GET', `/api/products/events?productId=${pid}`);
        const hashes = new Set(((e.json && e.json.events) || []).map((x) => x.hash));
        for (const h of p.events) {
            if (!hashes.has(h)) {
                missingEvents++;
                lost++;
                console.log(`  product ${pid}: event ${h} answered, not stored`);
            }
        }
        if (!e.json || e.json.chainValid !== true) badChains++;
    }
    const nEvents = [...products.values()].reduce((n, p) => n + p.events.length, 0);
    lossSay(missingProducts === 0, `every answered registration is stored (${products.size})`, `${missingProducts} missing`);
    lossSay(missingScans === 0, `every answered scan is stored (${ackedScans})`, `${missingScans} missing`);
    lossSay(missingEvents === 0, `every answered event is stored (${nEvents})`, `${missingEvents} missing`);
    say(badCounters === 0, 'each product\'s scanCount equals its stored scans', `${badCounters} differ`);
    say(badChains === 0, 'every chain verifies', `${badChains} broken`);
    const st = await request('GET', `/api/brands/stats?brandId=${brand}`);
    const stats = (st.json && (st.json.stats || st.json)) || {};
    const counters = stats.statsCounter || {};
    lossSay(st.status === 200 && counters.scanCount >= ackedScans && counters.productCount >= products.size,
        'brand counters cover every answered write', `stats ${st.text.slice(0, 200)}`);
    if (control) {
        console.log(`LOST ${lost}`);
        agent.destroy();
        return;
    }
    // the detector: every product scanned from three countries has its
    // geographic alert once the detector has caught up (ASan run: give it time)
    let lag = -1;
    for (let i = 0; i < 600; i++) {
        const m = await request('GET', '/metrics');
        const line = m.text.split('\n').find((l) => l.startsWith('genuproof_detector_lag '));
        lag = line ? Number(line.split(' ')[1]) : -1;
        if (lag === 0) break;
        await new Promise((r) => setTimeout(r, 50));
    }
    say(lag === 0, 'the detector caught up after the restart', `lag ${lag}`);
    const t = await request('GET', `/api/threats?brandId=${brand}&limit=1000`);
    const alerted = new Set(((t.json && t.json.threats) || []).filter((a) => a.type === 'geographic_anomaly').map((a) => a.productId));
    const noAlert = geo.filter((pid) => !alerted.has(pid));
    say(geo.length > 0 && noAlert.length === 0, `every product scanned from 3 countries has its geographic alert (${geo.length})`,
        `${noAlert.length} without`);
    console.log(`LOST ${lost}`);
    agent.destroy();
}

(mode === 'load' ? load() : check()).catch((e) => {
    console.log('FAIL: client error ' + (e && e.stack ? e.stack : e));
    process.exit(1);
});
