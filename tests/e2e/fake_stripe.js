// tests/e2e/fake_stripe.js - a local stand-in for Stripe's
// POST /v1/checkout/sessions, for tests/e2e/stripe.sh.
//
//   node fake_stripe.js PORTFILE LOGFILE
//
// Listens on 127.0.0.1 (ephemeral port, written to PORTFILE), appends one
// JSON line per request to LOGFILE ({method, path, headers, form}) with
// the form body decoded, and answers like Stripe: 401 for a bearer other
// than sk_test_fake, 500 when customer_email starts with "fail", a
// delay of 3 s when it starts with "slow", otherwise 200 with a session
// {id, object, url}.
'use strict';
const http = require('http');
const fs = require('fs');
const [portFile, logFile] = process.argv.slice(2);
let n = 0;

const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; if (body.length > 65536) req.destroy(); });
    req.on('end', () => {
        const form = {};
        for (const [k, v] of new URLSearchParams(body)) form[k] = v;
        fs.appendFileSync(logFile, JSON.stringify({
            method: req.method, path: req.url, headers: req.headers, form, raw: body,
        }) + '\n');
        const send = (status, obj) => {
            res.writeHead(status, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify(obj));
        };
        if (req.headers.authorization !== 'Bearer sk_test_fake')
            return send(401, { error: { message: 'Invalid API Key provided' } });
        const email = form.customer_email || '';
        if (email.startsWith('fail'))
            return send(500, { error: { message: 'boom' } });
        n++;
        const session = { id: 'cs_test_' + n, object: 'checkout.session',
                          url: 'https://checkout.stripe.test/c/pay/cs_test_' + n };
        if (email.startsWith('slow')) return setTimeout(() => send(200, session), 3000);
        send(200, session);
    });
});
srv.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(srv.address().port)));
process.on('SIGTERM', () => process.exit(0));
